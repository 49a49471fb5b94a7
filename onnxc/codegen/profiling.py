"""Per-kernel timestamps for `onnxc --profile`: which ONNX nodes each kernel computes, and the calls timing it.

A profiled library times every kernel call of the graph function (each
top-level loop nest, outlined into a function by outlining.py) between
`onnxc_profile_now()` and `onnxc_profile_record(kernel, start)` of
runtime/support/onnxc_profile.c. A kernel maps back to ONNX nodes through
the locations of the ops in its nest: lowering gives every op its node's name
(passes/onnx_to_krnl/common.py), so a nest of element-wise ops fused into one
loop names all of them, and a node lowered into several nests (padding,
packing, the GEMM) has several kernels. What each node is (op type, shapes,
FLOPs) is read on the `onnx` level, before lowering (`node_records`). Both go
into the signature's "profile" entry, which runtime/profiling.py reads.

Ops a kernel absorbs without a loop of their own (a Relu or residual Add in
the GEMM epilogue) leave no location in it: they are named with the kernels of
their latest producer (`KernelProfiler.absorbed`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import onnx
from llvmlite import ir
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, NameLoc, TensorType
from xdsl.ir import Operation

from onnxc.codegen.llvm_idioms import PARALLEL_FOR
from onnxc.codegen.llvm_types import I32, I64
from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import dim_params
from onnxc.tools.flops import node_flops

if TYPE_CHECKING:
    from onnxc.codegen.llvm import ModuleTranslator

START_RUN, NOW, RECORD = "onnxc_profile_start_run", "onnxc_profile_now", "onnxc_profile_record"


def node_records(module: ModuleOp) -> dict[str, dict]:
    """Each ONNX node of the graph functions by name, in graph order: op type, FLOPs
    (None where dims are symbolic), its inputs' and outputs' dims (a symbolic dim by
    name) and the nodes whose results it reads ("producers"). Constants are no nodes
    here: they run no code, and initializers, located by their own names, may share
    a node's name."""
    records: dict[str, dict] = {}
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        for op in function.body.block.ops:
            if isinstance(op, OnnxOp) and op.OP_TYPE != "Constant" and op.node_name and op.node_name not in records:
                records[op.node_name] = {
                    "op_type": op.OP_TYPE,
                    "flops": _flops(op),
                    "inputs": [_dims(v.type) for v in op.operands],
                    "outputs": [_dims(v.type) for v in op.results],
                    "producers": [p for p in dict.fromkeys(map(_producer, op.operands)) if p],
                }
    return records


def _producer(value) -> str:
    owner = value.owner
    return owner.node_name if isinstance(owner, OnnxOp) and owner.OP_TYPE != "Constant" else ""


def _dims(t) -> list[int | str] | None:
    if not isinstance(t, TensorType):
        return None
    return [param if dim < 0 else dim for dim, param in zip(t.get_shape(), dim_params(t))]


def _flops(op: OnnxOp) -> int | None:
    """onnxc.tools.flops's count for `op`, through a NodeProto standing in for it."""
    shapes = {f"in{k}": _dims(v.type) for k, v in enumerate(op.operands)}
    shapes |= {f"out{k}": _dims(v.type) for k, v in enumerate(op.results)}
    attributes = {name: op.attr(name) for name in ("kernel_shape", "transA") if name in op.ATTR_TYPES}
    node = onnx.helper.make_node(op.OP_TYPE, list(shapes)[: len(op.operands)], list(shapes)[len(op.operands) :],
                                 **{k: v for k, v in attributes.items() if v is not None})  # fmt: skip

    def static_shape(name: str) -> list[int] | None:
        dims = shapes.get(name)
        return dims if dims is not None and all(isinstance(d, int) for d in dims) else None

    return node_flops(node, static_shape)


def _reaches_thread_pool(instructions: list[ir.Instruction], depth: int = 2) -> bool:
    """Whether these instructions, or the functions they call (`depth` calls deep), hand work
    to the thread pool: an outlined parallel nest, or a GEMM splitting its tiles."""
    callees = [i.callee for i in instructions if isinstance(i, ir.CallInstr) and isinstance(i.callee, ir.Function)]
    if any(callee.name == PARALLEL_FOR for callee in callees):
        return True
    return depth > 0 and any(
        _reaches_thread_pool([i for block in callee.blocks for i in block.instructions], depth - 1)
        for callee in callees
        if callee.blocks
    )


class KernelProfiler:
    """Numbers the kernels of a profiled library as their calls are emitted, and times each call."""

    def __init__(self, nodes: dict[str, dict]):
        self.nodes = nodes
        self.kernels: list[dict] = []

    @contextmanager
    def timed(self, parent: ModuleTranslator, builder: ir.IRBuilder, nest: Operation, kernel: str) -> Iterator[None]:
        """Time what is emitted inside the block as one call of `kernel`, computing `nest`."""
        number = len(self.kernels)
        entry = {"name": kernel, "nodes": self.nodes_of(nest), "parallel": False}
        self.kernels.append(entry)
        start = builder.call(parent.declare(NOW, I64, []), [])
        yield
        emitted = builder.block.instructions[builder.block.instructions.index(start) + 1 :]
        entry["parallel"] = _reaches_thread_pool(emitted)
        builder.call(parent.declare(RECORD, ir.VoidType(), [I32, I64]), [ir.Constant(I32, number), start])

    def nodes_of(self, nest: Operation) -> list[str]:
        """The ONNX nodes whose ops are in `nest`, in the order they first appear."""
        names = (op.location.desc.data for op in nest.walk() if isinstance(op.location, NameLoc))
        return list(dict.fromkeys(name for name in names if name in self.nodes))

    def start_run(self, parent: ModuleTranslator, builder: ir.IRBuilder) -> None:
        """Emit the call that begins a run's log (at the top of run_main_graph)."""
        builder.call(parent.declare(START_RUN, ir.VoidType(), []), [])

    def signature(self) -> dict:
        """The signature's "profile" entry: the kernels by number and the nodes they compute."""
        absorbed = self.absorbed()
        kernels = [
            kernel | {"nodes": kernel["nodes"] + [n for n, owner in absorbed.items() if owner in kernel["nodes"]]}
            for kernel in self.kernels
        ]
        used = dict.fromkeys(name for kernel in kernels for name in kernel["nodes"])
        return {"clock": "CLOCK_MONOTONIC", "kernels": kernels, "nodes": {n: self.nodes[n] for n in used}}

    def absorbed(self) -> dict[str, str]:
        """Nodes that compute something but no kernel names -> the node whose kernels compute them.

        A Relu, residual Add or BatchNormalization in a GEMM epilogue leaves no op
        of its own: it is computed where its latest producer is (the Conv or Gemm,
        or a node that was itself absorbed into one). Data movement without a loop
        (a Reshape that is a view) computes nothing and is left out.
        """
        order = {name: index for index, name in enumerate(self.nodes)}
        owner = {name: name for kernel in self.kernels for name in kernel["nodes"]}
        absorbed = {}
        for name, record in self.nodes.items():
            if name in owner or record["flops"] == 0:
                continue
            producers = sorted((p for p in record["producers"] if p in owner), key=order.__getitem__)
            if producers:
                owner[name] = absorbed[name] = owner[producers[-1]]
        return absorbed
