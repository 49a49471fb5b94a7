"""Input element types checked against the operator's schema while importing.

ONNX types every input with a type constraint: If's condition is tensor(bool),
Loop's trip count tensor(int64), Add's two inputs share one type T. A model that
breaks one is invalid, and onnxruntime refuses it when loading. Unchecked, the
mistake surfaced deep in code generation (an If on a float condition made invalid
LLVM IR) or compiled to something meaningless (a float trip count).
"""

from __future__ import annotations

import onnx
from xdsl.dialects.builtin import NoneType, TensorType, UnrankedTensorType
from xdsl.ir import SSAValue

from onnxc.dialects.types import onnx_type_of
from onnxc.errors import InvalidModelError

_OPTION = onnx.defs.OpSchema.FormalParameterOption


def check_input_types(node: onnx.NodeProto, schema: onnx.defs.OpSchema, inputs: list[SSAValue | None]) -> None:
    """Raise InvalidModelError naming `node` where an input's element type is not one its
    schema allows, or inputs that share a type parameter (homogeneous ones) differ."""
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    bound: dict[str, tuple[str, str]] = {}
    for position, value in enumerate(inputs):
        formal = _formal(schema, position)
        if value is None or formal is None or not isinstance(value.type, TensorType | UnrankedTensorType):
            continue
        if isinstance(value.type.element_type, NoneType):  # inferred after the import (a CastLike's)
            continue
        actual = f"tensor({onnx.TensorProto.DataType.Name(onnx_type_of(value.type.element_type)).lower()})"
        kinds = allowed.get(formal.type_str, {formal.type_str})
        where = f"input #{position} ('{formal.name}')"
        if actual not in kinds:
            raise InvalidModelError(
                f"{where} is a {actual}; {node.op_type} takes {' or '.join(sorted(kinds))} there",
                node=node.name,
                op_type=node.op_type,
            )
        if formal.option == _OPTION.Variadic and not formal.is_homogeneous:
            continue
        first = bound.setdefault(formal.type_str, (actual, where))
        if first[0] != actual:
            raise InvalidModelError(
                f"{where} is a {actual} but {first[1]} a {first[0]}: both are of type {formal.type_str}",
                node=node.name,
                op_type=node.op_type,
            )


def _formal(schema: onnx.defs.OpSchema, position: int) -> onnx.defs.OpSchema.FormalParameter | None:
    """The schema's parameter of input `position` (a variadic last one takes the rest)."""
    formals = schema.inputs
    if position < len(formals):
        return formals[position]
    if formals and formals[-1].option == _OPTION.Variadic:
        return formals[-1]
    return None
