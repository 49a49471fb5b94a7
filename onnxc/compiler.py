"""The compiler driver: ONNX model → IR levels → native shared library.

`compile()` is the Python API behind the `onnxc` command. Each stage hands the
next an in-memory module; `emit` stops early and writes that level as text.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.printer import Printer

from onnxc.dialects import make_context
from onnxc.dialects.onnx import (
    BATCH_SYMBOL_ATTR,
    BATCHED_INPUTS_ATTR,
    NOT_SEPARABLE_ATTR,
    OUTPUT_MAP_KEYS_ATTR,
    OUTPUT_SEQUENCE_AXES_ATTR,
)
from onnxc.dialects.types import dim_params
from onnxc.errors import CompileError, OnnxcError
from onnxc.frontend.importer import MAIN_FUNCTION, import_model
from onnxc.passes import get_pass
from onnxc.passes.helpers.batch_separable import separable_batch_symbol

# The passes to each IR level. -O0 runs what correctness needs: types for every value,
# folding of shape arithmetic (lowering and context-dependent decompositions need static
# shapes), decomposition of ops without a kernel, and fusing a Tokenizer into the
# TfIdfVectorizer it feeds (its own result cannot be compiled). Control flow is resolved
# first (it leaves a region-free graph), after the distance Scans of kNN models become
# array ops. -O1 and up add the graph optimizations.
GRAPH_PASSES_O0 = (
    "cdist-scan",
    "inline-control-flow",
    "shape-inference",
    "gather-features",
    "fuse-tokenizer",
    "fold-shapes",
    "decompose",
    "fold-shapes",
)
GRAPH_PASSES_O1 = (
    "cdist-scan",
    "inline-control-flow",
    "shape-inference",
    "gather-features",
    "fuse-tokenizer",
    "fuse-qdq",
    "constprop",
    "decompose",
    "constprop",
    "simplify",
    "fold-affine",
    "fuse-gemm",
    "conv1d-as-2d",
    "expand-depthwise-tiles",
    "cse",
    "dce",
)


def stages(opt_level: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(IR level, passes that produce it) in pipeline order, at this -O level."""
    return (
        ("onnx", GRAPH_PASSES_O0 if opt_level == 0 else GRAPH_PASSES_O1),
        ("krnl", ("convert-onnx-to-krnl",)),
        ("loops", ("convert-krnl-to-loops",)),
    )


# What `emit` writes -> the suffix of its default output file, which replaces the model's `.onnx`.
EMIT_SUFFIXES = {
    "onnx-basic": ".onnx-basic.mlir",
    "onnx": ".onnx.mlir",
    "krnl": ".krnl.mlir",
    "loops": ".loops.mlir",
    "llvm": ".ll",
    "obj": ".o",
    "lib": ".so",
}
EMIT_KINDS = tuple(EMIT_SUFFIXES)


def default_output_path(model: str | os.PathLike, emit: str = "lib", target: str | None = None) -> Path:
    """Where `onnxc MODEL` writes without `-o`: beside the model, `model.onnx` -> `model.so`
    (`model.o`, `model.ll`, `model.<level>.mlir` with --emit; `model.wasm` for a wasm32 `target`)."""
    from onnxc.codegen import resolve_target

    model = Path(model)
    wasm = emit == "lib" and target is not None and resolve_target(target).is_wasm
    return model.with_name(_stem(model.name) + (".wasm" if wasm else EMIT_SUFFIXES[emit]))


