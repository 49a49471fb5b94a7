"""Link objects into a shared library with zig's bundled clang/lld (`python -m ziglang`).

zig links for every target from this one host, against glibc stubs of a
chosen version (2.17: the oldest glibc zig offers for x86_64 and s390x; 2.19
for ppc64le). The first link for a target builds those stubs (~25 s, cached
in ~/.cache/zig).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from onnxc.codegen.target import Target
from onnxc.errors import CompileError


def link_shared_library(objects: Sequence[str | Path], output: str | Path, target: Target) -> None:
    """Link `objects` (and libm) into the shared library `output` for `target`."""
    command = [
        sys.executable, "-m", "ziglang", "cc",
        "-target", target.zig_target,
        "-shared",
        "-o", str(output),
        *(str(o) for o in objects),
        "-lm",
    ]  # fmt: skip
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        raise CompileError(f"could not run the linker ({' '.join(command)}): {error}") from error
    if result.returncode != 0:
        raise CompileError(
            f"linking {output} for {target.triple} failed:\n{result.stderr.strip()}"
        )
