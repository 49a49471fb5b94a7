"""What profiling costs: `python benchmarks/profile_cost.py [--models mnist,bert,resnet50] [--seconds S] [--threads T]`.

Each model (benchmarks/models.py) is compiled twice, as is and with `--profile`,
and three ways of running it are timed in turn, run by run (A B C A B C...,
for about `--seconds` each, medians of single runs: differences of a percent
drown in this machine's drift when whole samples alternate): the plain
library, the profiled library with `Session(profile=False)` (its kernels still
timed, the events not read), and with `Session(profile=True)` (events copied
into the Profile after each run). A plain build is the build without `--profile`: it
has no timing code at all (tests/test_profiling.py checks that its bytes do
not change), so "off" costs nothing by construction; the ratios say what
turning it on costs. Also printed: kernel calls per run and the share of the
run's wall time the kernels cover.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).parent))
import models  # noqa: E402

import onnxc  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mnist,bert,resnet50")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per way of running (default 3)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    print(
        "| model | plain ms | profiled, off ms | profiled, on ms | off/plain | on/plain | kernel calls | in kernels |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as directory:
        for name in args.models.split(","):
            path = Path(directory) / f"{name}.onnx"
            onnx.save(models.load(name), path)
            plain = onnxc.compile(path, Path(directory) / f"{name}.so")
            profiled = onnxc.compile(path, Path(directory) / f"{name}-profiled.so", profile=True)
            # A copy (another inode): glibc would share one loaded library, its weights warm from the other run.
            copy = shutil.copyfile(profiled, Path(directory) / f"{name}-profiled-copy.so")
            sessions = {
                "plain": onnxc.Session(plain, threads=args.threads),
                "off": onnxc.Session(profiled, threads=args.threads),
                "on": onnxc.Session(copy, threads=args.threads, profile=True),
            }
            rng = np.random.default_rng(0)
            feed = {a.name: rng.standard_normal(a.shape).astype(np.float32) for a in sessions["plain"].get_inputs()}
            ms = _run_by_run(sessions, feed, args.seconds)
            rows = sessions["on"].profile.by_node()
            calls, covered = sum(row.calls for row in rows), sum(row.share for row in rows)
            print(
                f"| {name} | {ms['plain']:.3f} | {ms['off']:.3f} | {ms['on']:.3f} | {ms['off'] / ms['plain']:.3f} "
                f"| {ms['on'] / ms['plain']:.3f} | {calls:g} | {100 * covered:.1f}% |",
                flush=True,
            )
            del sessions
    return 0


def _run_by_run(sessions: dict, feed: dict, seconds: float) -> dict[str, float]:
    """Median milliseconds of single runs of each session, taken in turn after a warm-up."""
    for session in sessions.values():
        for _ in range(10):
            session.run(None, feed)
    times: dict[str, list[int]] = {name: [] for name in sessions}
    deadline = time.perf_counter() + seconds * len(sessions)
    while time.perf_counter() < deadline or min(map(len, times.values())) < 20:
        for name, session in sessions.items():
            start = time.perf_counter_ns()
            session.run(None, feed)
            times[name].append(time.perf_counter_ns() - start)
    return {name: float(np.median(samples)) / 1e6 for name, samples in times.items()}


if __name__ == "__main__":
    sys.exit(main())
