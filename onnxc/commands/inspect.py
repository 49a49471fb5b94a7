"""`onnxc inspect MODEL.onnx [--json]`: what is in a model and what onnxc makes of it —
ops (count, opset, supported or not and why, FLOPs), parameters, inputs and
outputs with their shapes (symbolic dims by name), external-data files."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
import onnx.shape_inference
from onnx import helper

from onnxc.commands.compile import add_shape_option
from onnxc.errors import ShapeError
from onnxc.frontend.importer import load_model, model_opset
from onnxc.tools.flops import COUNTING_RULE, node_flops
from onnxc.tools.support import op_support


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="onnxc inspect",
        description="Summarize a model: ops (count, opset, supported by onnxc or not and why, FLOPs), "
        "parameter bytes, inputs and outputs with shapes, external-data files. " + COUNTING_RULE,
    )
    parser.add_argument("model", help="the .onnx model file")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_shape_option(parser, "pin an input's symbolic dims to count FLOPs, e.g. --shape input=1,3,224,224 (repeatable)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    summary = inspect_model(args.model, shapes=dict(args.shape))
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))
    return 0


def inspect_model(
    model: onnx.ModelProto | str | os.PathLike, shapes: Mapping[str, Sequence[int]] | None = None
) -> dict:
    """The summary `onnxc inspect` prints, as JSON-ready data."""
    proto, base_dir, name = load_model(model)
    proto = _pinned(proto, dict(shapes or {}))
    try:
        inferred = onnx.shape_inference.infer_shapes(_initializers_as_inputs(proto), data_prop=True)
    except (onnx.shape_inference.InferenceError, RuntimeError):
        inferred = proto  # inconsistent shapes: report what the file declares
    graph = inferred.graph
    types = {vi.name: vi.type for vi in [*graph.input, *graph.value_info, *graph.output]}
    types.update({t.name: helper.make_tensor_type_proto(t.data_type, t.dims) for t in graph.initializer})
    opset = model_opset(proto)
    opsets = {o.domain or "ai.onnx": o.version for o in proto.opset_import}

    def static_shape(value: str) -> list[int] | None:
        shape = _shape(types.get(value))
        return shape if shape is not None and all(isinstance(d, int) for d in shape) else None

    ops: dict[tuple[str, str], dict] = {}
    unknown_flops = 0
    for node in graph.node:
        row = ops.get((node.domain, node.op_type))
        if row is None:
            domain_opset = opsets.get(node.domain or "ai.onnx", opset)
            support = op_support(node.op_type, node.domain, domain_opset)
            row = ops[(node.domain, node.op_type)] = {
                "op_type": node.op_type,
                "domain": node.domain or "ai.onnx",
                "opset": domain_opset,
                "count": 0,
                "supported": support.supported,
                "reason": support.reason,
                "flops": 0,
            }
        row["count"] += 1
        flops = node_flops(node, static_shape)
        if flops is None:
            unknown_flops += 1
            row["flops"] = None
        elif row["flops"] is not None:
            row["flops"] += flops
    initializer_names = {t.name for t in graph.initializer}
    counted = [row["flops"] for row in ops.values() if row["flops"] is not None]
    return {
        "model": name,
        "ir_version": proto.ir_version,
        "producer": " ".join(filter(None, [proto.producer_name, proto.producer_version])),
        "opsets": opsets,
        "inputs": [_value(vi.name, types.get(vi.name)) for vi in proto.graph.input if vi.name not in initializer_names],
        "outputs": [_value(vi.name, types.get(vi.name)) for vi in graph.output],
        "ops": sorted(ops.values(), key=lambda row: (row["flops"] is None, -(row["flops"] or 0), row["op_type"])),
        "nodes": len(graph.node),
        "unsupported_ops": sorted(row["op_type"] for row in ops.values() if not row["supported"]),
        "parameters": _parameters(proto),
        "flops": {"total": sum(counted), "nodes_without_count": unknown_flops, "rule": COUNTING_RULE},
        "external_data": _external_files(proto, base_dir),
    }


def _pinned(proto: onnx.ModelProto, shapes: dict[str, Sequence[int]]) -> onnx.ModelProto:
    """A copy of `proto` whose inputs named in `shapes` have those static dims."""
    if not shapes:
        return proto
    inputs = {vi.name: vi for vi in proto.graph.input}
    unknown = sorted(set(shapes) - set(inputs))
    if unknown:
        raise ShapeError(f"--shape names unknown inputs {unknown}; inputs are {sorted(inputs)}")
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    for vi in copy.graph.input:
        if vi.name in shapes:
            tensor = vi.type.tensor_type
            if tensor.HasField("shape") and len(tensor.shape.dim) != len(shapes[vi.name]):
                raise ShapeError(
                    f"--shape {vi.name} has rank {len(shapes[vi.name])}, the input {len(tensor.shape.dim)}"
                )
            tensor.shape.Clear()
            for dim in shapes[vi.name]:
                tensor.shape.dim.add().dim_value = dim
    return copy


def _initializers_as_inputs(proto: onnx.ModelProto) -> onnx.ModelProto:
    """Before IR version 4 initializers had to be graph inputs too, and ONNX shape
    inference ignores those that are not: a copy where every one is."""
    listed = {vi.name for vi in proto.graph.input}
    missing = [t for t in proto.graph.initializer if t.name not in listed]
    if proto.ir_version >= 4 or not missing:
        return proto
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    copy.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, t.dims) for t in missing)
    return copy


def _shape(type_proto: onnx.TypeProto | None) -> list[int | str] | None:
    """Dims as ints, symbolic dims by name ("?" when unnamed); None when the rank is unknown."""
    if type_proto is None or not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    dims = type_proto.tensor_type.shape.dim
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims]


def _value(name: str, type_proto: onnx.TypeProto | None) -> dict:
    element = "?"
    if type_proto is not None and type_proto.HasField("tensor_type") and type_proto.tensor_type.elem_type:
        element = helper.tensor_dtype_to_np_dtype(type_proto.tensor_type.elem_type).name
    elif type_proto is not None and type_proto.WhichOneof("value"):
        element = type_proto.WhichOneof("value")  # sequence_type, map_type, ...
    return {"name": name, "dtype": element, "shape": _shape(type_proto)}


def _tensor_bytes(tensor: onnx.TensorProto) -> int:
    """Bytes of a tensor's data from its dims and type (its data need not be loaded)."""
    if tensor.data_type == onnx.TensorProto.STRING:
        return sum(len(s) for s in tensor.string_data)
    itemsize = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    return int(np.prod(tensor.dims, dtype=np.int64)) * itemsize


