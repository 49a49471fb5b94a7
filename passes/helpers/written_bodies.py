"""Function bodies onnxc writes, from the spec's formulas, for ops whose schema has none.

- The optimizers of `ai.onnx.preview.training` (Adagrad, Adam, Momentum): an elementwise
  formula applied to every (X, G, H[, V]) group of the variadic input, with the learning
  rate R and the step count T shared.
- BatchNormalization in training mode (opset 14+): batch statistics by ReduceMean, the
  inference-mode BatchNormalization on them, and the running statistics updated with
  `momentum`. Its kernel covers inference mode only, so decompose inlines this body
  although the op has a kernel.

decompose inlines these bodies like a schema's own: the ai.onnx ops they become already
have kernels, for every float type and with broadcasting.
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


def _batch_normalization_training(op: OnnxOp) -> onnx.FunctionProto | None:
    """Y = BatchNormalization(X) on the batch's mean and (population) variance over every
    dim but 1; running stats = input stats * momentum + batch stats * (1 - momentum)."""
    x = op.input(0)
    if not isinstance(x.type, TensorType) or x.type.get_num_dims() < 2 or len(onnx_outputs(op)) > 3:
        return None
    b = _BodyBuilder(onnx_type_of(x.type.get_element_type()))
    axes = b.node("Constant", value_ints=[0, *range(2, x.type.get_num_dims())])
    batch_mean = b.node("ReduceMean", "X", axes, keepdims=1)
    centered = b.node("Sub", "X", batch_mean)
    batch_var = b.node("ReduceMean", b.node("Mul", centered, centered), axes, keepdims=0)
    batch_mean = b.node("Squeeze", batch_mean, axes)
    y = b.node("BatchNormalization", "X", "scale", "B", batch_mean, batch_var, epsilon=op.attr("epsilon"))
    momentum, rest = b.const(op.attr("momentum")), b.const(1.0 - op.attr("momentum"))
    running = [
        b.node("Add", b.node("Mul", stat, momentum), b.node("Mul", batch, rest))
        for stat, batch in (("input_mean", batch_mean), ("input_var", batch_var))
    ]
    names = ["X", "scale", "B", "input_mean", "input_var"]
    # Written for opset 18 (ReduceMean takes its axes as an input); the ops follow it.
    return onnx.helper.make_function("", op.OP_TYPE, names, [y, *running], b.nodes, [onnx.helper.make_opsetid("", 18)])


def needs_written_body(op: OnnxOp) -> bool:
    """An op with a kernel that does not cover this node: decompose it all the same."""
    return op.OP_TYPE == "BatchNormalization" and bool(op.attr("training_mode"))


def written_body(op: OnnxOp) -> onnx.FunctionProto | None:
    """The body onnxc writes for this node, or None (none for its op, or inputs that do not
    fit it, e.g. optimizer inputs that do not form whole groups of tensors)."""
    if needs_written_body(op):
        return _batch_normalization_training(op)
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