@dataclass
class CompileLog:
    """Elapsed seconds per stage (import, each pass, each code generation step),
    reported as they end by `onnxc -v` and as a table by `onnxc --time-passes`."""

    timings: list[tuple[str, float]] = field(default_factory=list)
    on_stage: Callable[[str, float], None] | None = None

    def record(self, stage: str, seconds: float) -> None:
        self.timings.append((stage, seconds))
        if self.on_stage:
            self.on_stage(stage, seconds)

    def table(self) -> str:
        """Time per stage, a stage run several times summed, with its share of the total."""
        totals: dict[str, float] = {}
        for stage, seconds in self.timings:
            totals[stage] = totals.get(stage, 0.0) + seconds
        total = sum(totals.values())
        width = max([len("stage"), *map(len, totals)])
        lines = [f"{'stage':<{width}}  {'ms':>10}  {'%':>6}"]
        for stage, seconds in totals.items():
            share = 100.0 * seconds / total if total else 0.0
            lines.append(f"{stage:<{width}}  {seconds * 1000:10.1f}  {share:6.1f}")
        lines.append(f"{'total':<{width}}  {total * 1000:10.1f}  {100.0 if total else 0.0:6.1f}")
        return "\n".join(lines)


def pipeline(opt_level: int) -> list[str]:
    """Pass names run before code generation at this -O level."""
    return [name for _, passes in stages(opt_level) for name in passes]


def compile(
    model: onnx.ModelProto | str | os.PathLike,
    output_path: str | os.PathLike,
    *,
    target: str | None = None,
    cpu: str | None = None,
    features: str | None = None,
    opt_level: int = 3,
    shapes: Mapping[str, Sequence[int]] | None = None,
    emit: str = "lib",
    log: CompileLog | None = None,
    profile: bool = False,
) -> Path:
    """Compile `model` (a path or ModelProto) to `output_path`; returns the path written.

    `emit` selects what is written: "lib" (shared library, default), "obj",
    "llvm" (LLVM IR text), or the IR text of level "onnx-basic" (as imported),
    "onnx" (after graph passes), "krnl" or "loops". `target` is x86_64, aarch64,
    ppc64le, riscv64, s390x, wasm32 or a triple (default: the host); `cpu` an
    LLVM CPU name for it (default: the host's for a native build, see
    codegen/target.py for the others); `features` LLVM target features to add
    (e.g. "+v": RVV on riscv64). For wasm32 the library is a .wasm module.
    With `profile`, the library times each kernel call and names the ONNX nodes it
    computes (`onnxc.Session(path, profile=True)`, `onnxc run --profile`).
    """
    if emit not in EMIT_KINDS:
        raise CompileError(f"unknown emit kind '{emit}'; choose one of {', '.join(EMIT_KINDS)}")
    if opt_level not in (0, 1, 2, 3):
        raise CompileError(f"optimization level must be 0..3, got {opt_level}")
    log = log or CompileLog()
    output_path = Path(output_path)
    model_name = (model.graph.name or "model") if isinstance(model, onnx.ModelProto) else Path(model).name
    try:
        from onnxc.codegen import resolve_target

        # Resolved first, so that a mistyped target or CPU fails before any work is done.
        resolved = resolve_target(target, cpu=cpu, features=features)
        if profile and resolved.is_wasm:
            raise CompileError("profiling needs a clock, which a wasm32 module (importing nothing) has not")
        return _compile(model, output_path, resolved, opt_level, shapes, emit, log, model_name, profile)
    except OnnxcError as exc:
        raise exc.with_model(model_name) from None


def _compile(
    model, output_path: Path, target, opt_level, shapes, emit, log: CompileLog, model_name: str, profile: bool
) -> Path:
    from onnxc import codegen
    from onnxc.codegen.profiling import node_records

    start = time.perf_counter()
    module = import_model(model, shapes=shapes)
    log.record("import", time.perf_counter() - start)
    if emit == "onnx-basic":
        return _write_text(output_path, module_text(module))

    ctx = make_context()
    if _has_symbolic_inputs(module):
        start = time.perf_counter()
        module = _batch_loop_module(model, module, shapes, ctx)
        log.record("batch analysis", time.perf_counter() - start)
    nodes = None
    for level, passes in stages(opt_level):
        for name in passes:
            start = time.perf_counter()
            get_pass(name)().apply(ctx, module)
            log.record(name, time.perf_counter() - start)
        if emit == level:
            return _write_text(output_path, module_text(module))
        if level == "onnx" and profile:
            nodes = node_records(module)  # what the nodes are, read before lowering

    resolved = codegen.resolve_target(target)
    stem = _stem(model_name)
    if emit == "llvm":
        start = time.perf_counter()
        _write_text(
            output_path, codegen.emit_llvm_ir(module, resolved, opt_level=opt_level, model_name=stem, profile=nodes)
        )
        log.record("LLVM IR", time.perf_counter() - start)
    elif emit == "obj":
        object_code = codegen.emit_object(module, resolved, opt_level, model_name=stem, on_stage=log.record, profile=nodes)
        output_path.write_bytes(object_code)
    else:
        codegen.emit_library(
            module, output_path, target=resolved, opt_level=opt_level, model_name=stem, on_stage=log.record,
            profile=nodes,
        )  # fmt: skip
    return output_path


