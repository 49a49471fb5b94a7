"""Code generation: loop-level IR → LLVM IR → object files → shared library.

The code goes through LLVM (`llvm.py`); the weights bypass it as an ELF object
written by Python (`weights.py`); zig links both (`link.py`).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import llvmlite.binding as llvm_binding
from xdsl.dialects.builtin import ModuleOp

from onnxc.codegen.link import link_shared_library
from onnxc.codegen.llvm import Translation, translate_module
from onnxc.codegen.parallel_emit import PARTS_PER_PROCESS, available_cores, compile_parts, split_module
from onnxc.codegen.target import Target, resolve_target
from onnxc.codegen.weights import write_weights_assembly, write_weights_object
from onnxc.errors import CompileError

__all__ = ["Target", "resolve_target", "emit_llvm_ir", "emit_object", "emit_library"]

StageCallback = Callable[[str, float], None]
"""Told each code generation stage's name and elapsed seconds as it ends (`onnxc -v`)."""


@contextmanager
def _stage(on_stage: StageCallback | None, name: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    if on_stage:
        on_stage(name, time.perf_counter() - start)


def _optimized(text: str, tm: llvm_binding.TargetMachine, opt_level: int) -> llvm_binding.ModuleRef:
    """Parse and verify the translated module's `text`, then run LLVM's default -O<n> pipeline on it."""
    try:
        module = llvm_binding.parse_assembly(text)
        module.verify()
    except RuntimeError as error:
        raise CompileError(f"codegen produced invalid LLVM IR: {error}") from error
    tuning = llvm_binding.create_pipeline_tuning_options(opt_level)
    pass_builder = llvm_binding.create_pass_builder(tm, tuning)
    pass_builder.getModulePassManager().run(module, pass_builder)
    return module


def emit_llvm_ir(
    module: ModuleOp,
    target: Target | str | None = None,
    *,
    opt_level: int | None = None,
    model_name: str = "model",
    profile: dict[str, dict] | None = None,
) -> str:
    """The LLVM IR of `module`: as translated, or after -O`opt_level` if one is given."""
    target = resolve_target(target)
    translation = translate_module(module, target, model_name, profile)
    if opt_level is None:
        return str(translation.module)
    return str(_optimized(str(translation.module), target.target_machine(opt_level), opt_level))


def _compile(
    module: ModuleOp,
    target: Target,
    opt_level: int,
    model_name: str,
    on_stage: StageCallback | None = None,
    profile: dict[str, dict] | None = None,
    processes: int | None = 1,
) -> tuple[list[bytes], Translation]:
    """The code's objects: one, or one per part of the module, the parts compiled in up to
    `processes` processes (parallel_emit.py; None: one per core, if the module is worth it)."""
    tm = target.target_machine(opt_level)
    with _stage(on_stage, "translate to LLVM IR"):
        translation = translate_module(module, target, model_name, profile)
    if processes == 1:
        texts = [str(translation.module)]
    else:
        processes = processes or available_cores()
        with _stage(on_stage, "split module"):
            texts = split_module(translation.module, PARTS_PER_PROCESS * processes)
    if len(texts) == 1:
        with _stage(on_stage, "LLVM optimize"):
            optimized = _optimized(texts[0], tm, opt_level)
        with _stage(on_stage, "object emission"):
            return [tm.emit_object(optimized)], translation
    with _stage(on_stage, f"LLVM optimize + emit ({len(texts)} parts, {min(processes, len(texts))} processes)"):
        objects = compile_parts(texts, lambda text: tm.emit_object(_optimized(text, tm, opt_level)), processes)
        return objects, translation


def emit_object(
    module: ModuleOp,
    target: Target | str | None = None,
    opt_level: int = 3,
    *,
    model_name: str = "model",
    on_stage: StageCallback | None = None,
    profile: dict[str, dict] | None = None,
) -> bytes:
    """The relocatable object of the code (the weights are a separate object: see emit_library)."""
    (code,), _ = _compile(module, resolve_target(target), opt_level, model_name, on_stage, profile)
    return code


def emit_library(
    module: ModuleOp,
    output_path: str | Path,
    *,
    target: Target | str | None = None,
    opt_level: int = 3,
    model_name: str = "model",
    tmp_dir: str | Path | None = None,
    on_stage: StageCallback | None = None,
    profile: dict[str, dict] | None = None,
    processes: int | None = None,
) -> Path:
    """Compile `module` into the shared library `output_path` (see runtime/onnxc.h); with
    `profile` (the ONNX nodes by name, profiling.node_records), one that times its kernels.
    Its code is optimized and emitted in up to `processes` processes (None: one per core, if
    the module is worth it; see parallel_emit.py)."""
    target = resolve_target(target)
    codes, translation = _compile(module, target, opt_level, model_name, on_stage, profile, processes)
    output_path = Path(output_path)
    with tempfile.TemporaryDirectory(prefix="onnxc-", dir=tmp_dir) as work:
        objects = [Path(work) / f"model{index}.o" for index in range(len(codes))]
        for path, code in zip(objects, codes):
            path.write_bytes(code)
        if translation.weights.arrays:
            with _stage(on_stage, "weights object"):
                if target.is_wasm:  # no ELF: assembly that zig assembles as it links
                    objects.append(Path(work) / "weights.s")
                    write_weights_assembly(objects[-1], translation.weights, target)
                else:
                    objects.append(Path(work) / "weights.o")
                    write_weights_object(objects[-1], translation.weights, target)
        with _stage(on_stage, "link"):
            linked = Path(work) / "model.so"
            link_shared_library(objects, linked, target, profiled=profile is not None)
            _install(linked, output_path)
    return output_path


def _install(built: Path, output_path: Path) -> None:
    """Put `built` at `output_path` atomically: a failed build leaves no partial file, and a
    process loading the old library never sees half a new one."""
    if not output_path.parent.is_dir():
        raise CompileError(f"cannot write {output_path}: directory {output_path.parent} does not exist")
    try:
        os.replace(built, output_path)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise CompileError(f"cannot write {output_path}: {error.strerror}") from error
    # Another file system: copy beside the output first, then rename.
    handle, partial = tempfile.mkstemp(dir=output_path.parent, prefix=f".{output_path.name}.", suffix=".partial")
    os.close(handle)
    try:
        shutil.copyfile(built, partial)
        shutil.copymode(built, partial)
        os.replace(partial, output_path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
