"""`onnxc run OUT.so ...`: run a compiled library from the shell.

A library built for another architecture (aarch64, ppc64le, riscv64, s390x on
an x86 host) runs transparently under qemu-user (`onnxc.tools.emulation`); its
latencies are then emulated time. A WebAssembly module (`--target wasm32`) runs
in node the same way.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="onnxc run", description="Run a compiled model library.")
    parser.add_argument("library", help="the .so (or .wasm) written by onnxc")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="an input as a .npy file (repeatable); missing inputs are random",
    )
    parser.add_argument("--output-dir", help="write each output as NAME.npy here")
    parser.add_argument("--repeat", type=int, default=1, help="run N times and print the median latency")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print the time per op type and per node (a library built with 'onnxc --profile'; with --repeat, "
        "after one warm-up run, over the runs) and write a Chrome/Perfetto trace",
    )
    parser.add_argument(
        "--trace", metavar="FILE.json", help="where --profile writes the trace (default: LIBRARY.trace.json here)"
    )
    parser.add_argument("--top", type=int, default=20, help="node rows --profile prints (default 20)")
    parser.add_argument(
        "--threads", type=int, help="threads of the library's pool (default: ONNXC_NUM_THREADS or the CPUs)"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def main(argv: list[str]) -> int:
    import numpy as np

    from onnxc.runtime import Session
    from onnxc.tools.emulation import EmulatedSession, needs_emulation
    from onnxc.tools.verification import complete_feeds

    args = parser().parse_args(argv)
    repeat = max(1, args.repeat)
    emulated = needs_emulation(args.library)
    if emulated and (args.profile or args.threads):
        raise SystemExit("onnxc run: --profile and --threads need a library for this machine, not an emulated one")
    if emulated:
        session = EmulatedSession(args.library, repeat=repeat)
    else:
        session = Session(args.library, threads=args.threads, profile=args.profile or args.trace is not None)
    feeds = {}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"onnxc run: expected NAME=FILE.npy, got '{item}'")
        feeds[name] = np.load(path)
    for arg in session.get_inputs():
        if arg.name in feeds and feeds[arg.name].dtype == np.dtype("V1") and arg.dtype.itemsize == 1:
            # np.save writes an ml_dtypes array (float8, int4...) as raw bytes: read them as such.
            feeds[arg.name] = feeds[arg.name].view(arg.dtype)
    feeds = complete_feeds(session.get_inputs(), feeds, seed=0)  # symbolic dims: as given, else 1
    if emulated:
        outputs = session.run(None, feeds)  # all `repeat` runs in one emulator process
        latencies = session.last_latencies
    else:
        if session.profile is not None and repeat > 1:  # the first run faults in the arena and starts the pool
            session.run(None, feeds)
            session.profile.clear()
        latencies = []
        for _ in range(repeat):
            start = time.perf_counter()
            outputs = session.run(None, feeds)
            latencies.append(time.perf_counter() - start)
    for arg, value in zip(session.get_outputs(), outputs):
        if isinstance(value, list):  # a sequence of maps (ZipMap); --output-dir saves its [N, keys] values
            print(f"{arg.name}: {arg.type}[{len(value)}] {value[:2]}{' ...' if len(value) > 2 else ''}")
            value = np.array([list(row.values()) for row in value], dtype=np.float32)
        else:
            flat = value.reshape(-1)
            preview = np.array2string(flat[:8], precision=5, separator=", ")
            print(f"{arg.name}: {value.dtype}{list(value.shape)} {preview}{' ...' if flat.size > 8 else ''}")
        if args.output_dir:
            Path(args.output_dir).mkdir(parents=True, exist_ok=True)
            np.save(Path(args.output_dir) / f"{arg.name}.npy", value)
    if repeat > 1:
        under = f" (emulated by {session.emulator.program})" if emulated else ""
        print(f"median latency: {np.median(latencies) * 1000:.3f} ms over {repeat} runs{under}")
    if not emulated and session.profile is not None:
        print(session.profile.table(top=args.top))
        trace = session.profile.save_trace(args.trace or f"{Path(args.library).stem}.trace.json")
        print(f"wrote {trace} (open it in https://ui.perfetto.dev or chrome://tracing)")
    return 0
