"""lit configuration: IR tests run through onnxc-opt / onnxc and checked with filecheck."""

import os
import sys

import lit.formats

config.name = "onnxc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")
config.environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
config.substitutions.append(("%python", sys.executable))
