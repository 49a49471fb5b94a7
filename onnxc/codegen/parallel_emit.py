"""Optimize and emit a module's code in parts, one process per core.

LLVM's optimization and code generation are most of a large model's compile
time, and they work function by function. The kernels (outlining.py) are
`noinline`: the graph functions only call them, so a kernel compiles to the
same code whether or not it shares a module with its caller. The module is
split into parts: part 0 holds what the exported functions reach, up to the
kernels; the kernels (with the functions they call, copied into each part that
needs them, so that those stay internal and LLVM specializes them as before)
are spread over the parts by size. A kernel called from another part is a
hidden global symbol, defined in its part and declared in its callers'.

llvmlite runs every LLVM call under one lock, so threads would take turns: the
parts are optimized and emitted by this process and forked ones, and the objects
are linked together into the library.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from llvmlite import ir
from llvmlite.binding import ffi

from onnxc.errors import CompileError

MIN_PART_LINES = 2_000
"""Fewer lines of IR than this per part are not worth a process (ResNet50: 19,000 lines, 3.4 s of
LLVM time; a fork of the compiler, 100 MB of weights in memory, about 20 ms)."""

PARTS_PER_PROCESS = 1
"""Parts per process. With more, a process that finishes early takes another part, which evens out
parts that the line count misjudges, but each part repeats the GEMM helpers it calls. CPU seconds
of the two processes, parent and child, on 2 cores: ResNet50 2.0 + 2.0 with one part each, 1.5 +
2.6 with two, 1.9 + 2.4 with three; SqueezeNet 0.6 + 3.0, 2.3 + 1.6, 1.7 + 2.2."""

_REFERENCE = re.compile(r'@(?:"(?:[^"\\]|\\.)*"|[-\w$.]+)')
_LOCAL_LINKAGES = ("internal", "private")


def available_cores() -> int:
    """The processes worth running: the cores this process may use, or 1 where it cannot fork."""
    if not hasattr(os, "fork"):
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class _ModuleGraph:
    """The module's global values, their IR text, and which others each refers to."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.text = {name: str(g) for name, g in module.globals.items()}
        by_reference = {g.get_reference(): name for name, g in module.globals.items()}
        self.refs = {
            name: {by_reference[r] for r in _REFERENCE.findall(text) if r in by_reference} - {name}
            for name, text in self.text.items()
        }

    def is_kernel(self, name: str) -> bool:
        g = self.module.globals[name]
        return (
            isinstance(g, ir.Function)
            and bool(g.blocks)
            and g.linkage in _LOCAL_LINKAGES
            and ("noinline" in g.attributes)
        )

    def closure(self, roots: Iterable[str], stop: Callable[[str], bool] = lambda _: False) -> set[str]:
        """`roots` and every value they reach, not going through a value `stop` holds for."""
        seen, todo = set(roots), list(roots)
        while todo:
            for ref in self.refs[todo.pop()]:
                if ref not in seen and not stop(ref):
                    seen.add(ref)
                    todo.append(ref)
        return seen


