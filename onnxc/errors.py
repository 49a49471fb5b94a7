"""Typed errors shared by the compiler and the runtime.

This module imports nothing, so a deployed runtime can use it without the
compiler's dependencies. Every compile-time error names the model, and where
one is known the node and op type, so a user knows where to look.
"""

from __future__ import annotations


class OnnxcError(Exception):
    """Base class of every error onnxc raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        node: str | None = None,
        op_type: str | None = None,
    ):
        self.message = message
        self.model = model
        self.node = node
        self.op_type = op_type
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.model:
            where.append(f"model '{self.model}'")
        if self.node is not None or self.op_type:
            node = self.node or "<unnamed>"
            where.append(f"node '{node}'" + (f" ({self.op_type})" if self.op_type else ""))
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message

    def with_model(self, model: str) -> "OnnxcError":
        """Fill in the model name once it is known higher up the call stack."""
        if self.model is None:
            self.model = model
            self.args = (self._format(),)
        return self


class InvalidModelError(OnnxcError):
    """The model file is unreadable or the graph is not well-formed."""


class UnsupportedOpError(OnnxcError):
    """An op, opset, attribute or dtype that onnxc cannot compile (yet)."""


class ShapeError(OnnxcError):
    """Shapes that do not fit together, or dynamic dims that must be pinned."""


class CompileError(OnnxcError):
    """A failure in code generation or linking."""


class InputError(OnnxcError):
    """Wrong inputs handed to a compiled model at run time."""


class RuntimeFailure(OnnxcError):
    """The native code reported an error (e.g. out of memory)."""
