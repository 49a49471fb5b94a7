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
from xdsl.dialects.builtin import MemRefType, f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, Operand, elementwise, fill, lowers, shape_of

UPDATE_RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True), "gated_delta": (True, True)}
"""update_rule -> (decays the state, corrects the value by what the state recalls)."""


@lowers("LinearAttention")
def lower_linear_attention(g: GraphLowering, op: OnnxOp) -> None:
    query, key, value, past, decay, beta = (g.input(op, k) for k in range(6))
    rule = op.attr("update_rule")
    q_heads, kv_heads = op.attr("q_num_heads"), op.attr("kv_num_heads")
    if rule not in UPDATE_RULES:
        raise g.unsupported(op, f"LinearAttention update_rule '{rule}'")
    gated, delta = UPDATE_RULES[rule]
    g.element_type(op, op.input(0), ints=False)
    batch, steps, q_width = shape_of(query)
    if not q_heads or not kv_heads or q_heads % kv_heads or q_width % q_heads or shape_of(value)[2] % kv_heads:
        raise g.shape_error(op, f"q_num_heads {q_heads}, kv_num_heads {kv_heads} for query {list(shape_of(query))}")
    d_k, d_v, group = q_width // q_heads, shape_of(value)[2] // kv_heads, q_heads // kv_heads
    if gated != (decay is not None) or delta != (beta is not None):
        raise g.shape_error(
            op, f"update_rule '{rule}' with{'' if decay else 'out'} decay, with{'' if beta else 'out'} beta"
        )
    decay_per_key = decay is not None and shape_of(decay)[2] == kv_heads * d_k
    beta_per_head = beta is not None and shape_of(beta)[2] == kv_heads
    scale = float(op.attr("scale")) or 1 / pymath.sqrt(d_k)

    state = g.top.alloc(MemRefType(f32, [batch, kv_heads, d_k, d_v]))
    if past is not None:
        elementwise(g.top, state, [Operand.whole(past)], lambda b, xs: b.convert(xs[0], f32))
    else:
        fill(g.top, state, g.top.constant(0.0, f32))
    corrected = g.top.alloc(MemRefType(f32, [batch, kv_heads, d_v])) if delta else None
    out = g.result(op, 0)

    (n, head), body = g.top.loop_nest([batch, kv_heads])
    (t,), token = body.for_nest([(0, steps)])

    def packed(b: KernelBuilder, buffer: SSAValue, packed_head: Bound, size: int, index: Bound) -> SSAValue:
        """Element `index` of head `packed_head` of a (B, T, H * size) input at (n, t), as f32."""
        return b.convert(b.load(buffer, [n, t, b.add(b.mul(packed_head, size), index)]), f32)

    if gated:
        (d, m), decaying = token.for_nest([(0, d_k), (0, d_v)])
        log_decay = packed(decaying, decay, head, d_k, d) if decay_per_key else packed(decaying, decay, head, 1, 0)
        decayed = decaying.mul(decaying.load(state, [n, head, d, m]), decaying.math(math.ExpOp, log_decay))
        decaying.store(decayed, state, [n, head, d, m])
    if delta:
        (m,), correcting = token.for_nest([(0, d_v)])

        def recall(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
            (d,) = ivs
            return b.add(acc, b.mul(b.load(state, [n, head, d, m]), packed(b, key, head, d_k, d)))

        recalled = correcting.reduce([(0, d_k)], correcting.constant(0.0, f32), recall)
        rate = packed(correcting, beta, head, 1, 0) if beta_per_head else packed(correcting, beta, 0, 1, 0)
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

    output = reading.mul(reading.constant(scale, f32), reading.reduce([(0, d_k)], reading.constant(0.0, f32), read))
    element = out.type.get_element_type()
    reading.store(reading.convert(output, element), out, [n, t, reading.add(reading.mul(q_head, d_v), m)])

    if len(op.results) > 1 and op.results[1].uses:
        present = g.result(op, 1)
        element = present.type.get_element_type()
        elementwise(g.top, present, [Operand.whole(state)], lambda b, xs: b.convert(xs[0], element))
