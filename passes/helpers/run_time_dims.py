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

import math as pymath
from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Attribute, Block, BlockArgument, SSAValue

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
    """`Dim.evaluate` emitting index arithmetic. A numerator may be negative
    (S - 3 for a small S) and a divisor a run-time 0, so floor division is
    emitted as such, with `x // 0 = 0` (see dialects/symbolic.py)."""

    def __init__(self, builder: KernelBuilder):
        self.b = builder

    def const(self, value: int) -> Bound:
        return value

    def add(self, a: Bound, b: Bound) -> Bound:
        return self.b.add(a, b)

    def mul(self, a: Bound, b: Bound) -> Bound:
        return self.b.mul(a, b)

    def floordiv(self, a: Bound, b: Bound) -> Bound:
        b_value = b if isinstance(b, int) else constant_value(b)
        a_value = a if isinstance(a, int) else constant_value(a)
        if b_value is not None and b_value > 0 and a_value is not None and a_value >= 0:
            return self.b.div(a, b)
        if b_value == 0:
            return 0
        by_zero = self.b.compare_index("eq", b, 0) if b_value is None else None
        divisor = b if by_zero is None else self.b.select_index(by_zero, 1, b)
        quotient = self.b.div(a, divisor)
        inexact = self.b.compare_index("ne", self.b.rem(a, divisor), 0)
        signs_differ = self.b.compare_index("ne", self.lt(a, 0), self.lt(divisor, 0))
        floor = self.b.select_index(self.b.and_(inexact, signs_differ), self.b.sub(quotient, 1), quotient)
        return floor if by_zero is None else self.b.select_index(by_zero, 0, floor)

    def eq(self, a: Bound, b: Bound) -> Bound:
        if isinstance(a, int) and isinstance(b, int):
            return int(a == b)
        return self.b.select_index(self.b.compare_index("eq", a, b), 1, 0)

    def lt(self, a: Bound, b: Bound) -> Bound:
        if isinstance(a, int) and isinstance(b, int):
            return int(a < b)
        return self.b.select_index(self.b.compare_index("slt", a, b), 1, 0)

    def min(self, a: Bound, b: Bound) -> Bound:
        return self.b.min(a, b)

    def max(self, a: Bound, b: Bound) -> Bound:
        return self.b.max(a, b)


def element_count(builder: KernelBuilder, shape: Sequence[Bound]) -> Bound:
    count: Bound = 1
    for dim in shape:
        count = builder.mul(count, dim)
    return count


def _memref_of(element: Attribute, shape: Sequence[Bound]) -> MemRefType:
    """The memref type of a shape of Bounds: `?` where a dim is an index value."""
    return MemRefType(element, [d if isinstance(d, int) else DYNAMIC_INDEX for d in shape])


def _run_time_sizes(builder: KernelBuilder, shape: Sequence[Bound]) -> list[SSAValue]:
    return [builder.index(d) for d in shape if not isinstance(d, int)]


def alloc_shaped(builder: KernelBuilder, element: Attribute, shape: Sequence[Bound]) -> SSAValue:
    """A new buffer of `shape`, its dims known at run time only given as index operands."""
    return builder.alloc(_memref_of(element, shape), _run_time_sizes(builder, shape))


def reshaped_view(builder: KernelBuilder, buffer: SSAValue, shape: Sequence[Bound]) -> SSAValue:
    """A view of a buffer's elements in another shape of the same element count."""
    element = buffer.type.get_element_type()
    return builder.insert(ViewOp(buffer, 0, _memref_of(element, shape), _run_time_sizes(builder, shape))).result


def flat_view(builder: KernelBuilder, buffer: SSAValue) -> SSAValue:
    """A buffer as the 1-D buffer of its elements (a krnl.view)."""
    return reshaped_view(builder, buffer, [element_count(builder, buffer_shape(buffer))])


def linearize(builder: KernelBuilder, ivs: Sequence[Bound], sizes: Sequence[int]) -> Bound:
    """Row-major offset of ivs within dims of `sizes`."""
    offset: Bound = 0
    for iv, size in zip(ivs, sizes):
        offset = builder.add(builder.mul(offset, size), iv)
    return offset


def delinearize(builder: KernelBuilder, offset: Bound, sizes: Sequence[Bound]) -> list[Bound]:
    """Indices of a row-major offset (less than prod(sizes)) within dims of `sizes`."""
    indices = []
    for k, size in enumerate(sizes):
        index = builder.div(offset, element_count(builder, sizes[k + 1 :]))
        indices.append(index if k == 0 else builder.rem(index, size))
    return indices


def reshape_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Split two shapes of the same element count into consecutive groups of dims
    with equal element counts, as small as possible: [2,3,4] -> [6,4] gives
    ([0,1],[0]), ([2],[1]). Within a group a reshape is a (de)linearization."""
    src_counts = [pymath.prod(src[:k]) for k in range(len(src) + 1)]
    dst_counts = [pymath.prod(dst[:k]) for k in range(len(dst) + 1)]
    groups: list[tuple[list[int], list[int]]] = []
    src_dims: list[int] = []
    dst_dims: list[int] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        if j == len(dst) or (i < len(src) and src_counts[i] <= dst_counts[j]):
            src_dims.append(i)
            i += 1
        else:
            dst_dims.append(j)
            j += 1
        if src_counts[i] == dst_counts[j]:
            groups.append((src_dims, dst_dims))
            src_dims, dst_dims = [], []
    return groups
