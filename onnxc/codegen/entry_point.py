"""The library's exported functions (runtime/onnxc.h) around the graph function.

`run_main_graph` checks the counts and every tensor against the signature
before anything is read, reserves the GEMM scratch, allocates nothing else
(dynamic outputs aside) and calls the graph function; `onnxc_signature`
returns the signature JSON; `onnxc_abi_version` and `onnxc_free_tensor`.
The ABI's numbers come from onnxc.runtime.abi, as the runtime's do.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from llvmlite import ir
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType

from onnxc.codegen.gemm_plan import RESERVE_SCRATCH, MatmulPlan
from onnxc.codegen.llvm_idioms import constant_global, field_pointer
from onnxc.codegen.llvm_types import (
    I8,
    I32,
    I64,
    NULL,
    PTR,
    TENSOR,
    descriptor_type,
    has_run_time_dims,
    memref_nbytes,
    static_shape_of,
)
from onnxc.codegen.private_scratch import scratch_bytes
from onnxc.codegen.run_time_dims import evaluate
from onnxc.dialects.krnl import EntryPointOp, is_library_allocated
from onnxc.dialects.krnl_matmul import MatmulOp
from onnxc.dialects.symbolic import Dim
from onnxc.dialects.types import onnx_type_of
from onnxc.errors import CompileError
from onnxc.runtime.abi import ABI_VERSION, DTYPE_NAMES, MAX_DIM, Status, tensor_field

if TYPE_CHECKING:
    from onnxc.codegen.llvm import ModuleTranslator

_DATA, _SHAPE, _RANK, _DTYPE = (tensor_field(name) for name in ("data", "shape", "rank", "dtype"))


@dataclass
class TensorSpec:
    name: str
    memref: MemRefType
    batch: str | None = None
    """The batch symbol of a batch loop's batched tensor (its leading dim, 1 in `memref`)."""
    dims: list[str] = field(default_factory=list)
    """Each dim's symbolic expression ("" where static), if any dim is symbolic."""
    map_keys: list[int | str] = field(default_factory=list)
    """The keys of an output that is a sequence of maps (ZipMap), one per column."""
    sequence_axis: tuple[int, bool, int] | None = None
    """(axis, keepdims, size) of an output that is a sequence of run-time length: its slices."""

    @property
    def dtype(self) -> int:
        return onnx_type_of(self.memref.element_type)

    @property
    def dynamic(self) -> bool:
        """An output whose shape depends on input values: the library allocates it."""
        return is_library_allocated(self.memref)

    @property
    def shape(self) -> list[int]:
        """The signature's dims: -1 for a dim known at run time only, or the batch."""
        if self.dynamic or any(self.dims):
            return [max(d, -1) for d in self.memref.get_shape()]
        shape = static_shape_of(self.memref)
        return [-1, *shape[1:]] if self.batch else shape

    @property
    def sample_bytes(self) -> int:
        """Bytes of one sample of a batched tensor (the memref holds one)."""
        return memref_nbytes(self.memref)

    def signature(self) -> dict:
        entry = {"name": self.name, "dtype": DTYPE_NAMES[self.dtype], "shape": self.shape}
        if self.batch:
            entry["dims"] = [self.batch] + [""] * (len(self.shape) - 1)
        elif any(self.dims):
            entry["dims"] = self.dims
        if self.map_keys:
            entry["map_keys"] = self.map_keys
        if self.sequence_axis is not None:
            entry["sequence"] = dict(zip(("axis", "keepdims", "size"), self.sequence_axis))
        return entry | {"dynamic": True} if self.dynamic else entry


