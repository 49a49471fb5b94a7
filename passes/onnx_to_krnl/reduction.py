"""Reductions along axes: Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax, CumSum/CumProd.

All are built on one shape: a krnl nest over the dims kept, and inside it scf
loops over the reduced dims carrying an accumulator (`KernelBuilder.reduce`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32, i1, i64
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import reshaped_view
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    constant_array,
    copy_reshaped,
    lowers,
    normalized_axis,
    shape_of,
)


@dataclass(frozen=True)
class ReductionNest:
    """An input of rank `rank` reduced over `reduced` dims: a nest over the kept
    dims (`outer_ivs`, body builder `body`) and the input index for given ivs of
    the reduced dims."""

    rank: int
    reduced: tuple[int, ...]
    outer_ivs: list[SSAValue]
    body: KernelBuilder

    @property
    def kept(self) -> list[int]:
        return [d for d in range(self.rank) if d not in self.reduced]

    def index(self, inner_ivs: Sequence[Bound]) -> list[Bound]:
        """The input index at the nest's position and `inner_ivs` of the reduced dims."""
        by_dim = dict(zip(self.kept, self.outer_ivs)) | dict(zip(self.reduced, inner_ivs))
        return [by_dim[d] for d in range(self.rank)]

    def out_index(self, keepdims: bool) -> list[Bound]:
        """The index of the nest's position in an output with or without the reduced dims."""
        if not keepdims:
            return list(self.outer_ivs)
        return self.index([0] * len(self.reduced))


def reduction_nest(builder: KernelBuilder, shape: Sequence[int], reduced: Sequence[int]) -> ReductionNest:
    """A krnl nest over the dims of `shape` not in `reduced`."""
    kept = [d for d in range(len(shape)) if d not in reduced]
    outer_ivs, body = builder.loop_nest([shape[d] for d in kept])
    return ReductionNest(len(shape), tuple(sorted(reduced)), outer_ivs, body)


def fold_reduced(
    nest: ReductionNest,
    shape: Sequence[int],
    init: SSAValue,
    step: Callable[[KernelBuilder, SSAValue, SSAValue], SSAValue],
    read: Callable[[KernelBuilder, list[Bound]], SSAValue],
) -> SSAValue:
    """step(acc, read(input index)) folded over the reduced dims at the nest's position."""
    ranges = [(0, shape[d]) for d in nest.reduced]
    return nest.body.reduce(ranges, init, lambda b, ivs, acc: step(b, acc, read(b, nest.index(ivs))))


# --------------------------------------------------------------------------- Reduce*

Step = Callable[[KernelBuilder, SSAValue, SSAValue], SSAValue]
Finish = Callable[[KernelBuilder, SSAValue, int], SSAValue]


@dataclass(frozen=True)
class Reduction:
    init: Callable[[KernelBuilder, Attribute], SSAValue]
    step: Step
    finish: Finish = lambda b, acc, count: acc
    ints: bool = True


def _zero(b: KernelBuilder, t: Attribute) -> SSAValue:
    return b.constant(0, t)


def _sum(b: KernelBuilder, acc: SSAValue, x: SSAValue) -> SSAValue:
    return b.running_sum(acc, x)


def _sum_squares(b: KernelBuilder, acc: SSAValue, x: SSAValue) -> SSAValue:
    return b.running_sum(acc, b.mul(x, x))


REDUCTIONS: dict[str, Reduction] = {
    "ReduceSum": Reduction(_zero, _sum),
    "ReduceSumSquare": Reduction(_zero, _sum_squares),
    "ReduceL1": Reduction(_zero, lambda b, acc, x: b.running_sum(acc, b.abs(x))),
    "ReduceL2": Reduction(_zero, _sum_squares, lambda b, acc, n: b.math(math.SqrtOp, acc), ints=False),
    "ReduceMean": Reduction(_zero, _sum, lambda b, acc, n: b.div(acc, b.number(n, acc.type))),
    "ReduceProd": Reduction(lambda b, t: b.constant(1, t), lambda b, acc, x: b.mul(acc, x)),
    "ReduceMax": Reduction(lambda b, t: b.lowest(t), lambda b, acc, x: b.max(acc, x)),
    "ReduceMin": Reduction(lambda b, t: b.highest(t), lambda b, acc, x: b.min(acc, x)),
    "ReduceLogSum": Reduction(_zero, _sum, lambda b, acc, n: b.math(math.LogOp, acc), ints=False),
    "ReduceLogSumExp": Reduction(
        _zero,
        lambda b, acc, x: b.running_sum(acc, b.math(math.ExpOp, x)),
        lambda b, acc, n: b.math(math.LogOp, acc),
        ints=False,
    ),
}
"""Reduce op -> (identity, accumulate, finish given the element count); floats
propagate NaN through max/min as numpy and onnxruntime do."""

