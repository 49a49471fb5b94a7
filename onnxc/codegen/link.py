"""Link objects into a shared library with zig's bundled clang/lld (`python -m ziglang`).

zig links for every target from this one host, against glibc stubs of a
chosen version (2.17: the oldest glibc zig offers for x86_64 and s390x; 2.19
for ppc64le). The first link for a target builds those stubs (~25 s, cached
in ~/.cache/zig).

Every library also gets the runtime support code (runtime/support/*.c: the
thread pool behind `onnxc_parallel_for`), compiled once per target and
source version and cached under the user's cache directory.

Links after the first for a target run zig's linker directly (direct_link.py).

A wasm32 "library" is a WebAssembly module linked against WASI's C library
(malloc, the math functions) as a reactor: no main, an `_initialize` export
to call first, and the functions of runtime/onnxc.h plus malloc and free (for
the JavaScript loader's tensors) exported. It imports nothing: the support
code for it (onnxc_single_thread.c) needs no clock, file or thread.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from onnxc.codegen.direct_link import forget_command, record_command, recorded_command
from onnxc.codegen.target import Target
from onnxc.errors import CompileError

_SUPPORT_FLAGS = ("-O2", "-fPIC", "-fvisibility=hidden", "-std=c11")
WASM_EXPORTS = (
    "run_main_graph",
    "onnxc_free_tensor",
    "onnxc_signature",
    "onnxc_abi_version",
    "onnxc_set_num_threads",
    "onnxc_get_num_threads",
    "malloc",
    "free",
)
"""What a WebAssembly module exports (besides `memory` and `_initialize`): runtime/onnxc.h's functions,
and malloc and free for the loader, which places the tensors in the module's memory."""


def support_sources(target: Target, profiled: bool = False) -> tuple[str, ...]:
    """The runtime support of a library for `target`: a thread pool, or for wasm32 one thread;
    string outputs; and for a `profiled` library (`onnxc --profile`) the kernel timestamps."""
    sources = ("onnxc_single_thread.c" if target.is_wasm else "onnxc_parallel.c", "onnxc_strings.c")
    return (*sources, "onnxc_profile.c") if profiled else sources


def _zig(arguments: Sequence[str], what: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ziglang", *arguments]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        raise CompileError(f"could not run zig ({' '.join(command)}): {error}") from error
    if result.returncode != 0:
        raise CompileError(f"{what} failed:\n{result.stderr.strip()}")
    return result


def cache_directory() -> Path:
    """Where compiled support objects are kept: $XDG_CACHE_HOME/onnxc or ~/.cache/onnxc."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "onnxc"


def support_object(source_name: str, target: Target) -> Path:
    """The object of runtime/support/`source_name` for `target`, compiled on first use.

    The cache key covers the source text, the zig target, the flags and zig's
    version, so an edited source or a new compiler never reuses a stale object.
    """
    source = importlib.resources.files("onnxc.runtime") / "support" / source_name
    text = source.read_bytes()
    key = hashlib.sha256(
        b"\0".join([text, target.zig_target.encode(), " ".join(_SUPPORT_FLAGS).encode(),
                    importlib.metadata.version("ziglang").encode()])
    ).hexdigest()[:20]  # fmt: skip
    cached = cache_directory() / f"{Path(source_name).stem}-{target.arch}-{key}.o"
    if cached.exists():
        return cached
    cached.parent.mkdir(parents=True, exist_ok=True)
    with importlib.resources.as_file(source) as source_path:
        # Compile beside the cache entry, then rename: concurrent compilers never see half an object.
        handle, partial = tempfile.mkstemp(dir=cached.parent, suffix=".o.partial")
        os.close(handle)
        try:
            _zig(["cc", "-target", target.zig_target, *_SUPPORT_FLAGS, "-c", str(source_path), "-o", partial],
                 f"compiling {source_name} for {target.triple}")  # fmt: skip
            os.replace(partial, cached)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    return cached


def link_shared_library(
    objects: Sequence[str | Path], output: str | Path, target: Target, *, profiled: bool = False
) -> None:
    """Link `objects` (objects or assembly), the runtime support objects, libm and pthreads into
    the shared library `output`, or for wasm32 into the WebAssembly module `output`."""
    support = support_sources(target, profiled)
    inputs = [str(o) for o in [*objects, *(support_object(name, target) for name in support)]]
    if target.is_wasm:
        exports = ",".join(f"--export={name}" for name in WASM_EXPORTS)
        flags = ["-mexec-model=reactor", "-s", f"-Wl,{exports}", "-lm"]
    else:
        flags = ["-shared", "-lm", "-lpthread"]
    what, cache = f"linking {output} for {target.triple}", cache_directory()
    command = recorded_command(cache, target.zig_target, flags, inputs, str(output))
    if command is not None:
        try:
            _zig(command, what)
            return
        except CompileError:  # a damaged record (or a real error, which zig cc reports again below)
            forget_command(cache, target.zig_target, flags)
    result = _zig(["cc", "-target", target.zig_target, "-o", str(output), *inputs, *flags, "-v"], what)
    record_command(cache, target.zig_target, flags, inputs, str(output), result.stderr)
