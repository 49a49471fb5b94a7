"""Det: the determinant of each [..., M, M] matrix by Gaussian elimination with
partial pivoting (as LAPACK's getrf, which numpy calls), in f64 on a scratch
copy: the product of the pivots, negated once per row swap. Matrices whose sizes
are known at run time only are read over the smaller of the two (never past
either end, were they to differ)."""

from __future__ import annotations

import math as pymath

from xdsl.dialects.builtin import f64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped
from onnxc.passes.onnx_to_krnl.common import GraphLowering, dims_agree, lowers, shape_of, shape_text


def _pivot_row(b: KernelBuilder, matrix: SSAValue, batch: list[Bound], column: Bound, size: Bound) -> SSAValue:
    """The row at or below `column` whose entry in it is largest in magnitude (the first of equals)."""

    def better(inner: KernelBuilder, ivs: list[Bound], best: SSAValue) -> SSAValue:
        (row,) = ivs
        candidate = inner.abs(inner.load(matrix, [*batch, row, column]))
        incumbent = inner.abs(inner.load(matrix, [*batch, best, column]))
        return inner.select(inner.compare("gt", candidate, incumbent), inner.index(row), best)

    return b.reduce([(b.add(column, 1), size)], b.index(column), better)


def _eliminate_column(b: KernelBuilder, matrix: SSAValue, batch: list[Bound], k: Bound, size: Bound) -> SSAValue:
    """Swap the pivot row into row k, subtract multiples of it from the rows
    below, and return the pivot, negated if rows were swapped."""
    pivot_row = _pivot_row(b, matrix, batch, k, size)
    (column,), swap = b.for_nest([(k, size)])
    upper = swap.load(matrix, [*batch, k, column])
    swap.store(swap.load(matrix, [*batch, pivot_row, column]), matrix, [*batch, k, column])
    swap.store(upper, matrix, [*batch, pivot_row, column])

    pivot = b.load(matrix, [*batch, k, k])
    zero = b.constant(0.0, f64)
    singular = b.compare("eq", pivot, zero)
    next_row = b.add(k, 1)
    (row, column), update = b.for_nest([(next_row, size), (next_row, size)])
    # A zero pivot means a zero determinant: nothing to eliminate (no 0/0).
    factor = update.select(singular, zero, update.div(update.load(matrix, [*batch, row, k]), pivot))
    reduced = update.sub(
        update.load(matrix, [*batch, row, column]), update.mul(factor, update.load(matrix, [*batch, k, column]))
    )
    update.store(reduced, matrix, [*batch, row, column])
    swapped = b.compare_index("ne", pivot_row, b.index(k))
    return b.select(swapped, b.neg(pivot), pivot)


@lowers("Det", run_time_dims=True)
def lower_det(g: GraphLowering, op: OnnxOp) -> None:
    x, out = g.input(op, 0), g.result(op)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    *batch_shape, rows, columns = shape_of(x)
    if not dims_agree([rows], [columns]) or not dims_agree(batch_shape, shape_of(out)):
        raise g.shape_error(
            op, f"input {shape_text(shape_of(x))} is no batch of square matrices for {shape_text(shape_of(out))}"
        )
    if all(isinstance(d, int) for d in batch_shape) and pymath.prod(batch_shape) == 0:
        return
    rows = g.top.min(rows, columns)
    matrix = alloc_shaped(g.top, f64, shape_of(x))
    ivs, copy = g.top.loop_nest(shape_of(x))
    copy.store(copy.convert(copy.load(x, ivs), f64), matrix, ivs)

    batch, b = g.top.loop_nest(batch_shape)

    def eliminate(inner: KernelBuilder, ks: list[Bound], determinant: SSAValue) -> SSAValue:
        (k,) = ks
        k = inner.index(k)
        return inner.mul(determinant, _eliminate_column(inner, matrix, list(batch), k, rows))

    determinant = b.reduce([(0, rows)], b.constant(1.0, f64), eliminate)
    b.store(b.convert(determinant, element), out, batch)