def _main_graph(module: ModuleOp) -> func.FuncOp:
    return next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == MAIN_FUNCTION)


def _has_symbolic_inputs(module: ModuleOp) -> bool:
    return any(
        isinstance(t, TensorType) and DYNAMIC_INDEX in t.get_shape() for t in _main_graph(module).function_type.inputs
    )


def _batch_loop_module(model, module: ModuleOp, shapes, ctx) -> ModuleOp:
    """A model separable along its one symbolic batch dim is compiled for batch 1,
    and its entry point loops over the samples (passes/helpers/batch_separable.py);
    any other model keeps its symbolic dims (and lowering names what needs them pinned)."""
    for name in ("cdist-scan", "inline-control-flow", "shape-inference", "gather-features", "fuse-tokenizer"):
        get_pass(name)().apply(ctx, module)
    graph = _main_graph(module)
    verdict = separable_batch_symbol(graph)
    if verdict.symbol is None:
        graph.attributes[NOT_SEPARABLE_ATTR] = StringAttr(verdict.reason)
        return module
    batched = [
        isinstance(arg.type, TensorType) and dim_params(arg.type)[:1] == [verdict.symbol]
        for arg in graph.body.block.args
    ]
    # Each batched input by name: inputs whose own symbols shape inference unified with the batch's too.
    names = [n.data for n in graph.attributes["onnx.input_names"].data]
    batch_one = {name: [1, *arg.type.get_shape()[1:]] for name, arg, b in zip(names, graph.body.block.args, batched) if b}
    pinned = import_model(model, shapes={**(shapes or {}), verdict.symbol: [1], **batch_one})
    pinned_graph = _main_graph(pinned)
    if not _same_outputs_per_sample(graph, pinned_graph):
        # sequences resolved while importing (a SplitToSequence along the batch) differ at batch 1
        graph.attributes[NOT_SEPARABLE_ATTR] = StringAttr("the model imported at batch 1 has other outputs")
        return module
    pinned_graph.attributes[BATCH_SYMBOL_ATTR] = StringAttr(verdict.symbol)
    pinned_graph.attributes[BATCHED_INPUTS_ATTR] = ArrayAttr([IntegerAttr(int(b), i64) for b in batched])
    return pinned


def _same_outputs_per_sample(graph: func.FuncOp, pinned: func.FuncOp) -> bool:
    """Whether the graph imported at batch 1 returns the same outputs (the entry point
    checks that each has the sample's leading dim of 1)."""
    keys = ("onnx.output_names", OUTPUT_SEQUENCE_AXES_ATTR, OUTPUT_MAP_KEYS_ATTR)
    return all(graph.attributes.get(key) == pinned.attributes.get(key) for key in keys)


def module_text(module: ModuleOp) -> str:
    """IR as text with node names (locations) shown."""
    import io

    stream = io.StringIO()
    Printer(stream=stream, print_debuginfo=True).print_op(module)
    stream.write("\n")
    return stream.getvalue()


def _write_text(output_path: Path, text: str) -> Path:
    """Write IR text; "-" means standard output (handy in lit tests)."""
    if str(output_path) == "-":
        sys.stdout.write(text)
    else:
        output_path.write_text(text)
    return output_path


def _stem(name: str) -> str:
    return name[: -len(".onnx")] if name.endswith(".onnx") else name
