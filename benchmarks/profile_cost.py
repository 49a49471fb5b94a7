"""What profiling costs: `python benchmarks/profile_cost.py [--models mnist,bert,resnet50] [--repeat N] [--threads T]`.

Each model (benchmarks/models.py) is compiled twice, as is and with `--profile`,
and three ways of running it are timed in turn (benchmarks/run.py's
`_interleaved`: samples A B C A B C..., medians): the plain library, the
profiled library with `Session(profile=False)` (its kernels still timed, the
events not read), and with `Session(profile=True)` (events copied into the
Profile after each run). A plain build is the build without `--profile`: it
has no timing code at all (tests/test_profiling.py checks that its bytes do
not change), so "off" costs nothing by construction; the ratios say what
turning it on costs. Also printed: kernel calls per run and the share of the
run's wall time the kernels cover.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).parent))
import models  # noqa: E402
from run import _interleaved  # noqa: E402

import onnxc  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mnist,bert,resnet50")
    parser.add_argument("--repeat", type=int, default=9)
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
            sessions = {
                "plain": onnxc.Session(plain, threads=args.threads),
                "off": onnxc.Session(profiled, threads=args.threads),
                "on": onnxc.Session(profiled, threads=args.threads, profile=True),
            }
            rng = np.random.default_rng(0)
            feed = {a.name: rng.standard_normal(a.shape).astype(np.float32) for a in sessions["plain"].get_inputs()}
            ms = _interleaved({k: functools.partial(s.run, None, feed) for k, s in sessions.items()}, args.repeat)
            rows = sessions["on"].profile.by_node()
            calls, covered = sum(row.calls for row in rows), sum(row.share for row in rows)
            print(
                f"| {name} | {ms['plain']:.3f} | {ms['off']:.3f} | {ms['on']:.3f} | {ms['off'] / ms['plain']:.3f} "
                f"| {ms['on'] / ms['plain']:.3f} | {calls:g} | {100 * covered:.1f}% |",
                flush=True,
            )
            del sessions
    return 0


if __name__ == "__main__":
    sys.exit(main())
