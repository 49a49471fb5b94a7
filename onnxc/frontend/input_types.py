"""The types a model declares: graph inputs (static, pinned by --shape, or symbolic
dims, every unknown spelling a fresh symbol) and other values' declared types."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import onnx
from xdsl.dialects.builtin import DYNAMIC_INDEX, NoneType, TensorType, UnrankedTensorType
from xdsl.ir import Attribute

from onnxc.dialects.symbolic import symbol_name
from onnxc.dialects.types import element_type_of_onnx, numpy_dtype_of, symbolic_tensor_type
from onnxc.errors import InvalidModelError, ShapeError, UnsupportedOpError
from onnxc.frontend.tensors import check_tensor_size

UNKNOWN_TYPE = UnrankedTensorType(NoneType())


def input_type(vi: onnx.ValueInfoProto, shapes: Mapping[str, Sequence[int]]) -> TensorType:
    """A graph input's type: its dims static, pinned by `shapes` (--shape), or symbols."""
    ttype = _declared_input_type(vi, shapes)
    if DYNAMIC_INDEX not in ttype.get_shape():
        itemsize = numpy_dtype_of(ttype.get_element_type()).itemsize
        check_tensor_size(ttype.get_shape(), itemsize, f"graph input '{vi.name}'")
    return ttype


def _declared_input_type(vi: onnx.ValueInfoProto, shapes: Mapping[str, Sequence[int]]) -> TensorType:
    value_type = vi.type
    if value_type.HasField("optional_type"):  # present: the caller passes its tensor
        value_type = value_type.optional_type.elem_type
    if not value_type.HasField("tensor_type"):
        raise UnsupportedOpError(
            f"graph input '{vi.name}' is not a tensor (sequence inputs are expanded into tensors by "
            "onnxc.backend only; maps are not supported)"
        )
    tensor_type = value_type.tensor_type
    element = element_type(tensor_type.elem_type, f"graph input '{vi.name}'")
    if not tensor_type.HasField("shape"):
        if vi.name in shapes:
            return TensorType(element, list(shapes[vi.name]))
        raise ShapeError(f"graph input '{vi.name}' has no shape; pin it with --shape {vi.name}=D0,D1,...")
    dims, params = [], []
    for axis, dim in enumerate(tensor_type.shape.dim):
        if dim.HasField("dim_value") and dim.dim_value != -1:  # paddle2onnx writes -1 for unknown
            if dim.dim_value < 0:
                raise InvalidModelError(f"graph input '{vi.name}' has a negative dimension {dim.dim_value}")
            dims.append(dim.dim_value)
            params.append("")
            continue
        symbol = symbol_name(dim.dim_param, fresh_symbol(vi.name, axis))
        pinned_symbol = shapes.get(symbol)
        if pinned_symbol is not None and len(pinned_symbol) == 1 and vi.name not in shapes:
            dims.append(int(pinned_symbol[0]))
            params.append("")
        else:
            dims.append(DYNAMIC_INDEX)
            params.append(symbol)
    if vi.name in shapes:
        pinned = list(shapes[vi.name])
        if len(pinned) != len(dims) or any(d != DYNAMIC_INDEX and d != p for d, p in zip(dims, pinned)):
            raise ShapeError(
                f"--shape {vi.name}={','.join(map(str, pinned))} does not fit the declared shape "
                f"{_dims_text(dims, params)}"
            )
        return TensorType(element, pinned)
    return symbolic_tensor_type(element, dims, params)


def element_type(onnx_type: int, what: str) -> Attribute:
    element = element_type_of_onnx(onnx_type)
    if element is None:
        type_name = (
            onnx.TensorProto.DataType.Name(onnx_type)
            if onnx_type in onnx.TensorProto.DataType.values()
            else str(onnx_type)
        )
        raise UnsupportedOpError(f"{what} has element type {type_name}, which is not supported")
    return element


def declared_type_of(declared: onnx.TypeProto | None) -> Attribute:
    """The type a model declares for a value (UNKNOWN_TYPE if none): refined by shape inference."""
    if declared is not None and declared.HasField("tensor_type"):
        element = element_type_of_onnx(declared.tensor_type.elem_type)
        if element is not None:
            if declared.tensor_type.HasField("shape"):
                dims = [
                    d.dim_value if d.HasField("dim_value") else DYNAMIC_INDEX for d in declared.tensor_type.shape.dim
                ]
                return TensorType(element, dims)
            return UnrankedTensorType(element)
    return UNKNOWN_TYPE


def fresh_symbol(input_name: str, axis: int) -> str:
    """The symbol of an input dim the model leaves unnamed (-1, "", "?"): `<input>_d<axis>`."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", input_name)
    return f"{stem if stem[:1].isalpha() else 'in_' + stem}_d{axis}"


def _dims_text(dims: Sequence[int], params: Sequence[str]) -> str:
    return "[" + ", ".join(p if d == DYNAMIC_INDEX else str(d) for d, p in zip(dims, params)) + "]"
