"""Link by running zig's linker directly, with the command line `zig cc` chose for the target.

`zig cc` spends about 0.4 s of every link (a third of a small model's whole
compile) rebuilding its glibc stub libraries, while the linker it then runs
takes milliseconds. The first link for a target and set of flags goes through
`zig cc -v`, which prints the linker's command line. That line is recorded in
the cache directory with our objects and output as placeholders, and with
copies of the libraries it names from zig's cache: zig rewrites those in place
on every `zig cc` run, so a concurrent compile could find one missing. Later
links run `zig ld.lld` (or `zig wasm-ld`) on the recorded line; a record
with a file missing or a failed link is forgotten and the link done again
through `zig cc`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

LINKERS = ("ld.lld", "wasm-ld")
_INPUTS, _OUTPUT = "{inputs}", "{output}"
_LINE = "line.json"


def _record_directory(cache: Path, zig_target: str, flags: Sequence[str]) -> Path:
    identity = "\0".join([zig_target, *flags, importlib.metadata.version("ziglang")])
    key = hashlib.sha256(identity.encode()).hexdigest()[:20]
    return cache / f"link-{zig_target}-{key}"


def _objects_only(inputs: Sequence[str]) -> bool:
    return all(Path(i).suffix == ".o" for i in inputs)


def _position(inputs: Sequence[str], line: list[str]) -> int | None:
    """Where `inputs` appear in a row in `line`, if they do."""
    return next((i for i in range(len(line)) if line[i : i + len(inputs)] == list(inputs)), None)


def recorded_command(
    cache: Path, zig_target: str, flags: Sequence[str], inputs: Sequence[str], output: str
) -> list[str] | None:
    """The linker command (after `zig`) for these inputs and output, from the recorded line; None
    when no usable line is recorded, or when an input is not an object (wasm32's weights are
    assembly, which `zig cc` assembles before it links)."""
    if not _objects_only(inputs):
        return None
    try:
        line = json.loads((_record_directory(cache, zig_target, flags) / _LINE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(line, list) or not line or not all(isinstance(a, str) for a in line) or line[0] not in LINKERS:
        return None
    if any(a.startswith("/") and not os.path.exists(a) for a in line):
        return None
    command: list[str] = []
    for argument in line:
        command += list(inputs) if argument == _INPUTS else [output] if argument == _OUTPUT else [argument]
    return command


def forget_command(cache: Path, zig_target: str, flags: Sequence[str]) -> None:
    shutil.rmtree(_record_directory(cache, zig_target, flags), ignore_errors=True)


def record_command(
    cache: Path, zig_target: str, flags: Sequence[str], inputs: Sequence[str], output: str, verbose_output: str
) -> None:
    """Keep the linker line `zig cc -v` printed in `verbose_output` for these flags, our
    `inputs` and `output` replaced by placeholders and the libraries it names by copies;
    nothing is kept from a line not understood or whose files cannot be copied."""
    if not _objects_only(inputs):
        return
    # zig prints the linking of its glibc stubs too: ours is the line with our inputs.
    lines = [line.split(" ") for line in verbose_output.splitlines() if line.split(" ", 1)[0] in LINKERS]
    ours = [(line, start) for line in lines if (start := _position(inputs, line)) is not None]
    if len(ours) != 1:
        return
    ((line, start),) = ours
    template = [*line[:start], _INPUTS, *line[start + len(inputs) :]]
    if template.count(output) != 1 or any(a in (_INPUTS, _OUTPUT) for a in line):
        return
    template[template.index(output)] = _OUTPUT
    final = _record_directory(cache, zig_target, flags)
    cache.mkdir(parents=True, exist_ok=True)
    # Built beside, then renamed: a concurrent compiler sees a whole record or none.
    partial = Path(tempfile.mkdtemp(dir=cache, prefix=f"{final.name}.partial."))
    try:
        for index, argument in enumerate(template):
            if argument.startswith("/"):
                copy = partial / f"{index}-{Path(argument).name}"
                shutil.copyfile(argument, copy)
                template[index] = str(final / copy.name)
        (partial / _LINE).write_text(json.dumps(template))
        shutil.rmtree(final, ignore_errors=True)
        os.rename(partial, final)
    except OSError:
        pass  # a file zig was rewriting, or another compiler's record renamed first: keep that one
    finally:
        shutil.rmtree(partial, ignore_errors=True)
