"""What a depthwise or grouped conv computes in its store besides its sums: a following Relu/Clip
(MobileNetV2's ReLU6), another element-wise op of the conv's result alone (MobileNetV3's
HardSwish), or SiLU written as Mul(y, Sigmoid(y)) (EfficientNet's). Each is the element-wise
op's own scalar definition (fusion.SCALAR_OPS), applied to the conv's float32 total before its
store: the conv's output is written once, instead of written, read and written again by an
element-wise nest (HardSwish after a 480-channel 14x14 depthwise conv: 0.016 ms of 0.2)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, ScalarFunction
from onnxc.passes.onnx_to_krnl.fusion import SCALAR_OPS
from onnxc.passes.onnx_to_krnl.gemm_epilogue import clip_bounds, single_user

ARITHMETIC = frozenset({"Relu", "LeakyRelu", "HardSigmoid", "HardSwish", "Abs", "Neg"})
"""Unary ops of a few arithmetic ops each, which the NCHW paths' loops compute in their store at
little cost (HardSwish after 64 channels 112 -> 56 at stride 2: 0.221 -> 0.179 ms). Ops of math
functions (exp: Sigmoid, SiLU) ran slower there than in a flat nest of their own (SiLU after
that conv: 0.240 -> 0.322 ms; 72 channels 56x56: 0.238 -> 0.266), so only the lanes take them."""

Epilogue = Callable[[KernelBuilder, SSAValue, SSAValue], SSAValue]
"""(builder, a conv's float32 total, its output channel) -> the element stored instead."""


def clamp(bounds: tuple[float, float]) -> Epilogue:
    """The total clamped to Clip's bounds as Clip computes them (max, then min)."""
    low, high = bounds

    def clamped(b: KernelBuilder, total: SSAValue, _channel: SSAValue) -> SSAValue:
        total = b.max(total, b.constant(low, f32)) if low != float("-inf") else total
        return b.min(total, b.constant(high, f32)) if high != float("inf") else total

    return clamped


def _scalar(g: GraphLowering, user: OnnxOp, values: set[SSAValue]) -> ScalarFunction | None:
    """The scalar function of `user` if it is element-wise, reads exactly `values` (unbroadcast,
    each once) and keeps their type, else None."""
    operands = list(user.operands)
    if user.OP_TYPE not in SCALAR_OPS or len(operands) != len(values) or set(operands) != values:
        return None
    if any(result.type != operands[0].type for result in user.results[:1]):
        return None
    definition = SCALAR_OPS[user.OP_TYPE](g, user)
    if any(not isinstance(read, tuple) or read[0] not in values for read in definition.reads):
        return None
    return definition.compute


def conv_epilogue(g: GraphLowering, conv: OnnxOp, *, math_functions: bool) -> tuple[SSAValue, Epilogue | None]:
    """The buffer the conv's store writes (the last fused op's result, or the conv's own) and
    the epilogue computing it (None: the sum itself); the fused ops are marked so, the conv's
    result an alias of that buffer. Without `math_functions`, only a clamp or an op of
    ARITHMETIC."""
    y = conv.results[0]
    user = single_user(y)
    fused: list[OnnxOp] = []
    epilogue: Epilogue | None = None
    if user is not None and user.input(0) is y and (bounds := clip_bounds(g, user)) is not None:
        fused, epilogue = [user], clamp(bounds)
    elif (
        user is not None
        and (math_functions or user.OP_TYPE in ARITHMETIC)
        and (compute := _scalar(g, user, {y})) is not None
    ):
        fused, epilogue = [user], _located(compute, user, lambda total: [total])
    elif math_functions:
        users = {use.operation for use in y.uses}
        sigmoid = next((u for u in users if isinstance(u, OnnxOp) and u.OP_TYPE == "Sigmoid"), None)
        product = single_user(sigmoid.results[0]) if sigmoid is not None and sigmoid.parent is conv.parent else None
        if product is not None and product.OP_TYPE == "Mul" and users == {sigmoid, product}:
            gate, multiply = _scalar(g, sigmoid, {y}), _scalar(g, product, {y, sigmoid.results[0]})
            if gate is not None and multiply is not None:
                epilogue, fused = _silu(gate, sigmoid, multiply, product), [sigmoid, product]
    if not fused:
        return g.result(conv), None
    g.fused.update(fused)
    out = g.result(fused[-1])
    g.alias(y, out)
    return out, epilogue


def _located(compute: ScalarFunction, op: OnnxOp, operands: Callable[[SSAValue], list[SSAValue]]) -> Epilogue:
    """`compute` of `operands(total)`, its ops located at `op` (a profile names the fused node)."""
    return lambda b, total, _channel: compute(b.located(op.location), operands(total))


def _silu(gate: ScalarFunction, sigmoid: OnnxOp, multiply: ScalarFunction, product: OnnxOp) -> Epilogue:
    """y * Sigmoid(y), the Mul's operands in its own order."""
    y_first = product.input(0) is sigmoid.input(0)

    def silu(b: KernelBuilder, total: SSAValue, channel: SSAValue) -> SSAValue:
        s = _located(gate, sigmoid, lambda t: [t])(b, total, channel)
        return _located(multiply, product, lambda t: [t, s] if y_first else [s, t])(b, total, channel)

    return silu
