"""onnxc: an ahead-of-time compiler from ONNX models to native shared libraries.

`onnxc.compile` needs the compiler's dependencies (xdsl, llvmlite, onnx);
`onnxc.Session` needs only numpy. Both are imported lazily so that a deployed
model can use the runtime without the compiler installed.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["compile", "Session"]


def __getattr__(name: str):
    if name == "compile":
        from onnxc.compiler import compile

        return compile
    if name == "Session":
        from onnxc.runtime.session import Session

        return Session
    raise AttributeError(f"module 'onnxc' has no attribute {name!r}")
