"""The `onnxc` command.

    onnxc MODEL.onnx [-o OUT.so] [-O0..-O3] [--emit KIND] [--target T] [--shape NAME=DIMS] [-v]
    onnxc run OUT.so [--input NAME=FILE.npy ...] [--output-dir DIR] [--repeat N]
    onnxc verify MODEL.onnx [--input NAME=FILE.npy ...] [--rtol R --atol A] [--shape NAME=DIMS]
    onnxc inspect MODEL.onnx [--json] [--shape NAME=DIMS]

Errors print as one line and exit with status 1 (`--debug` shows the traceback).
"""

from __future__ import annotations

import importlib
import sys

from onnxc.errors import OnnxcError

SUBCOMMANDS = {"run": "onnxc.commands.run", "verify": "onnxc.commands.verify", "inspect": "onnxc.commands.inspect"}
"""`onnxc NAME ...` -> the module whose main(argv) runs it; anything else compiles."""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return importlib.import_module(SUBCOMMANDS[argv[0]]).main(argv[1:])
        return importlib.import_module("onnxc.commands.compile").main(argv)
    except OnnxcError as exc:
        if debug:
            raise
        print(f"onnxc: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # an internal bug: still one line unless --debug
        if debug:
            raise
        print(
            f"onnxc: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
