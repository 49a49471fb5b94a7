"""CausalConvWithState: a depthwise 1-D convolution over the carried state followed
by the input, with the last k - 1 positions of that sequence as the new state.

ONNX's own body for it (Concat, a Conv of `group` = channels, Slice) needs the
channel count at compile time; this kernel reads the state and the input where
they are, so channels, length and kernel may all be known at run time only."""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.dialects.builtin import BFloat16Type, Float16Type, f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder, ReductionStep
from onnxc.passes.onnx_to_krnl.common import GraphLowering, dims_agree, lowers, optional_result, shape_of, shape_text

ACTIVATIONS = ("none", "silu", "swish")


@lowers("CausalConvWithState", run_time_dims=True)
def lower_causal_conv_with_state(g: GraphLowering, op: OnnxOp) -> None:
    """out[n, c, t] = act(bias[c] + sum over j < k of w[c, 0, j] * s[n, c, t + j]), s the
    state (zeros without one) then the input along the last axis; the new state is
    the last k - 1 positions of s. Taps before the input read the state, the others
    the input: two reductions over clipped ranges, no branch. float16/bfloat16 sum
    in float32, rounded before the activation (as the spec's body: Conv, then Cast)."""
    x, weights, bias, past = (g.input(op, k) for k in range(4))
    element = g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=False)
    activation = op.attr("activation")
    if activation not in ACTIVATIONS:
        raise g.unsupported(op, f"activation '{activation}'")
    out, state = g.result(op), optional_result(g, op, 1)
    (batch, channels, length), (_, _, kernel) = shape_of(x), shape_of(weights)
    history = g.top.sub(kernel, 1)
    state_shape = (batch, channels, history)
    if (
        not dims_agree(shape_of(weights), (channels, 1, kernel))
        or (bias is not None and not dims_agree(shape_of(bias), (channels,)))
        or (past is not None and not dims_agree(shape_of(past), state_shape))
    ):
        raise g.shape_error(
            op, f"input {shape_text(shape_of(x))}, weights {shape_text(shape_of(weights))}: weights [C, 1, k] wanted"
        )
    compute = f32 if isinstance(element, Float16Type | BFloat16Type) else element

    ivs, b = g.top.loop_nest(shape_of(out))
    n, c, t = ivs
    total = b.convert(b.load(bias, [c]), compute) if bias is not None else b.constant(0.0, compute)
    first_input_tap = b.max(b.sub(history, t), 0)  # taps j < this read the state at t + j

    def tap(source: SSAValue, offset: Bound) -> ReductionStep:
        def step(inner: KernelBuilder, loop_ivs: list[Bound], acc: SSAValue) -> SSAValue:
            (j,) = loop_ivs
            weight = inner.convert(inner.load(weights, [c, 0, j]), compute)
            sample = inner.convert(inner.load(source, [n, c, inner.add(inner.add(t, j), offset)]), compute)
            return inner.add(acc, inner.mul(weight, sample))

        return step

    if past is not None:
        total = b.reduce([(0, b.min(first_input_tap, kernel))], total, tap(past, 0))
    total = b.reduce([(first_input_tap, kernel)], total, tap(x, b.sub(0, history)))
    value = b.convert(total, element)
    if activation != "none":  # x * sigmoid(x) = x / (1 + exp(-x)), in float32 at least
        wide = b.convert(value, compute)
        one = b.constant(1.0, compute)
        value = b.convert(b.div(wide, b.add(one, b.math(math.ExpOp, b.neg(wide)))), element)
    b.store(value, out, ivs)
    if state is not None:
        _new_state(g, x, past, state, length, history)


def _new_state(
    g: GraphLowering, x: SSAValue, past: SSAValue | None, state: SSAValue, length: Bound, history: Bound
) -> None:
    """state[n, c, i] = s[n, c, length + i]: the old state's positions length + i
    while those are in it (zeros without one), then the input's."""
    batch, channels, _ = shape_of(state)
    (n, c), b = g.top.loop_nest([batch, channels])
    from_input = b.max(b.sub(history, length), 0)  # positions i >= this come from the input
    (i,), kept = b.for_nest([(0, from_input)])
    zero = kept.constant(0.0, state.type.get_element_type())
    kept.store(kept.load(past, [n, c, kept.add(i, length)]) if past is not None else zero, state, [n, c, i])
    (i,), new = b.for_nest([(from_input, history)])
    new.store(new.load(x, [n, c, new.sub(new.add(i, length), history)]), state, [n, c, i])
