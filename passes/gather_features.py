"""gather-features: an ArrayFeatureExtractor of 1-D data whose result is only reshaped
back to its indices' shape (through Casts or not) becomes a Gather.

ArrayFeatureExtractor of data [M] gives [1, K] for any indices of K elements;
skl2onnx's kNN models look labels up that way ([M] labels at the [N, k] nearest
rows, classes at the [N] best scores) and Reshape the result to [-1, k] or [-1]
right after. Gather(data, indices) is that result, without an intermediate that
folds the batch N into another dim, which kept these models from compiling for a
symbolic batch (batch_separable.py). Needs types: runs after shape-inference.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.graph import (
    constant_array,
    erase_dead,
    infer_new_ops,
    insert_before,
    make_op,
    rewrite_and_infer,
    single_use,
)


@dataclass(frozen=True)
class GatherFeaturesPass(ModulePass):
    name = "gather-features"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_and_infer(op, "ArrayFeatureExtractor", gather_features)  # the Casts after take the indices' shape


def gather_features(extractor: OnnxOp, opset: int) -> bool:
    """Rewrite `extractor` and its chain if it has the form above; whether it did."""
    data, indices = extractor.input(0), extractor.input(1)
    if (
        not (isinstance(data.type, TensorType) and isinstance(indices.type, TensorType))
        or data.type.get_num_dims() != 1
    ):
        return False
    chain, value = [], extractor.results[0]
    while single_use(value):
        user = value.first_use.operation
        if not isinstance(user, OnnxOp) or user.OP_TYPE not in ("Cast", "Reshape") or user.input(0) is not value:
            return False
        chain.append(user)
        value = user.results[0]
        if user.OP_TYPE == "Reshape":
            break
    else:
        return False
    target = constant_array(chain[-1].input(1)) if chain and chain[-1].OP_TYPE == "Reshape" else None
    rest = list(indices.type.get_shape())[1:]
    if target is None or target.ndim != 1 or len(target) != len(rest) + 1 or target[0] != -1:
        return False
    if indices.type.get_num_dims() == 0 or [int(d) for d in target[1:]] != rest or any(d <= 0 for d in rest):
        return False  # the reshape is [-1, *the indices' other dims]: its result has their shape
    gather = make_op("Gather", [data, indices], {}, extractor.node_name)
    insert_before(extractor, [gather])
    infer_new_ops([gather], opset)
    result = gather.results[0]
    for cast in chain[:-1]:  # the same Casts, on the gathered values
        copy = make_op("Cast", [result], {"to": cast.attributes["to"]}, cast.node_name)
        insert_before(chain[-1], [copy])
        infer_new_ops([copy], opset)
        result = copy.results[0]
    value.replace_all_uses_with(result)
    erase_dead(chain[-1])
    return True