def _parameters(proto: onnx.ModelProto) -> dict:
    """Initializers and the tensors of Constant nodes: how many elements, how many bytes."""
    tensors = list(proto.graph.initializer)
    for node in proto.graph.node:
        if node.op_type == "Constant":
            tensors += [attr.t for attr in node.attribute if attr.type == onnx.AttributeProto.TENSOR]
    return {
        "tensors": len(tensors),
        "elements": sum(int(np.prod(t.dims, dtype=np.int64)) for t in tensors),
        "bytes": sum(_tensor_bytes(t) for t in tensors),
    }


def _external_files(proto: onnx.ModelProto, base_dir: Path | None) -> list[dict]:
    files: dict[str, dict] = {}
    for tensor in proto.graph.initializer:
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        location = {entry.key: entry.value for entry in tensor.external_data}.get("location", "")
        entry = files.setdefault(location, {"file": location, "tensors": 0, "bytes": 0, "exists": None})
        entry["tensors"] += 1
        entry["bytes"] += _tensor_bytes(tensor)
        if base_dir is not None:
            entry["exists"] = (base_dir / location).is_file()
    return list(files.values())


def format_summary(summary: dict) -> str:
    opsets = ", ".join(f"{domain} {version}" for domain, version in summary["opsets"].items())
    lines = [f"model: {summary['model']} (IR {summary['ir_version']}, opsets: {opsets}; {summary['producer'] or '?'})"]
    for title in ("inputs", "outputs"):
        lines.append(f"{title}:")
        for value in summary[title]:
            shape = "[" + ", ".join(map(str, value["shape"])) + "]" if value["shape"] is not None else "unknown shape"
            lines.append(f"  {value['name']}: {value['dtype']} {shape}")
    rows = [("op", "count", "opset", "supported", "FLOPs", "why")]
    for row in summary["ops"]:
        op = row["op_type"] if row["domain"] == "ai.onnx" else f"{row['domain']}.{row['op_type']}"
        flops = _si(row["flops"]) if row["flops"] is not None else "?"
        supported = "yes" if row["supported"] else "NO"
        rows.append((op, str(row["count"]), str(row["opset"]), supported, flops, row["reason"]))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines.append(f"ops ({summary['nodes']} nodes):")
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    params = summary["parameters"]
    lines.append(
        f"parameters: {params['elements']:,} elements in {params['tensors']} tensors, {_bytes(params['bytes'])}"
    )
    flops = summary["flops"]
    missing = flops["nodes_without_count"]
    note = f" ({missing} nodes without a count: pin symbolic dims with --shape)" if missing else ""
    lines.append(f"FLOPs: {_si(flops['total'])} total{note}")
    if summary["external_data"]:
        lines.append("external data:")
        for entry in summary["external_data"]:
            state = {True: "", False: " (MISSING)", None: ""}[entry["exists"]]
            lines.append(f"  {entry['file']}: {entry['tensors']} tensors, {_bytes(entry['bytes'])}{state}")
    else:
        lines.append("external data: none")
    if summary["unsupported_ops"]:
        lines.append(f"not supported: {', '.join(summary['unsupported_ops'])}")
    return "\n".join(lines)


def _si(value: int) -> str:
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return str(value)


def _bytes(value: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if value >= scale:
            return f"{value / scale:.1f} {unit}"
    return f"{value} bytes"
