"""Unique: the distinct elements (or slices along `axis`) of a tensor, sorted or
in order of first occurrence, with their first indices, the inverse map and
the counts.

Items (elements of the flattened input, or slices along `axis`) are compared
by counting, as TopK does, without sorting: O(n^2) comparisons of items, no
data-dependent control flow besides the stores, and every nest's iterations
independent.
1. first[i]: the lowest j whose item equals item i; count[i]: how many do.
2. Each first occurrence i gets its rank among the first occurrences: those
   before it in order (sorted: smaller items, compared lexicographically for
   slices; unsorted: lower positions), and is stored there in Y, indices and
   counts.
3. inverse[i] = rank[first[i]]; the number of first occurrences sizes Y,
   indices and counts (library-allocated outputs, `dynamic_result`).
Floats order NaN after every number and equal to NaN (numpy.unique).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, i1, i64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_outputs
from onnxc.dialects.types import is_float
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped, element_count
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    copy_reshaped,
    has_symbolic_shape,
    lowers,
    normalized_axis,
    shape_of,
)

# Lexicographic comparison of two items, as an index: undecided so far (equal), less, greater.
EQUAL, LESS, GREATER = 0, 1, 2


def _less(b: KernelBuilder, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """lhs < rhs as i1, NaN after every number (so not less than anything)."""
    if lhs.type == i1:  # false < true (a signed i1 compare has true = -1)
        return b.compare_index("ult", lhs, rhs)
    if not is_float(lhs.type):
        return b.compare("lt", lhs, rhs)
    false, true = b.constant(0, i1), b.constant(1, i1)
    not_less = b.select(b.compare("ge", lhs, rhs), true, b.is_nan(lhs))  # ge is false if either is NaN
    return b.select(not_less, false, true)


class _Items:
    """The items of x that Unique compares: slices along `axis` (elements, for a flattened x)."""

    def __init__(self, x: SSAValue, axis: int):
        self.x, self.axis = x, axis
        shape = shape_of(x)
        self.count = shape[axis]
        self.slice_shape = shape[:axis] + shape[axis + 1 :]

    def index(self, item: Bound, slice_ivs: list[Bound]) -> list[Bound]:
        return [*slice_ivs[: self.axis], item, *slice_ivs[self.axis :]]

    def compare(self, b: KernelBuilder, lhs: Bound, rhs: Bound) -> SSAValue:
        """EQUAL, LESS or GREATER (an index): item lhs against item rhs, lexicographically."""

        def step(inner: KernelBuilder, ivs: list[Bound], state: SSAValue) -> SSAValue:
            left = inner.load(self.x, self.index(lhs, ivs))
            right = inner.load(self.x, self.index(rhs, ivs))
            here = inner.select_index(
                _less(inner, left, right), LESS, inner.select_index(_less(inner, right, left), GREATER, EQUAL)
            )
            return inner.select(inner.compare_index("eq", state, EQUAL), here, state)

        return b.reduce([(0, d) for d in self.slice_shape], b.index(EQUAL), step)

    def equal(self, b: KernelBuilder, lhs: Bound, rhs: Bound) -> SSAValue:
        return b.compare_index("eq", self.compare(b, lhs, rhs), EQUAL)


def _count_where(b: KernelBuilder, n: int, condition) -> SSAValue:
    """How many j in [0, n) satisfy condition(builder, j) (an i1)."""

    def step(inner: KernelBuilder, ivs: list[Bound], count: SSAValue) -> SSAValue:
        return inner.index(inner.add(count, inner.select_index(condition(inner, ivs[0]), 1, 0)))

    return b.reduce([(0, n)], b.index(0), step)


@lowers("Unique", dynamic=True, run_time_dims=True)
def lower_unique(g: GraphLowering, op: OnnxOp) -> None:
    x = g.input(op, 0)
    g.element_type(op, x, bools=True)
    if "axis" in op.attributes:
        items = _Items(x, normalized_axis(g, op, op.attr("axis"), len(shape_of(x))))
    elif len(shape_of(x)) == 1:
        items = _Items(x, 0)
    else:
        flat = alloc_shaped(g.top, x.type.get_element_type(), [element_count(g.top, shape_of(x))])
        copy_reshaped(g.top, x, flat)
        items = _Items(flat, 0)
    n = items.count
    sorted_order = bool(op.attr("sorted"))

    def scratch() -> SSAValue:
        return alloc_shaped(g.top, IndexType(), [n])

    first, count, rank = scratch(), scratch(), scratch()
    empty = isinstance(n, int) and n == 0  # a run-time 0 runs the nests below 0 times
    if empty:
        total = g.top.index(0)
    else:
        # 1. first occurrence and count of each item
        (i,), b = g.top.loop_nest([n])

        def lowest_equal(inner: KernelBuilder, ivs: list[Bound], lowest: SSAValue) -> SSAValue:
            earlier = inner.and_(inner.compare_index("slt", ivs[0], lowest), items.equal(inner, ivs[0], i))
            return inner.select(earlier, inner.index(ivs[0]), lowest)

        b.store(b.reduce([(0, n)], i, lowest_equal), first, [i])
        b.store(_count_where(b, n, lambda inner, j: items.equal(inner, j, i)), count, [i])

    outputs = _Outputs(g, op, items, n)
    if not empty:
        # 2. ranks of first occurrences; Y, indices and counts stored at them
        (i,), b = g.top.loop_nest([n])

        def is_first(inner: KernelBuilder, j: Bound) -> SSAValue:
            return inner.compare_index("eq", inner.load(first, [j]), j)

        def comes_before(inner: KernelBuilder, j: Bound) -> SSAValue:
            if sorted_order:
                before = inner.compare_index("eq", items.compare(inner, j, i), LESS)
            else:
                before = inner.compare_index("slt", j, i)
            return inner.and_(is_first(inner, j), before)

        position = _count_where(b, n, comes_before)
        b.store(position, rank, [i])
        kept = b.if_then(is_first(b, i))
        outputs.store(kept, i, position, kept.load(count, [i]))

        # 3. inverse indices and the number of distinct items
        (i,), b = g.top.loop_nest([n])
        outputs.store_inverse(b, i, b.load(rank, [b.load(first, [i])]))
        total = _count_where(g.top, n, is_first)
    outputs.finish(total)


class _Outputs:
    """Unique's four results (any may be absent or unused), each a buffer written
    by the lowering: a dynamic result (the items' count is known at run time) or,
    where shape inference knew it, a static or symbolic one (the inverse map)."""

    def __init__(self, g: GraphLowering, op: OnnxOp, items: _Items, n: Bound):
        self.g, self.n = g, n
        self.buffers: list[SSAValue | None] = [None] * 4
        self.dynamic: list[tuple[int, int]] = []  # (ONNX output position, result index)
        for position, value in enumerate(onnx_outputs(op)):
            if value is None:
                continue
            index = list(op.results).index(value)
            if has_symbolic_shape(value):
                self.buffers[position] = g.result(op, index)
                continue
            bound = shape_of(items.x) if position == 0 else [n]
            self.buffers[position] = g.dynamic_result(op, index, bound)
            self.dynamic.append((position, index))
        self.op, self.items = op, items

    def store(self, b: KernelBuilder, item: Bound, position: SSAValue, count: SSAValue) -> None:
        """Y[position] = item `item`, indices[position] = item, counts[position] = count."""
        y, indices, _, counts = self.buffers
        if y is not None:
            slice_ivs, copy = b.for_nest([(0, d) for d in self.items.slice_shape])
            value = copy.load(self.items.x, self.items.index(item, slice_ivs))
            copy.store(value, y, self.items.index(position, slice_ivs))
        for buffer, value in ((indices, item), (counts, count)):
            if buffer is not None:
                b.store(b.from_index(value, i64), buffer, [position])

    def store_inverse(self, b: KernelBuilder, item: Bound, position: SSAValue) -> None:
        inverse = self.buffers[2]
        if inverse is not None:
            b.store(b.from_index(position, i64), inverse, [item])

    def finish(self, total: SSAValue) -> None:
        """Size the dynamic results: `total` items, the inverse map n entries."""
        for position, index in self.dynamic:
            extent = self.g.top.index(self.n) if position == 2 else total
            self.g.finish_dynamic_result(self.op, index, extent)
