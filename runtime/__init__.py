"""The onnxc runtime: load a compiled model library and run it on numpy arrays.

Needs only numpy: importing it loads nothing of the compiler (xdsl, llvmlite, onnx).
"""

from onnxc.runtime.session import NodeArg, Session

__all__ = ["NodeArg", "Session"]