AXES_BECAME_INPUT = {"ReduceSum": 13}
"""Opset since which `axes` is an input (18 for the others)."""


def reduce_axes(g: GraphLowering, op: OnnxOp, rank: int) -> list[int] | None:
    """The reduced dims, or None for "none, the op is the identity" (noop_with_empty_axes)."""
    if g.version(op) >= AXES_BECAME_INPUT.get(op.OP_TYPE, 18):
        axes_input = op.input(1)
        if axes_input is None:
            axes = []
        else:
            values = constant_array(axes_input)
            if values is None:
                raise g.unsupported(op, "axes computed at run time")
            axes = [int(a) for a in values.reshape(-1)]
    else:
        axes = list(op.attr("axes") or [])
    if not axes:
        return None if op.attr("noop_with_empty_axes") else list(range(rank))
    return sorted({normalized_axis(g, op, a, rank) for a in axes})


def accumulation_type(element: Attribute) -> Attribute:
    """The type sums of `element`s accumulate in: f32 for 16-bit floats (rounded once at
    the end, as numpy and so ONNX's reference do in effect), else the element type."""
    return f32 if is_float(element) and element.bitwidth == 16 else element


@lowers(*REDUCTIONS, run_time_dims=True)
def lower_reduce(g: GraphLowering, op: OnnxOp) -> None:
    reduction = REDUCTIONS[op.OP_TYPE]
    x = g.input(op, 0)
    bools = op.OP_TYPE in ("ReduceMax", "ReduceMin")
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=reduction.ints, bools=bools)
    out = g.result(op)
    shape = shape_of(x)
    axes = reduce_axes(g, op, len(shape))
    if axes is None:
        copy_reshaped(g.top, x, out)
        return
    compute = accumulation_type(element)
    count: Bound = 1  # before the nest, which reads it
    for d in axes:
        count = g.top.mul(count, shape[d])
    keepdims = bool(op.attr("keepdims"))
    merged, merged_axes = _merged_dims(g.top, shape, axes)
    if len(merged) < len(shape):
        x = reshaped_view(g.top, x, merged)
        out = reshaped_view(g.top, out, [d for i, d in enumerate(merged) if i not in merged_axes])
        shape, axes, keepdims = merged, merged_axes, False
    nest = reduction_nest(g.top, shape, axes)
    b = nest.body
    acc = fold_reduced(
        nest, shape, reduction.init(b, compute), reduction.step, lambda b, index: b.convert(b.load(x, index), compute)
    )
    result = b.convert(reduction.finish(b, acc, count), element)
    b.store(result, out, nest.out_index(keepdims))


def _merged_dims(builder: KernelBuilder, shape: Sequence[Bound], axes: Sequence[int]) -> tuple[list[Bound], list[int]]:
    """The shape with each run of adjacent reduced dims, and of adjacent kept dims, merged into
    one, and the merged reduced dims: a mean over H and W of [N, C, H, W] becomes one over the
    H*W of [N*C, H*W], whose one loop vectorizes (nested loops over 14 and 14 did not)."""
    merged: list[Bound] = []
    merged_axes: list[int] = []
    for d, size in enumerate(shape):
        if d > 0 and (d in axes) == (d - 1 in axes):
            merged[-1] = builder.mul(merged[-1], size)
            continue
        if d in axes:
            merged_axes.append(len(merged))
        merged.append(size)
    return merged, merged_axes


# ---------------------------------------------------------------------- ArgMax/ArgMin


