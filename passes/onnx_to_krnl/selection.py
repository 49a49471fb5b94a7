"""NonZero and Compress (with a condition known at run time): outputs as long as the number of elements a condition selects.

Both are written into a scratch buffer of the largest possible shape by one
sequential scan that carries the count so far (an scf.for accumulator, so the
scan is never split among threads), and the count then sizes the
library-allocated graph output (`GraphLowering.dynamic_result`). The input
dims may be symbolic: the scratch buffer's are then computed at run time.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i1, i64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import delinearize, element_count
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, normalized_axis, shape_of


def _is_nonzero(b: KernelBuilder, value: SSAValue) -> SSAValue:
    """value != 0 as i1 (NaN counts as nonzero, as in numpy)."""
    return b.compare("ne", value, b.constant(0, value.type))


def _count_up(b: KernelBuilder, count: SSAValue, selected: SSAValue) -> SSAValue:
    return b.index(b.add(count, b.select_index(selected, 1, 0)))


@lowers("NonZero", dynamic=True, run_time_dims=True)
def lower_non_zero(g: GraphLowering, op: OnnxOp) -> None:
    """result[:, k] = the indices of the k-th nonzero element of x in row-major order."""
    x = g.input(op, 0)
    g.element_type(op, x, bools=True)
    shape = shape_of(x)
    if not shape:
        raise g.unsupported(op, "NonZero of a scalar")
    out = g.dynamic_result(op, 0, [len(shape), element_count(g.top, shape)])

    def scan(b: KernelBuilder, ivs: list[Bound], count: SSAValue) -> SSAValue:
        selected = _is_nonzero(b, b.load(x, ivs))
        kept = b.if_then(selected)
        for axis, iv in enumerate(ivs):
            kept.store(kept.from_index(iv, i64), out, [axis, count])
        return _count_up(b, count, selected)

    count = g.top.reduce([(0, d) for d in shape], g.top.index(0), scan)
    g.finish_dynamic_result(op, 0, count)


def lower_compress_at_run_time(g: GraphLowering, op: OnnxOp) -> None:
    """Compress with a condition known at run time only (tensor.py lowers the
    constant one): the slices of x along `axis` (of x flattened without it) whose
    condition is true; a condition shorter than that dim leaves out the slices
    past its end."""
    x, condition = g.input(op, 0), g.input(op, 1)
    g.element_type(op, x, bools=True)
    if condition.type.get_element_type() != i1:
        raise g.unsupported(op, f"condition of element type {condition.type.get_element_type()}")
    shape = shape_of(x)
    flat = "axis" not in op.attributes
    axis = 0 if flat else normalized_axis(g, op, op.attr("axis"), len(shape))
    slices = element_count(g.top, shape) if flat else shape[axis]
    bound = [slices] if flat else list(shape)
    out = g.dynamic_result(op, 0, bound)
    outer, inner = bound[:axis], bound[axis + 1 :]
    candidates = g.top.min(slices, shape_of(condition)[0])

    def element(b: KernelBuilder, position: Bound, rest_ivs: list[Bound]) -> list[Bound]:
        """The index into x of element `rest_ivs` (outer + inner ivs) of slice `position`."""
        if flat:
            return delinearize(b, position, shape)
        return [*rest_ivs[: len(outer)], position, *rest_ivs[len(outer) :]]

    def scan(b: KernelBuilder, ivs: list[Bound], count: SSAValue) -> SSAValue:
        selected = b.load(condition, ivs)
        kept = b.if_then(selected)
        rest, copy = kept.for_nest([(0, d) for d in [*outer, *inner]])
        destination = [*rest[: len(outer)], count, *rest[len(outer) :]]
        copy.store(copy.load(x, element(copy, ivs[0], rest)), out, destination)
        return _count_up(b, count, selected)

    count = g.top.reduce([(0, candidates)], g.top.index(0), scan)
    g.finish_dynamic_result(op, 0, count)
