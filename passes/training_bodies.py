"""Function bodies for the optimizers of `ai.onnx.preview.training` (Adagrad, Adam, Momentum).

Their schemas have no function body, but each is an elementwise formula of the spec
applied to every (X, G, H[, V]) group of its variadic input, with the learning rate R
and the step count T shared. decompose inlines these bodies like a schema's own, so
the optimizers need no kernel of their own: the ai.onnx elementwise ops they become
already have one, for every float type and with broadcasting.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from xdsl.dialects.builtin import TensorType

from onnxc.dialects.onnx import TRAINING_DOMAIN, OnnxOp, onnx_inputs, onnx_outputs
from onnxc.dialects.types import onnx_type_of
from onnxc.dtypes import numpy_dtype


class _BodyBuilder:
    """Nodes of one body, each output a fresh name; constants in the updated tensors' type."""

    def __init__(self, element_type: int):
        self.element_type = element_type
        self.nodes: list[onnx.NodeProto] = []

    def node(self, op_type: str, *inputs: str, **attributes) -> str:
        name = f"t{len(self.nodes)}"
        self.nodes.append(onnx.helper.make_node(op_type, list(inputs), [name], **attributes))
        return name

    def const(self, value: float) -> str:
        array = np.array(value, dtype=numpy_dtype(self.element_type))
        return self.node("Constant", value=onnx.numpy_helper.from_array(array))

    def real(self, name: str) -> str:
        """R or T in the updated tensors' type."""
        return self.node("Cast", name, to=self.element_type)

    def regularized_gradient(self, op: OnnxOp, x: str, g: str) -> str:
        """G + norm_coefficient * X: the gradient with the L2 regularization term."""
        return self.node("Add", self.node("Mul", self.const(op.attr("norm_coefficient")), x), g)

    def first_step_or(self, t: str, later: str, first: str) -> str:
        """`later` once T > 0, `first` at the first step (T == 0)."""
        return self.node("Where", self.node("Greater", t, self.node("Constant", value_int=0)), later, first)


def _adagrad(op: OnnxOp, b: _BodyBuilder, r: str, t: str, groups: list[list[str]]) -> list[list[str]]:
    """r = R / (1 + T * decay_factor); H' = H + G_r²; X' = X - r * G_r / (sqrt(H') + epsilon)."""
    rate = b.node(
        "Div", b.real(r), b.node("Add", b.const(1.0), b.node("Mul", b.real(t), b.const(op.attr("decay_factor"))))
    )
    new_x, new_h = [], []
    for x, g, h in zip(*groups):
        g_reg = b.regularized_gradient(op, x, g)
        h_new = b.node("Add", h, b.node("Mul", g_reg, g_reg))
        scale = b.node("Add", b.node("Sqrt", h_new), b.const(op.attr("epsilon")))
        new_x.append(b.node("Sub", x, b.node("Div", b.node("Mul", rate, g_reg), scale)))
        new_h.append(h_new)
    return [new_x, new_h]


def _momentum(op: OnnxOp, b: _BodyBuilder, r: str, t: str, groups: list[list[str]]) -> list[list[str]]:
    """V' = alpha * V + beta' * G_r (beta' = 1 at the first step); X' = X - R * V' (standard)
    or X' = X - R * (G_r + alpha * V') (nesterov)."""
    rate, alpha = b.real(r), b.const(op.attr("alpha"))
    beta = b.first_step_or(t, b.const(op.attr("beta")), b.const(1.0))
    nesterov = op.attr("mode") == "nesterov"
    new_x, new_v = [], []
    for x, g, v in zip(*groups):
        g_reg = b.regularized_gradient(op, x, g)
        v_new = b.node("Add", b.node("Mul", alpha, v), b.node("Mul", beta, g_reg))
        step = b.node("Add", g_reg, b.node("Mul", alpha, v_new)) if nesterov else v_new
        new_x.append(b.node("Sub", x, b.node("Mul", rate, step)))
        new_v.append(v_new)
    return [new_x, new_v]


def _adam(op: OnnxOp, b: _BodyBuilder, r: str, t: str, groups: list[list[str]]) -> list[list[str]]:
    """V' = alpha * V + (1 - alpha) * G_r; H' = beta * H + (1 - beta) * G_r²;
    r = R * sqrt(1 - beta^T) / (1 - alpha^T) once T > 0, else R;
    X' = (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon))."""
    alpha, beta = b.const(op.attr("alpha")), b.const(op.attr("beta"))
    one, steps, rate = b.const(1.0), b.real(t), b.real(r)
    corrected = b.node(
        "Div",
        b.node("Mul", rate, b.node("Sqrt", b.node("Sub", one, b.node("Pow", beta, steps)))),
        b.node("Sub", one, b.node("Pow", alpha, steps)),
    )
    rate = b.first_step_or(t, corrected, rate)
    keep = b.const(1.0 - op.attr("norm_coefficient_post"))
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(*groups):
        g_reg = b.regularized_gradient(op, x, g)
        v_new = b.node("Add", b.node("Mul", alpha, v), b.node("Mul", b.node("Sub", one, alpha), g_reg))
        h_new = b.node(
            "Add", b.node("Mul", beta, h), b.node("Mul", b.node("Sub", one, beta), b.node("Mul", g_reg, g_reg))
        )
        scale = b.node("Add", b.node("Sqrt", h_new), b.const(op.attr("epsilon")))
        x_new = b.node("Sub", x, b.node("Mul", rate, b.node("Div", v_new, scale)))
        new_x.append(b.node("Mul", keep, x_new))
        new_v.append(v_new)
        new_h.append(h_new)
    return [new_x, new_v, new_h]


# op type -> (tensors per group, body builder)
_OPTIMIZERS: dict[str, tuple[int, Callable]] = {
    "Adagrad": (3, _adagrad),
    "Momentum": (3, _momentum),
    "Adam": (4, _adam),
}


def training_body(op: OnnxOp) -> onnx.FunctionProto | None:
    """The body of a training optimizer node, or None (another op, or inputs that do not
    form whole groups of tensors)."""
    if op.DOMAIN != TRAINING_DOMAIN or op.OP_TYPE not in _OPTIMIZERS:
        return None
    per_group, build = _OPTIMIZERS[op.OP_TYPE]
    inputs = onnx_inputs(op)
    count = (len(inputs) - 2) // per_group
    if count == 0 or len(inputs) != 2 + per_group * count or len(onnx_outputs(op)) > (per_group - 1) * count:
        return None
    first = inputs[2].type
    if not isinstance(first, TensorType):
        return None
    names = ["R", "T"] + [f"in{k}" for k in range(per_group * count)]
    groups = [names[2 + k * count : 2 + (k + 1) * count] for k in range(per_group)]
    builder = _BodyBuilder(onnx_type_of(first.get_element_type()))
    outputs = [name for kind in build(op, builder, "R", "T", groups) for name in kind]
    return onnx.helper.make_function(TRAINING_DOMAIN, op.OP_TYPE, names, outputs, builder.nodes, [])
