"""Dims known at run time only, in krnl-level IR: where a buffer's dims come from.

A tensor whose type carries symbolic dims (`tensor<?x768xf32, ["N*S", ""]>`)
is held in a `memref<?x768xf32>`. The IR itself says what each `?` is: a
graph argument's dims are `memref.dim` ops at the function's entry (the
entry point fills the arguments' descriptors), an alloc's and a view's are
their size operands. `buffer_shape` reads them back, so a lowering sees a
shape of ints and index values (`Bound`s) and never a side table.

`IndexDimOps` lets `Dim.evaluate` emit the index arithmetic of a symbolic
expression with a `KernelBuilder` (constants folded, as everywhere).
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, SSAValue

from onnxc.dialects.krnl import ViewOp
from onnxc.dialects.symbolic import DimOps
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder, constant_value


def buffer_shape(buffer: SSAValue) -> tuple[Bound, ...]:
    """The dims of a buffer: ints where static, the index values holding the others."""
    shape = buffer.type.get_shape()
    if all(d >= 0 for d in shape):
        return tuple(shape)
    dynamic = iter(_dynamic_dims(buffer))
    return tuple(d if d >= 0 else next(dynamic) for d in shape)


def _dynamic_dims(buffer: SSAValue) -> list[SSAValue]:
    owner = buffer.owner
    if isinstance(owner, memref.AllocOp):
        return list(owner.dynamic_sizes)
    if isinstance(owner, ViewOp):
        return list(owner.sizes)
    if isinstance(buffer, BlockArgument):
        dims = _argument_dims(buffer)
        axes = [k for k, d in enumerate(buffer.type.get_shape()) if d < 0]
        if all(axis in dims for axis in axes):
            return [dims[axis] for axis in axes]
    raise ValueError(f"no run-time dims known for {buffer} defined by {owner}")


def _argument_dims(argument: BlockArgument) -> dict[int, SSAValue]:
    """axis -> the `memref.dim` of a function argument in the function's entry block."""
    dims = {}
    for use in argument.uses:
        op = use.operation
        if isinstance(op, memref.DimOp) and isinstance(op.parent, Block) and op.parent is argument.block:
            axis = constant_value(op.index)
            if axis is not None:
                dims.setdefault(axis, op.result)
    return dims


def read_argument_dims(builder: KernelBuilder, argument: BlockArgument) -> list[SSAValue]:
    """Emit a `memref.dim` for each dynamic dim of a function argument (buffer_shape finds them)."""
    return [
        builder.insert(memref.DimOp(argument, builder.index(axis))).result
        for axis, d in enumerate(argument.type.get_shape())
        if d < 0
    ]


def has_run_time_dims(memref_type: MemRefType) -> bool:
    return any(d < 0 for d in memref_type.get_shape())


class IndexDimOps(DimOps):
    """`Dim.evaluate` emitting index arithmetic (dims are never negative: floor
    division is the truncating one)."""

    def __init__(self, builder: KernelBuilder):
        self.b = builder

    def const(self, value: int) -> Bound:
        return value

    def add(self, a: Bound, b: Bound) -> Bound:
        return self.b.add(a, b)

    def mul(self, a: Bound, b: Bound) -> Bound:
        return self.b.mul(a, b)

    def floordiv(self, a: Bound, b: Bound) -> Bound:
        return self.b.div(a, b)

    def min(self, a: Bound, b: Bound) -> Bound:
        return self.b.min(a, b)

    def max(self, a: Bound, b: Bound) -> Bound:
        return self.b.max(a, b)

