"""Where a run's time goes: per node, per op type, and as a Chrome/Perfetto trace.

A library built with `onnxc --profile` times each kernel call (a loop nest of
one or more ONNX nodes) on the calling thread and lists its kernels and nodes
in the signature's "profile" entry (onnxc/codegen/profiling.py).
`Session(path, profile=True)` keeps a `Profile`: after each run it copies the
calling thread's events (`onnxc_profile_events`, runtime/onnxc.h) next to the
run's wall time, measured here on the same clock (CLOCK_MONOTONIC, which
`time.monotonic_ns` reads on Linux).

Kernels are grouped by the nodes they name: a node lowered into several
loop nests (padding, packing, the GEMM) is one row, and element-wise nodes
fused into one loop are one row naming all of them, its op type their op
types joined by "+". A node's FLOPs count in the first row that names it.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from onnxc.errors import InvalidModelError
from onnxc.runtime.abi import PROFILE_EVENT_FIELDS

_EVENT_DTYPE = np.dtype(
    [(name, np.int64 if c_type == "int64_t" else np.int32) for name, c_type in PROFILE_EVENT_FIELDS]
)


@dataclass(frozen=True)
class Run:
    """One run_main_graph call: its wall time (ns) on thread `thread`, and its kernel events (`_EVENT_DTYPE`)."""

    start_ns: int
    end_ns: int
    thread: int
    events: np.ndarray


@dataclass(frozen=True)
class Row:
    """One line of a profile table: a group of nodes (or an op type) over the runs recorded."""

    label: str
    op_type: str
    nodes: tuple[str, ...]
    calls: float
    """Kernel calls per run."""
    seconds: float
    """Self time in a run: `share` of the median run."""
    share: float
    """Of a run's wall time: the mean over the runs."""
    flops: int | None
    """Per run; None where a node's count is unknown (symbolic dims)."""
    parallel: str
    """Whether its kernels may split over the thread pool: "yes", "no" or "part" (some of them)."""

    @property
    def gflops_per_second(self) -> float | None:
        return self.flops / self.seconds / 1e9 if self.flops and self.seconds > 0 else None


@dataclass(frozen=True)
class _Group:
    """The kernels computing one set of nodes."""

    nodes: tuple[str, ...]
    op_type: str
    kernels: tuple[int, ...]
    flops: int | None
    """Of one execution of the nodes (those whose FLOPs count here, see the module docstring)."""
    parallel: str