@lowers("ArgMax", "ArgMin", run_time_dims=True)
def lower_arg_extreme(g: GraphLowering, op: OnnxOp) -> None:
    """The index of the first (or with select_last_index, the last) extreme value
    along `axis`: one pass finds the extreme, a second its index."""
    x = g.input(op, 0)
    element = g.element_type(op, op.input(0))
    out = g.result(op)
    shape = shape_of(x)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    last = bool(op.attr("select_last_index"))
    is_max = op.OP_TYPE == "ArgMax"
    nest = reduction_nest(g.top, shape, [axis])
    b = nest.body

    def better(b: KernelBuilder, acc: SSAValue, v: SSAValue) -> SSAValue:
        return b.max(acc, v) if is_max else b.min(acc, v)

    start = b.lowest(element) if is_max else b.highest(element)
    extreme = fold_reduced(nest, shape, start, better, lambda b, index: b.load(x, index))

    def locate(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        position = b.insert(arith.IndexCastOp(b.index(ivs[0]), i64)).result
        value = b.load(x, nest.index(ivs))
        hit = b.compare("eq", value, extreme)
        if is_float(element):  # a NaN is the extreme (max and min propagate it)
            hit = b.binary("or", hit, b.binary("and", b.is_nan(value), b.is_nan(extreme)))
        if not last:
            hit = b.binary("and", hit, b.compare("lt", acc, b.constant(0, i64)))
        return b.select(hit, position, acc)

    found = b.reduce([(0, shape[axis])], b.constant(-1, i64), locate)
    b.store(found, out, nest.out_index(bool(op.attr("keepdims"))))


# ----------------------------------------------------------- Softmax, LogSoftmax, Hardmax


@lowers("Softmax", "LogSoftmax", "Hardmax", run_time_dims=True)
def lower_softmax(g: GraphLowering, op: OnnxOp) -> None:
    """Over the softmax dims, for each position of the other dims: Softmax is
    exp(x - max) / sum(exp(x - max)), LogSoftmax its log, Hardmax 1 at the first
    maximum. Since opset 13 the softmax dims are just `axis` (default -1); before,
    they are every dim from `axis` (default 1) on (the input coerced to 2-D)."""
    x = g.input(op, 0)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    out = g.result(op)
    shape = shape_of(x)
    rank = len(shape)
    per_axis = g.version(op) >= 13
    axis = op.attr("axis")
    axis = normalized_axis(g, op, axis, rank)
    reduced = [axis] if per_axis else list(range(axis, rank))
    ranges = [(0, shape[d]) for d in reduced]
    nest = reduction_nest(g.top, shape, reduced)
    body = nest.body
    # A NaN in the row makes the sum of exponentials NaN anyway: the maximum need not carry
    # it (any value it returns then is a shift like another), and a maxnum with no NaN
    # vectorizes into plain vector maxima (maximumf did not, with its NaN tests).
    maximum = fold_reduced(
        nest,
        shape,
        body.lowest(element),
        lambda b, acc, v: b.max(acc, v) if op.OP_TYPE == "Hardmax" else b.maxnum(acc, v),
        lambda b, index: b.load(x, index),
    )

    if op.OP_TYPE == "Hardmax":

        def mark(b: KernelBuilder, ivs: list[Bound], seen: SSAValue) -> SSAValue:
            is_maximum = b.compare("eq", b.load(x, nest.index(ivs)), maximum)
            first = b.binary("and", is_maximum, b.compare("eq", seen, b.constant(0, i1)))
            b.store(b.convert(first, element), out, nest.index(ivs))
            return b.binary("or", seen, first)

        body.reduce(ranges, body.constant(0, i1), mark)
        return

    log = op.OP_TYPE == "LogSoftmax"
    # Stored exponentials are rounded to the element type; their sum accumulates in
    # accumulation_type and is rounded once. One loop stores and sums them (it vectorizes:
    # a float sum may be reassociated), a last one scales: float32 by 1/sum, as onnxruntime
    # does; 16-bit floats divide, since a rounded 1/sum would put them an ulp off the reference.
    wide = accumulation_type(element)

    def exponentiate(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        shifted = b.sub(b.load(x, nest.index(ivs)), maximum)
        exponential = b.math(math.ExpOp, shifted)
        b.store(shifted if log else exponential, out, nest.index(ivs))
        return b.running_sum(acc, b.convert(exponential, wide))

    total = body.convert(body.reduce(ranges, body.constant(0.0, wide), exponentiate), element)
    reciprocal = not log and wide == element
    scale = (
        body.math(math.LogOp, total) if log else body.div(body.constant(1.0, element), total) if reciprocal else total
    )
    inner_ivs, inner = body.for_nest(ranges)
    stored = inner.load(out, nest.index(inner_ivs))
    scaled = inner.sub(stored, scale) if log else inner.mul(stored, scale) if reciprocal else inner.div(stored, scale)
    inner.store(scaled, out, nest.index(inner_ivs))


# ------------------------------------------------------------------- CumSum, CumProd


@lowers("CumSum", "CumProd", run_time_dims=True)
def lower_cumulative(g: GraphLowering, op: OnnxOp) -> None:
    """Running sums (products) along `axis` (a constant input), optionally
    `exclusive` (the element itself left out) and `reverse` (from the end)."""
    x = g.input(op, 0)
    g.same_element_type(op, [op.input(0), op.results[0]])
    out = g.result(op)
    shape = shape_of(x)
    axis_value = constant_array(op.input(1))
    if axis_value is None:
        raise g.unsupported(op, "axis computed at run time")
    axis = normalized_axis(g, op, int(axis_value.reshape(-1)[0]), len(shape))
    exclusive, reverse = bool(op.attr("exclusive")), bool(op.attr("reverse"))
    product = op.OP_TYPE == "CumProd"
    nest = reduction_nest(g.top, shape, [axis])
    b = nest.body

    def step(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        position = b.sub(b.sub(shape[axis], 1), ivs[0]) if reverse else ivs[0]
        index = nest.index([position])
        value = b.load(x, index)
        updated = b.mul(acc, value) if product else b.add(acc, value)
        b.store(acc if exclusive else updated, out, index)
        return updated

    b.reduce([(0, shape[axis])], b.constant(1 if product else 0, x.type.get_element_type()), step)