def split_module(module: ir.Module, max_parts: int) -> list[str]:
    """The IR text of `module` as at most `max_parts` modules that link into the same program,
    each of at least MIN_PART_LINES lines; part 0 holds the exported functions. One part is
    `module`'s own text."""
    graph = _ModuleGraph(module)
    # Lines (instructions) foretell LLVM's time better than characters: on ResNet50's two parts,
    # 1.7 and 1.8 s of CPU against 1.4 and 2.0 s split by characters.
    size = {n: t.count("\n") for n, t in graph.text.items()}
    parts = min(max_parts, sum(size.values()) // MIN_PART_LINES)
    if parts <= 1:
        return [_part_text(graph, set(module.globals), set())]  # str(module), not printed again
    exported = [n for n, g in module.globals.items() if _is_definition(g) and g.linkage not in _LOCAL_LINKAGES]
    top = graph.closure(exported, stop=graph.is_kernel)
    kernels = sorted({r for n in top for r in graph.refs[n] if graph.is_kernel(r)})
    members = [set(top)] + [set() for _ in range(min(parts, len(kernels) + 1) - 1)]
    load = [sum(size[n] for n in top)] + [0] * (len(members) - 1)
    reach = {k: graph.closure([k]) for k in kernels}
    # Largest first, each to the part where it adds least to the heaviest load: a part that
    # already holds the GEMM micro-kernels a kernel calls takes it for less.
    exported_kernels: list[set[str]] = [set() for _ in members]
    for kernel in sorted(kernels, key=lambda k: -sum(size[n] for n in reach[k])):
        added = [sum(size[n] for n in reach[kernel] - part) for part in members]
        best = min(range(len(members)), key=lambda p: (load[p] + added[p], p))
        members[best] |= reach[kernel]
        load[best] += added[best]
        if best:  # called from part 0: a hidden global; part 0's own kernels stay internal
            exported_kernels[best].add(kernel)
    return [_part_text(graph, part, exported) for part, exported in zip(members, exported_kernels)]


def _is_definition(g: ir.GlobalValue) -> bool:
    return bool(g.blocks) if isinstance(g, ir.Function) else g.initializer is not None


def _part_text(graph: _ModuleGraph, members: set[str], exported_kernels: set[str]) -> str:
    """One part: its members defined (`exported_kernels` as hidden globals), what they refer to declared."""
    module = graph.module
    referenced = {r for n in members for r in graph.refs[n]} - members
    lines = [
        f'; ModuleID = "{module.name}"',
        f'target triple = "{module.triple}"',
        f'target datalayout = "{module.data_layout}"',
        "",
        *(t.get_declaration() for t in module.get_identified_types().values()),
    ]
    for name, g in module.globals.items():
        if name in members:
            lines.append(_hidden(graph.text[name]) if name in exported_kernels else graph.text[name])
        elif name in referenced:
            lines.append(_declaration(g, graph.text[name]))
    lines += module._get_metadata_lines()
    return "\n".join(lines)


def _hidden(text: str) -> str:
    """A kernel's definition, internal linkage replaced by hidden visibility."""
    head, internal, tail = text.partition(" internal ")
    assert internal and head in ("define", ""), head
    return f"{head} hidden {tail}"


def _declaration(g: ir.GlobalValue, text: str) -> str:
    """`g` declared: a kernel of another part, or a function or global that is only declared anyway."""
    if not _is_definition(g):
        return text
    if not isinstance(g, ir.Function) or g.linkage not in _LOCAL_LINKAGES:
        raise CompileError(f"codegen: cannot split the module: '{g.name}' is defined in one part and used in another")
    prototype = text.split("\n", 1)[0].removesuffix("{").rstrip()
    return "declare hidden " + _hidden(prototype).removeprefix("define hidden ")


def compile_parts(
    texts: Sequence[str], compile_text: Callable[[str], bytes], processes: int, work_dir: str | Path | None = None
) -> list[bytes]:
    """`compile_text` of each text, in this process and `processes` - 1 forked ones, each taking
    the next text as it finishes one: LLVM's time per line varies tenfold between kernels
    (SqueezeNet's two halves by lines took 0.6 and 3.0 s), and the early finisher takes more."""
    assert len(texts) < 256
    with tempfile.TemporaryDirectory(prefix="onnxc-parts-", dir=work_dir) as work:
        paths = [Path(work) / f"part{index}.o" for index in range(len(texts))]
        queue, feed = os.pipe()
        os.write(feed, bytes(range(len(texts))))  # one byte per text; a one-byte read is atomic
        os.close(feed)
        children = []
        try:
            for child in range(min(processes, len(texts)) - 1):
                with ffi.lib._lock:  # no other thread is inside LLVM as we fork: a child could never take the lock
                    pid = os.fork()
                if pid == 0:
                    _run_child(queue, texts, paths, compile_text, Path(work) / f"child{child}.err")
                children.append(pid)
            _take_parts(queue, texts, paths, compile_text)
        finally:
            while os.read(queue, 256):  # left by an error here: the children stop after their part
                pass
            os.close(queue)
            statuses = [os.waitpid(pid, 0)[1] for pid in children]
        if not all(path.exists() for path in paths):
            errors = [error.read_text() for error in sorted(Path(work).glob("child*.err"))]
            raise CompileError(f"codegen: compiling a part of the module failed: {'; '.join(errors) or statuses}")
        return [path.read_bytes() for path in paths]


def _take_parts(queue: int, texts: Sequence[str], paths: Sequence[Path], compile_text: Callable[[str], bytes]) -> None:
    """Compile the texts whose indices this process reads from `queue`, until it is empty."""
    while taken := os.read(queue, 1):
        paths[taken[0]].write_bytes(compile_text(texts[taken[0]]))


def _run_child(
    queue: int, texts: Sequence[str], paths: Sequence[Path], compile_text: Callable[[str], bytes], error: Path
) -> None:
    """In a forked process: take parts (an error is written to `error`), then exit without
    running this process's cleanup, which belongs to the parent."""
    try:
        _take_parts(queue, texts, paths, compile_text)
        os._exit(0)
    except BaseException as exception:  # noqa: BLE001 - reported to the parent, which raises it
        error.write_text(f"{type(exception).__name__}: {exception}")
    finally:
        os._exit(1)