class Profile:
    """The kernel events of a profiled library's runs, accumulated until `clear()`; safe to share across threads."""

    def __init__(self, description: object, read_events: Callable, model: str):
        self.model = os.path.basename(model)
        self._read_events = read_events
        try:
            self.kernels = [(str(k["name"]), tuple(str(n) for n in k["nodes"])) for k in description["kernels"]]
            self.parallel = [k["parallel"] is True for k in description["kernels"]]
            self.nodes = {str(name): dict(node) for name, node in description["nodes"].items()}
            if any(name not in self.nodes for _, names in self.kernels for name in names):
                raise ValueError("a kernel names a node that is not listed")
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise InvalidModelError(f"malformed signature 'profile' entry: {error!r}", model=model) from None
        self._groups, self._group_of_kernel = self._group_kernels()
        self._lock = threading.Lock()
        self.runs: list[Run] = []

    def _group_kernels(self) -> tuple[list[_Group], list[int]]:
        by_nodes: dict[tuple[str, ...], list[int]] = {}
        for number, (name, nodes) in enumerate(self.kernels):
            by_nodes.setdefault(nodes or (name,), []).append(number)
        counted: set[str] = set()
        groups = []
        for nodes, kernels in by_nodes.items():
            known = [n for n in nodes if n in self.nodes]
            op_type = "+".join(dict.fromkeys(self.nodes[n]["op_type"] for n in known)) or "(no node)"
            fresh = [n for n in known if n not in counted]
            counted.update(fresh)
            counts = [self.nodes[n].get("flops") for n in fresh]
            flops = None if None in counts or not known else sum(counts)
            groups.append(_Group(nodes, op_type, tuple(kernels), flops, _either([self.parallel[k] for k in kernels])))
        group_of_kernel = [0] * len(self.kernels)
        for index, group in enumerate(groups):
            for kernel in group.kernels:
                group_of_kernel[kernel] = index
        return groups, group_of_kernel

    def timed(self, run: Callable[..., int], *args) -> int:
        """Call `run(*args)` (run_main_graph) and, if it succeeds, record it with the calling thread's events."""
        start = time.monotonic_ns()
        status = run(*args)
        end = time.monotonic_ns()
        if status == 0:
            pointer = ctypes.c_void_p()
            count = self._read_events(ctypes.byref(pointer))
            size = count * _EVENT_DTYPE.itemsize
            raw = ctypes.string_at(pointer.value, size) if count > 0 and pointer.value else b""
            events = np.frombuffer(raw, _EVENT_DTYPE).copy()
            if np.any((events["kernel"] < 0) | (events["kernel"] >= len(self.kernels))):
                raise InvalidModelError(
                    "onnxc_profile_events named a kernel the signature does not list", model=self.model
                )
            with self._lock:
                self.runs.append(Run(start, end, threading.get_native_id(), events))
        return status

    def clear(self) -> None:
        """Forget the runs recorded so far (e.g. a warm-up run)."""
        with self._lock:
            self.runs = []

    def _snapshot(self) -> list[Run]:
        with self._lock:
            return list(self.runs)

    def wall_seconds(self) -> float:
        """The median wall time of a run (0 before any run)."""
        runs = self._snapshot()
        return float(np.median([r.end_ns - r.start_ns for r in runs])) / 1e9 if runs else 0.0

    def by_node(self) -> list[Row]:
        """A row per group of nodes, most time first. A row's share is the mean over the runs of
        its share of each run, and its time that share of the median run: a run slowed down as a
        whole by a busy machine changes neither, and the rows add up to the kernels' share."""
        runs = self._snapshot()
        if not runs:
            return []
        group_of_kernel = np.asarray(self._group_of_kernel, np.int64)
        shares = np.zeros((len(runs), len(self._groups)))
        for number, run in enumerate(runs):
            np.add.at(shares[number], group_of_kernel[run.events["kernel"]], run.events["duration_ns"])
            shares[number] /= max(run.end_ns - run.start_ns, 1)
        kernels = np.concatenate([run.events["kernel"] for run in runs])
        calls_of_kernel = np.bincount(kernels, minlength=len(self.kernels)) / len(runs)
        wall = self.wall_seconds()
        rows = []
        for index, group in enumerate(self._groups):
            calls = calls_of_kernel[list(group.kernels)]
            if not calls.any():
                continue
            # A batch loop runs each of the group's kernels once per sample: the nodes ran max(calls) times.
            flops = None if group.flops is None else round(group.flops * calls.max())
            share = float(shares[:, index].mean())
            rows.append(
                Row(
                    _label(group.nodes),
                    group.op_type,
                    group.nodes,
                    float(calls.sum()),
                    share * wall,
                    share,
                    flops,
                    group.parallel,
                )  # fmt: skip
            )
        return sorted(rows, key=lambda row: -row.seconds)

    def by_op_type(self) -> list[Row]:
        """A row per op type (fused groups by their joined op types), most time first."""
        merged: dict[str, list[Row]] = {}
        for row in self.by_node():
            merged.setdefault(row.op_type, []).append(row)
        rows = []
        for op_type, members in merged.items():
            counts = [row.flops for row in members]
            flops = None if None in counts else sum(counts)
            nodes = tuple(n for row in members for n in row.nodes)
            parallel = {row.parallel for row in members}
            rows.append(Row(f"{len(nodes)} nodes", op_type, nodes, sum(row.calls for row in members),
                            sum(row.seconds for row in members), sum(row.share for row in members), flops,
                            parallel.pop() if len(parallel) == 1 else "part"))  # fmt: skip
        return sorted(rows, key=lambda row: -row.seconds)

    def table(self, top: int | None = 20) -> str:
        """The per-op-type table, then the `top` node rows (all if None), in ms per run (see by_node)."""
        runs = len(self._snapshot())
        if not runs:
            return "no profiled runs"
        wall = self.wall_seconds()
        op_rows, node_rows = self.by_op_type(), self.by_node()
        kernels = sum(row.seconds for row in node_rows)
        lines = [
            (
                f"{self.model}: {runs} run(s), median {wall * 1e3:.3f} ms per run, {kernels * 1e3:.3f} ms in kernels "
                f"({100 * kernels / wall if wall else 0:.1f}%; each row: its mean share of a run, times the median run)"
            ),
            "",
            _format(["op type", "nodes", "calls", "ms", "%", "GFLOP/s", "parallel"], [
                [r.op_type, str(len(r.nodes)), f"{r.calls:g}", f"{r.seconds * 1e3:.3f}", f"{100 * r.share:.1f}",
                 _rate(r), r.parallel] for r in op_rows
            ]),
            "",
            _format(["node", "op type", "output", "calls", "ms", "%", "GFLOP/s", "parallel"], [
                [r.label, r.op_type, self._output_dims(r.nodes[-1]), f"{r.calls:g}", f"{r.seconds * 1e3:.3f}",
                 f"{100 * r.share:.1f}", _rate(r), r.parallel]
                for r in node_rows[:top]
            ], text_columns=3),
        ]  # fmt: skip
        if top is not None and len(node_rows) > top:
            lines.append(f"... {len(node_rows) - top} more node rows")
        return "\n".join(lines)

    def _output_dims(self, node: str) -> str:
        """`1x64x56x56`: the dims of the node's first output, as far as the signature knows them."""
        outputs = self.nodes.get(node, {}).get("outputs") or [None]
        return "x".join(map(str, outputs[0])) if outputs[0] is not None else ""

    def trace(self) -> dict:
        """The runs as a Chrome trace (the JSON object format, which Perfetto and chrome://tracing open):
        an "X" event per run and per kernel call, times in µs from the first run's start."""
        runs = self._snapshot()
        origin = min((r.start_ns for r in runs), default=0)
        pid = os.getpid()
        events: list[dict] = [
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": f"onnxc {self.model}"}}
        ]
        for number, run in enumerate(runs):
            events.append({"ph": "X", "name": "run_main_graph", "cat": "Session", "pid": pid, "tid": run.thread,
                           "ts": (run.start_ns - origin) / 1e3, "dur": (run.end_ns - run.start_ns) / 1e3,
                           "args": {"run": number}})  # fmt: skip
            for start, duration, kernel in zip(run.events["start_ns"], run.events["duration_ns"], run.events["kernel"]):
                group = self._groups[self._group_of_kernel[kernel]]
                events.append({
                    "ph": "X", "name": "+".join(group.nodes), "cat": group.op_type, "pid": pid, "tid": run.thread,
                    "ts": (int(start) - origin) / 1e3, "dur": int(duration) / 1e3,
                    "args": {"kernel": self.kernels[kernel][0], "parallel": self.parallel[kernel], "run": number,
                             "nodes": [{"name": n, **self.nodes[n]} for n in group.nodes if n in self.nodes]},
                })  # fmt: skip
        return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"model": self.model}}

    def save_trace(self, path: str | os.PathLike) -> Path:
        """Write `trace()` as JSON to `path`; returns the path."""
        path = Path(path)
        path.write_text(json.dumps(self.trace()))
        return path


def _either(flags: Sequence[bool]) -> str:
    return "yes" if all(flags) else "no" if not any(flags) else "part"


def _label(nodes: Sequence[str]) -> str:
    return nodes[0] if len(nodes) == 1 else f"{nodes[0]} (+{len(nodes) - 1} fused)"


def _rate(row: Row) -> str:
    rate = row.gflops_per_second
    return "" if rate is None else f"{rate:.1f}"


def _format(header: list[str], rows: list[list[str]], text_columns: int = 1) -> str:
    """A markdown table, the first `text_columns` left-aligned and the numbers right-aligned."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]

    def line(cells: list[str]) -> str:
        aligned = (c.ljust(w) if i < text_columns else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "| " + " | ".join(aligned) + " |"

    rule = (
        "|" + "|".join("-" * (w + 2) if i < text_columns else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    )
    return "\n".join([line(header), rule, *map(line, rows)])
