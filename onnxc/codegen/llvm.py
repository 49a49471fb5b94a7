"""Translate loop-level IR (docs/design.md, "Level 3") directly into an `llvmlite.ir.Module`.

The module translator lays out the weights and hands each function to its
parts: graph functions and their outlined kernels (outlining.py), whose ops
go through the emitters (function_translator.py, emit_memory.py,
emit_arith.py; krnl.matmul through gemm.py), with scratch memory in an arena
(arena.py); then the exported functions of runtime/onnxc.h (entry_point.py).
Constants (`krnl.global`) live at offsets in one external hidden symbol
defined by the weights object (`weights.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llvmlite import ir
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

# The emitter modules register their ops' emitters (function_translator.EMITTERS) as they are imported.
from onnxc.codegen import emit_arith, emit_checks, emit_growth, emit_memory, emit_strings, gemm_int8  # noqa: F401
from onnxc.codegen.entry_point import EntryPointBuilder
from onnxc.codegen.llvm_idioms import constant_global
from onnxc.codegen.llvm_types import I8, static_shape_of
from onnxc.codegen.outlining import GraphFunctionTranslator
from onnxc.codegen.profiling import KernelProfiler
from onnxc.codegen.target import Target
from onnxc.codegen.weights import WEIGHT_ALIGNMENT, WEIGHTS_SYMBOL, WeightTable, uses_large_data
from onnxc.dialects.krnl import EntryPointOp, GlobalOp
from onnxc.dialects.krnl_checks import CheckIndicesOp
from onnxc.dialects.onnx import tensor_value
from onnxc.dialects.types import numpy_dtype_of
from onnxc.errors import CompileError


@dataclass
class Translation:
    """An LLVM module and the weights its code refers to (by offset in WEIGHTS_SYMBOL)."""

    module: ir.Module
    weights: WeightTable


class _LargeDataGlobal(ir.GlobalVariable):
    """A global in x86-64's large data model (`code_model "large"`): code reaches it
    with 64-bit offsets, so it may lie more than 2 GB away (see weights.uses_large_data)."""

    def descr(self, buf: list[str]) -> None:
        super().descr(buf)
        buf.insert(len(buf) - 1 if buf[-1] == "\n" else len(buf), ', code_model "large"')


class ModuleTranslator:
    """The state shared by a module's functions: the LLVM module, declarations, weights, GEMM kernels."""

    def __init__(self, module: ModuleOp, target: Target, model_name: str, profile: dict[str, dict] | None = None):
        self.source = module
        self.target = target
        self.model_name = model_name
        self.module = ir.Module(name=model_name)
        self.module.triple = target.triple
        self.module.data_layout = str(target.target_machine().target_data)
        self.weights = WeightTable()
        self._weight_offsets: dict[Attribute, int] = {}
        self._weights_symbol: ir.GlobalVariable | None = None
        self.gemm_kernels: dict = {}  # see gemm.MatmulEmitter.micro_kernel
        # Times every kernel call (`onnxc --profile`), given the ONNX nodes by name (profiling.node_records).
        self.profiler = KernelProfiler(profile) if profile is not None else None
        # The index checks, in the order of the signature's `index_sites` (emit_checks.py).
        self.index_sites = [op for op in module.walk() if isinstance(op, CheckIndicesOp)]

    def declare(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        """The function `name` of the module, declared on first use."""
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
        fn.attributes.add("nounwind")
        return fn

    def weight_offset(self, op: GlobalOp) -> int:
        return self._weight_offsets[op.value]

    def weights_symbol(self) -> ir.GlobalVariable:
        assert self._weights_symbol is not None
        return self._weights_symbol

    def collect_weights(self) -> None:
        """Lay out every used krnl.global value (each distinct value once) and declare the symbol."""
        for op in self.source.walk():
            if not isinstance(op, GlobalOp) or op.value in self._weight_offsets or not op.result.uses:
                continue
            array = tensor_value(op, op.value)
            element = op.result.type.element_type
            if array.dtype != numpy_dtype_of(element) or list(array.shape) != static_shape_of(op.result.type):
                raise CompileError(
                    f"codegen: krnl.global value {array.dtype}{list(array.shape)} does not "
                    f"match its type {op.result.type}"
                )
            self._weight_offsets[op.value] = self.weights.add(array)
        if self._weight_offsets:
            blob = ir.ArrayType(I8, self.weights.size)
            symbol = constant_global(self.module, WEIGHTS_SYMBOL, blob)
            if uses_large_data(self.target, self.weights.size):
                symbol.__class__ = _LargeDataGlobal
            symbol.linkage = "external"
            symbol.visibility = "hidden"
            symbol.align = WEIGHT_ALIGNMENT
            self._weights_symbol = symbol

    def translate(self) -> Translation:
        entry = self.entry_point()
        self.collect_weights()
        functions = {}
        for op in self.source.ops:
            if isinstance(op, func.FuncOp):
                GraphFunctionTranslator(self, op).translate()
                functions[op.sym_name.data] = op
            elif not isinstance(op, EntryPointOp):
                raise CompileError(f"codegen: unexpected top-level op '{op.name}'")
        graph = functions.get(entry.func.root_reference.data)
        if graph is None:
            raise CompileError(f"codegen: entry point function {entry.func} is not defined")
        EntryPointBuilder(self, graph, entry).build()
        return Translation(self.module, self.weights)

    def entry_point(self) -> EntryPointOp:
        entries = [op for op in self.source.ops if isinstance(op, EntryPointOp)]
        if len(entries) != 1:
            raise CompileError(f"codegen: expected one krnl.entry_point, found {len(entries)}")
        return entries[0]


def translate_module(
    module: ModuleOp, target: Target, model_name: str = "model", profile: dict[str, dict] | None = None
) -> Translation:
    """Loop-level `module` as an LLVM module for `target`, plus the weights it refers to;
    with `profile` (the ONNX nodes, profiling.node_records), its kernel calls timed."""
    return ModuleTranslator(module, target, model_name, profile).translate()
