"""LinearAttention (opset 27): the recurrent form, token by token, of linear,
gated, delta and gated-delta attention, with grouped KV heads.

Per (batch, KV head) the state S (d_k x d_v, f32 as in the reference) is
updated for each token t in order: decayed by exp(g_t) (gated), the value
corrected by beta_t * (v_t - S^T k_t) (delta), then S += k_t (x) v_t; every
query head of the group reads o_t = scale * q_t^T S.
"""

from __future__ import annotations

import math as pymath

from xdsl.dialects import math
from xdsl.dialects.builtin import f32, f64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped
from onnxc.passes.onnx_to_krnl.common import GraphLowering, Operand, elementwise, fill, lowers, shape_of, shape_text

UPDATE_RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True), "gated_delta": (True, True)}
"""update_rule -> (decays the state, corrects the value by what the state recalls)."""


@lowers("LinearAttention", run_time_dims=True)
def lower_linear_attention(g: GraphLowering, op: OnnxOp) -> None:
    """Head sizes known at run time only come from the packed widths (shape
    inference checked that they divide); so does whether decay is per key or
    per head, and beta per head or shared (equal forms where d_k or H_kv is 1)."""
    query, key, value, past, decay, beta = (g.input(op, k) for k in range(6))
    rule = op.attr("update_rule")
    q_heads, kv_heads = op.attr("q_num_heads"), op.attr("kv_num_heads")
    if rule not in UPDATE_RULES:
        raise g.unsupported(op, f"LinearAttention update_rule '{rule}'")
    gated, delta = UPDATE_RULES[rule]
    g.element_type(op, op.input(0), ints=False)
    batch, steps, q_width = shape_of(query)
    v_width = shape_of(value)[2]
    if not q_heads or not kv_heads or q_heads % kv_heads or _indivisible(q_width, q_heads, v_width, kv_heads):
        raise g.shape_error(
            op, f"q_num_heads {q_heads}, kv_num_heads {kv_heads} for query {shape_text(shape_of(query))}"
        )
    top = g.top
    d_k, d_v, group = top.div(q_width, q_heads), top.div(v_width, kv_heads), q_heads // kv_heads
    if gated != (decay is not None) or delta != (beta is not None):
        raise g.shape_error(
            op, f"update_rule '{rule}' with{'' if decay else 'out'} decay, with{'' if beta else 'out'} beta"
        )
    # decay[n, t, head * decay_stride + d * per_key]; beta[n, t, head * beta_stride]
    decay_stride, per_key = _either_width(top, decay, top.mul(kv_heads, d_k), (d_k, 1), (1, 0))
    beta_stride, _ = _either_width(top, beta, kv_heads, (1, 0), (0, 0))
    scale = float(op.attr("scale"))
    if scale:
        scale_value = top.constant(scale, f32)
    elif isinstance(d_k, int):
        scale_value = top.constant(1 / pymath.sqrt(d_k), f32)
    else:  # as numpy: 1 / sqrt(d_k) in double, then rounded
        root = top.math(math.SqrtOp, top.index_to_float(d_k, f64))
        scale_value = top.convert(top.div(top.constant(1.0, f64), root), f32)

    state = alloc_shaped(top, f32, [batch, kv_heads, d_k, d_v])
    if past is not None:
        elementwise(top, state, [Operand.whole(past)], lambda b, xs: b.convert(xs[0], f32))
    else:
        fill(top, state, top.constant(0.0, f32))
    corrected = alloc_shaped(top, f32, [batch, kv_heads, d_v]) if delta else None
    out = g.result(op, 0)

    (n, head), body = g.top.loop_nest([batch, kv_heads])
    (t,), token = body.for_nest([(0, steps)])

    def packed(b: KernelBuilder, buffer: SSAValue, packed_head: Bound, size: Bound, index: Bound) -> SSAValue:
        """Element `index` of head `packed_head` of a (B, T, H * size) input at (n, t), as f32."""
        return b.convert(b.load(buffer, [n, t, b.add(b.mul(packed_head, size), index)]), f32)

    if gated:
        (d, m), decaying = token.for_nest([(0, d_k), (0, d_v)])
        log_decay = packed(decaying, decay, head, decay_stride, decaying.mul(d, per_key))
        decayed = decaying.mul(decaying.load(state, [n, head, d, m]), decaying.math(math.ExpOp, log_decay))
        decaying.store(decayed, state, [n, head, d, m])
    if delta:
        (m,), correcting = token.for_nest([(0, d_v)])

        def recall(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
            (d,) = ivs
            return b.add(acc, b.mul(b.load(state, [n, head, d, m]), packed(b, key, head, d_k, d)))

        recalled = correcting.reduce([(0, d_k)], correcting.constant(0.0, f32), recall)
        rate = packed(correcting, beta, head, beta_stride, 0)
        correction = correcting.mul(rate, correcting.sub(packed(correcting, value, head, d_v, m), recalled))
        correcting.store(correction, corrected, [n, head, m])
    (d, m), writing = token.for_nest([(0, d_k), (0, d_v)])
    written = writing.load(corrected, [n, head, m]) if delta else packed(writing, value, head, d_v, m)
    update = writing.mul(packed(writing, key, head, d_k, d), written)
    writing.store(writing.add(writing.load(state, [n, head, d, m]), update), state, [n, head, d, m])

    (member, m), reading = token.for_nest([(0, group), (0, d_v)])
    q_head = reading.add(reading.mul(head, group), member)

    def read(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        (d,) = ivs
        return b.add(acc, b.mul(packed(b, query, q_head, d_k, d), b.load(state, [n, head, d, m])))

    output = reading.mul(scale_value, reading.reduce([(0, d_k)], reading.constant(0.0, f32), read))
    element = out.type.get_element_type()
    reading.store(reading.convert(output, element), out, [n, t, reading.add(reading.mul(q_head, d_v), m)])

    if len(op.results) > 1 and op.results[1].uses:
        present = g.result(op, 1)
        element = present.type.get_element_type()
        elementwise(g.top, present, [Operand.whole(state)], lambda b, xs: b.convert(xs[0], element))


def _indivisible(*counts_and_parts: Bound | int) -> bool:
    """Whether any count known at compile time does not split into its equal parts."""
    pairs = zip(counts_and_parts[::2], counts_and_parts[1::2])
    return any(isinstance(count, int) and count % parts for count, parts in pairs)


def _either_width(
    top: KernelBuilder, buffer: SSAValue | None, wide: Bound, if_wide: tuple[Bound, Bound], if_not: tuple[Bound, Bound]
) -> tuple[Bound, Bound]:
    """`if_wide` where the buffer's last dim is `wide`, else `if_not`: chosen here
    for static dims, by a select at run time otherwise (shape inference checked
    that the dim is one of the two forms)."""
    if buffer is None:
        return if_not
    width = shape_of(buffer)[2]
    if isinstance(width, int) and isinstance(wide, int):
        return if_wide if width == wide else if_not
    is_wide = top.compare_index("eq", width, wide)
    return tuple(top.select_index(is_wide, a, b) for a, b in zip(if_wide, if_not))
