"""Link objects into a shared library with zig's bundled clang/lld (`python -m ziglang`).

zig links for every target from this one host, against glibc stubs of a
chosen version (2.17: the oldest glibc zig offers for x86_64 and s390x; 2.19
for ppc64le). The first link for a target builds those stubs (~25 s, cached
in ~/.cache/zig).

Every library also gets the runtime support code (runtime/support/*.c: the
thread pool behind `onnxc_parallel_for`), compiled once per target and
source version and cached under the user's cache directory.
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

from onnxc.codegen.target import Target
from onnxc.errors import CompileError

SUPPORT_SOURCES = ("onnxc_parallel.c",)
_SUPPORT_FLAGS = ("-O2", "-fPIC", "-fvisibility=hidden", "-std=c11")


def _zig(arguments: Sequence[str], what: str) -> None:
    command = [sys.executable, "-m", "ziglang", *arguments]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        raise CompileError(f"could not run zig ({' '.join(command)}): {error}") from error
    if result.returncode != 0:
        raise CompileError(f"{what} failed:\n{result.stderr.strip()}")


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


def link_shared_library(objects: Sequence[str | Path], output: str | Path, target: Target) -> None:
    """Link `objects`, the runtime support objects, libm and pthreads into the shared library `output`."""
    support = [support_object(name, target) for name in SUPPORT_SOURCES]
    _zig(
        ["cc", "-target", target.zig_target, "-shared", "-o", str(output),
         *(str(o) for o in [*objects, *support]), "-lm", "-lpthread"],
        f"linking {output} for {target.triple}",
    )  # fmt: skip