class EntryPointBuilder:
    """The exported functions of runtime/onnxc.h around the graph function."""

    def __init__(self, parent: ModuleTranslator, graph: func.FuncOp, entry: EntryPointOp):
        self.parent = parent
        self.module = parent.module
        self.graph = parent.module.globals[graph.sym_name.data]
        input_names = [n.data for n in entry.input_names.data]
        output_names = [n.data for n in entry.output_names.data]
        arg_types = list(graph.function_type.inputs.data)
        if len(arg_types) != len(input_names) + len(output_names) or not all(
            isinstance(t, MemRefType) for t in arg_types
        ):
            raise CompileError(
                f"codegen: @{graph.sym_name.data} must take {len(input_names)} input and "
                f"{len(output_names)} output memrefs"
            )
        symbol = entry.batch_symbol.data if entry.batch_symbol is not None else None
        batched = [flag.value.data for flag in entry.batched_inputs.data] if entry.batched_inputs else []
        dims = entry.dim_expressions() or [[] for _ in arg_types]
        self.checks = entry.dim_checks()
        self.inputs = [
            TensorSpec(n, t, symbol if batched and batched[k] else None, dims[k])
            for k, (n, t) in enumerate(zip(input_names, arg_types))
        ]
        output_types = arg_types[len(input_names) :]
        self.outputs = [
            TensorSpec(n, t, symbol, dims[len(input_names) + k], keys, axis)
            for k, (n, t, keys, axis) in enumerate(
                zip(output_names, output_types, entry.output_map_keys(), entry.output_sequence_axes())
            )
        ]
        if symbol and any(spec.dynamic for spec in self.outputs):
            raise CompileError("codegen: a batch loop cannot return outputs of value-dependent shape")
        if symbol and any(spec.memref.get_shape()[:1] != (1,) for spec in self.outputs):
            raise CompileError("codegen: a batch loop's outputs must each hold one sample (a leading dim of 1)")

    def build(self) -> None:
        self.build_run_main_graph()
        self.build_signature()
        self.build_abi_version()
        self.build_free_tensor()

    def exported(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.IRBuilder:
        fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
        fn.attributes.add("nounwind")
        return ir.IRBuilder(fn.append_basic_block("entry"))

    def build_run_main_graph(self) -> None:
        """Check the counts and every tensor (see onnxc.h), then run the graph function."""
        b = self.builder = self.exported("run_main_graph", I32, [PTR, I64, PTR, I64])
        self.failures: dict[Status, ir.Block] = {}
        inputs, num_inputs, outputs, num_outputs = b.function.args
        if self.parent.profiler:
            self.parent.profiler.start_run(self.parent, b)
        self.fail_unless_equal(num_inputs, len(self.inputs), Status.ERR_ARITY)
        self.fail_unless_equal(num_outputs, len(self.outputs), Status.ERR_ARITY)
        arguments = []
        self.batch_size: ir.Value | None = None
        self.symbolic_dims: list[tuple[ir.Value, Dim]] = []
        for array, specs in ((inputs, self.inputs), (outputs, self.outputs)):
            if specs:
                self.fail_if(b.icmp_unsigned("==", array, NULL), Status.ERR_NULL)
            for index, spec in enumerate(specs):
                arguments.append(None if spec.dynamic else self.check_tensor(array, index, spec))
        self.check_symbolic_dims()
        dynamic = [index for index, spec in enumerate(self.outputs) if spec.dynamic]
        for index in dynamic:  # not checked: the library fills in every field
            spec = self.outputs[index]
            tensor = b.gep(outputs, [ir.Constant(I64, index)], inbounds=True, source_etype=TENSOR)
            fields = [NULL, NULL, ir.Constant(I64, len(spec.shape)), ir.Constant(I32, spec.dtype), ir.Constant(I32, 0)]
            for number, value in enumerate(fields):
                b.store(value, field_pointer(b, tensor, TENSOR, number))
            arguments[len(self.inputs) + index] = tensor
        self.reserve_scratch()
        if self.batch_size is not None:
            b.ret(self.call_per_sample(arguments))
        else:
            status = b.call(self.graph, arguments)
            if dynamic:  # on failure, no dynamic output keeps memory: each is reset to NULL
                with b.if_then(b.icmp_unsigned("!=", status, ir.Constant(I32, int(Status.OK))), likely=False):
                    for index in dynamic:
                        tensor = b.gep(outputs, [ir.Constant(I64, index)], inbounds=True, source_etype=TENSOR)
                        self.release(b, tensor)
            b.ret(status)

        for status, block in self.failures.items():
            b.position_at_end(block)
            b.ret(ir.Constant(I32, int(status)))

    def call_per_sample(self, data: list[ir.Value]) -> ir.Value:
        """A batch loop: call the graph function once per sample, each batched tensor's
        data advanced by one sample per call; stop at the first failing sample."""
        b = self.builder
        specs = [*self.inputs, *self.outputs]
        head, loop, done = b.block, b.append_basic_block("sample"), b.append_basic_block("samples.done")
        b.cbranch(b.icmp_signed(">", self.batch_size, ir.Constant(I64, 0)), loop, done)
        b.position_at_end(loop)
        sample = b.phi(I64, "sample.index")
        sample.add_incoming(ir.Constant(I64, 0), head)
        arguments = [
            b.gep(pointer, [b.mul(sample, ir.Constant(I64, spec.sample_bytes), flags=["nsw"])], source_etype=I8)
            if spec.batch
            else pointer
            for pointer, spec in zip(data, specs)
        ]
        status = b.call(self.graph, arguments)
        with b.if_then(b.icmp_unsigned("!=", status, ir.Constant(I32, int(Status.OK))), likely=False):
            b.ret(status)
        next_sample = b.add(sample, ir.Constant(I64, 1), flags=["nsw"])
        sample.add_incoming(next_sample, b.block)
        b.cbranch(b.icmp_signed("<", next_sample, self.batch_size), loop, done)
        b.position_at_end(done)
        return ir.Constant(I32, int(Status.OK))

    def reserve_scratch(self) -> None:
        """Have the runtime reserve the calling thread's scratch, for GEMM packing (see gemm.py) and
        krnl.thread_scratch buffers (private_scratch.py); ERR_NOMEM if it cannot."""
        target = self.parent.target
        plans = (MatmulPlan.of(op, target) for op in self.parent.source.walk() if isinstance(op, MatmulOp))
        needed = max(max((plan.scratch_bytes for plan in plans), default=0), scratch_bytes(self.parent.source.walk()))
        if needed:
            reserve = self.parent.declare(RESERVE_SCRATCH, I32, [I64])
            status = self.builder.call(reserve, [ir.Constant(I64, needed)])
            self.fail_if(self.builder.icmp_signed("!=", status, ir.Constant(I32, 0)), Status.ERR_NOMEM)

    def release(self, b: ir.IRBuilder, tensor: ir.Value) -> None:
        """Free a dynamic output's block (its shape pointer; free(NULL) is harmless) and NULL its pointers."""
        shape_field = field_pointer(b, tensor, TENSOR, _SHAPE)
        b.call(self.parent.declare("free", ir.VoidType(), [PTR]), [b.load(shape_field, typ=PTR)])
        b.store(NULL, shape_field)
        b.store(NULL, field_pointer(b, tensor, TENSOR, _DATA))

    def build_free_tensor(self) -> None:
        """void onnxc_free_tensor(onnxc_tensor *): release a dynamic output (NULL or already freed: no-op)."""
        b = self.exported("onnxc_free_tensor", ir.VoidType(), [PTR])
        (tensor,) = b.function.args
        with b.if_then(b.icmp_unsigned("!=", tensor, NULL)):
            self.release(b, tensor)
        b.ret_void()

    def fail_if(self, condition: ir.Value, status: Status) -> None:
        """Return `status` if `condition` holds, else go on in a new block."""
        b = self.builder
        if status not in self.failures:
            self.failures[status] = b.function.append_basic_block(f"fail.{status.name.lower()}")
        passed = b.function.append_basic_block("checked")
        b.cbranch(condition, self.failures[status], passed)
        b.position_at_end(passed)

    def fail_unless_equal(self, actual: ir.Value, expected: int, status: Status) -> None:
        differs = self.builder.icmp_signed("!=", actual, ir.Constant(actual.type, expected))
        self.fail_if(differs, status)

    def check_tensor(self, array: ir.Value, index: int, spec: TensorSpec) -> ir.Value:
        """Compare tensor `array[index]` with `spec`; return its data pointer."""
        b = self.builder

        def field(number: int, ty: ir.Type, align: int) -> ir.Value:
            indices = [ir.Constant(I64, index), ir.Constant(I32, number)]
            address = b.gep(array, indices, inbounds=True, source_etype=TENSOR)
            return b.load(address, typ=ty, align=align)

        data, shape = field(_DATA, PTR, 8), field(_SHAPE, PTR, 8)
        self.fail_if(b.icmp_unsigned("==", data, NULL), Status.ERR_NULL)
        self.fail_if(b.icmp_unsigned("==", shape, NULL), Status.ERR_NULL)
        self.fail_unless_equal(field(_DTYPE, I32, 4), spec.dtype, Status.ERR_DTYPE)
        self.fail_unless_equal(field(_RANK, I64, 8), len(spec.shape), Status.ERR_RANK)
        descriptor_fields = [data]
        for axis, dim in enumerate(spec.shape):
            pointer = b.gep(shape, [ir.Constant(I64, axis)], inbounds=True, source_etype=I64)
            actual = b.load(pointer, typ=I64, align=8)
            if spec.batch and axis == 0:
                self.check_batch_size(actual)
            elif spec.dims and spec.dims[axis]:
                self.symbolic_dims.append((actual, Dim.parse(spec.dims[axis])))
                descriptor_fields.append(actual)
            else:
                self.fail_unless_equal(actual, dim, Status.ERR_SHAPE)
        if not has_run_time_dims(spec.memref):
            return data
        descriptor = ir.Constant(descriptor_type(spec.memref), ir.Undefined)
        for position, value in enumerate(descriptor_fields):
            descriptor = b.insert_value(descriptor, value, position)
        return descriptor

    def check_symbolic_dims(self) -> None:
        """Bind each symbol to the first input dim that is that symbol alone, within
        [0, MAX_DIM]; then every symbolic dim of every tensor must equal its
        expression's value (ERR_SHAPE): tensors sharing a symbol agree."""
        b = self.builder
        symbols: dict[str, ir.Value] = {}
        for actual, dim in self.symbolic_dims:
            name = str(dim)
            if name in dim.symbols() and name not in symbols:  # the symbol alone
                too_small = b.icmp_signed("<", actual, ir.Constant(I64, 0))
                too_large = b.icmp_signed(">", actual, ir.Constant(I64, MAX_DIM))
                self.fail_if(b.or_(too_small, too_large), Status.ERR_SHAPE)
                symbols[name] = actual
        for actual, dim in self.symbolic_dims:
            unbound = dim.symbols() - symbols.keys()
            if unbound:
                raise CompileError(f"codegen: the symbolic dims {sorted(unbound)} are no input's dim")
            expected = evaluate(b, dim, symbols.__getitem__)
            self.fail_if(b.icmp_signed("!=", actual, expected), Status.ERR_SHAPE)
        for check in self.checks:  # what the nodes need of the dims (symbolic.DimCheck)
            unbound = (check.lhs.symbols() | check.rhs.symbols()) - symbols.keys()
            if unbound:
                raise CompileError(f"codegen: the symbolic dims {sorted(unbound)} are no input's dim")
            lhs, rhs = (evaluate(b, d, symbols.__getitem__) for d in (check.lhs, check.rhs))
            self.fail_if(b.icmp_signed("!=" if check.relation == "==" else "<", lhs, rhs), Status.ERR_SHAPE)

    def check_batch_size(self, size: ir.Value) -> None:
        """The first batched tensor sets the batch size; every other must agree (ERR_SHAPE)."""
        b = self.builder
        if self.batch_size is None:
            too_small = b.icmp_signed("<", size, ir.Constant(I64, 0))
            self.fail_if(b.or_(too_small, b.icmp_signed(">", size, ir.Constant(I64, MAX_DIM))), Status.ERR_SHAPE)
            self.batch_size = size
        else:
            self.fail_if(b.icmp_signed("!=", size, self.batch_size), Status.ERR_SHAPE)

    def build_signature(self) -> None:
        sites = self.parent.index_sites
        document = (
            json.dumps(
                {
                    "abi_version": ABI_VERSION,
                    "model": self.parent.model_name,
                    "target": self.parent.target.triple,
                    "byte_order": self.parent.target.byte_order,
                    "inputs": [spec.signature() for spec in self.inputs],
                    "outputs": [spec.signature() for spec in self.outputs],
                    **({"checks": [c.strings() for c in self.checks]} if self.checks else {}),
                    **({"index_sites": [[c.node.data, c.op_type.data] for c in sites]} if sites else {}),
                }
                | ({"profile": self.parent.profiler.signature()} if self.parent.profiler else {})
            ).encode()
            + b"\0"
        )
        text_type = ir.ArrayType(I8, len(document))
        text = constant_global(self.module, "onnxc_signature_json", text_type)
        text.initializer = ir.Constant(text_type, bytearray(document))
        text.linkage = "private"
        text.unnamed_addr = True
        b = self.exported("onnxc_signature", PTR, [])
        b.ret(text)

    def build_abi_version(self) -> None:
        b = self.exported("onnxc_abi_version", I32, [])
        b.ret(ir.Constant(I32, ABI_VERSION))
