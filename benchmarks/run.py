"""onnxc against onnxruntime, side by side: `python benchmarks/run.py [--models a,b] [--threads 1,2] [--repeat N]
[--json out.json] [--libraries DIR]`.

For each model (benchmarks/models.py), in its own process so that models do not
share memory: onnxc compiles it in a child process (compile time and the
compiler's peak RSS), then onnxruntime and the compiled library run the same
random inputs at each thread count in this process: warm-up runs, then
`--repeat` timed samples of each, taken in turn (onnxruntime, onnxc,
onnxruntime, ...) because this machine's speed drifts by tens of percent
over minutes, with a pause before each sample so that the spinning workers of
one engine's thread pool have gone to sleep before the other runs; the median
of each is reported. A sample is one run, or for a
model that runs in less than MIN_SAMPLE_SECONDS the mean of as many runs as
fill it (as `timeit` does), so that a 0.05 ms model is not timed by single
calls of a clock and the noise of one scheduler tick. numpy's BLAS threads are
kept to one (OPENBLAS_NUM_THREADS=1): once woken they spin, competing with the
engines measured. Outputs must match onnxruntime within
1e-4 relative to max|ref| (the light CNNs also output their pre-Softmax logits).

Peak RSS of an engine is measured as a deployment sees it, each engine alone in a
fresh process at the largest thread count: onnxruntime loads the .onnx file,
onnxc its library, and both run twice; the peak is the process's high-water mark
while it loads and runs minus the RSS just before it loads (the interpreter,
numpy and the engine's own Python module already loaded). A model that fails to
compile is listed with its error.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

TOLERANCE = 1e-4
MIN_SAMPLE_SECONDS = 0.02
WARM_UP_SECONDS = 0.2
PAUSE_SECONDS = 0.1
"""Idle time before each sample: both engines' thread pools spin for a while after a run, and
one engine's spinning workers must not compete with the other's sample (onnxruntime 1.32's
intra-op worker spins about 40 ms after a run, measured by its thread's CPU time; onnxc's
0.2 ms)."""


# ------------------------------------------------------------------ in the child processes


def _compile_child(name: str, output: str, opt_level: int) -> dict:
    """Compile `name` to `output` (and save the model beside it, for `_memory_child`); seconds
    of the compile call and the peak RSS of this process."""
    import models
    import onnx

    import onnxc

    model = models.load(name)
    onnx.save(model, _model_path(output))
    start = time.perf_counter()
    onnxc.compile(model, output, opt_level=opt_level)
    seconds = time.perf_counter() - start
    return {"compile_s": seconds, "compile_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _model_path(library: str) -> str:
    return str(Path(library).with_suffix(".onnx"))


def _memory_child(engine: str, path: str, threads: int) -> dict:
    """Peak RSS in MB of loading `engine` from its file (a .onnx for "ort", a library for
    "onnxc") and running it twice on random inputs, in this fresh process."""
    import models
    import numpy as np

    if engine == "ort":
        import onnxruntime  # noqa: F401  (its shared library loads before the baseline)
    else:
        from onnxc.runtime import Session
    before = _status_mb("VmRSS")
    _reset_peak_rss()
    session = _ort_session(path, threads) if engine == "ort" else Session(path, threads=threads)
    name = Path(path).stem
    feed = models.feed(session.get_inputs(), np.random.default_rng(1), models.bindings(name))
    for _ in range(2):
        session.run(None, feed)
    return {f"{engine}_rss_mb": _status_mb("VmHWM") - before}


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak_rss() -> None:
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def _runs_per_sample(run) -> int:
    """Warm `run` up; the number of runs that fill MIN_SAMPLE_SECONDS (at least one)."""
    start, runs = time.perf_counter(), 0
    while time.perf_counter() - start < WARM_UP_SECONDS or runs < 3:
        run()
        runs += 1
    return max(1, round(MIN_SAMPLE_SECONDS * runs / (time.perf_counter() - start)))


def _interleaved(runs: dict, repeat: int, statistic=statistics.median) -> dict:
    """Median (or another `statistic`) milliseconds per run of each engine: `repeat` samples
    each, taken in turn (A B A B ...), so that both see the same state of the machine."""
    per_sample = {name: _runs_per_sample(run) for name, run in runs.items()}
    times = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            time.sleep(PAUSE_SECONDS)
            start = time.perf_counter()
            for _ in range(per_sample[name]):
                run()
            times[name].append((time.perf_counter() - start) * 1000 / per_sample[name])
    return {name: statistic(samples) for name, samples in times.items()}


def _ort_session(model: bytes | str, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _benchmark_child(name: str, library: str, threads: list[int], repeat: int) -> dict:
    """Both engines timed in turn at each thread count on the same inputs; their outputs compared."""
    import models
    import numpy as np

    from onnxc.runtime import Session

    model = models.load(name)
    serialized = model.SerializeToString()
    feed = models.feed(_ort_session(serialized, 1).get_inputs(), np.random.default_rng(1), models.bindings(name))
    result = {"gflop": models.gflop(model, models.bindings(name)), "threads": {}}
    reference = _ort_session(serialized, 1).run(None, feed)

    errors = []
    for count in threads:
        engines = {"ort_ms": _ort_session(serialized, count), "onnxc_ms": Session(library, threads=count)}
        result["threads"][count] = _interleaved(
            {key: functools.partial(engine.run, None, feed) for key, engine in engines.items()}, repeat
        )
        for got, want in zip(engines["onnxc_ms"].run(None, feed), reference):
            errors.append(float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30)))
        del engines
    result["max_error"] = max(errors)
    return result


# ------------------------------------------------------------------------- the driver


def _child(arguments: list[str], timeout: float) -> tuple[dict | None, str]:
    """Run this script with `arguments`; its last stdout line as JSON, or None and the error text."""
    try:
        environment = os.environ | {"OPENBLAS_NUM_THREADS": "1"}
        done = subprocess.run(
            [sys.executable, __file__, *arguments], capture_output=True, text=True, timeout=timeout, env=environment
        )
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:.0f} s"
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        return None, lines[-1] if lines else f"exit status {done.returncode}"
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


def _prebuilt(name: str, built: Path, library: str) -> tuple[dict | None, str]:
    """Use the library `built` beforehand for model `name` (copied to `library`, the model saved
    beside it as `_compile_child` does); no compile time is measured."""
    import models
    import onnx

    if not built.is_file():
        return None, f"no library {built}"
    shutil.copyfile(built, library)
    onnx.save(models.load(name), _model_path(library))
    return {"compile_s": math.nan}, ""


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _seconds(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1f}"


def _row(cells: list[str], widths: list[int]) -> str:
    return "| " + " | ".join(cell.rjust(width) for cell, width in zip(cells, widths)) + " |"


def _table(records: list[dict], threads: list[int]) -> str:
    header = ["model", "GFLOP", "thr", "onnxc ms", "ORT ms", "onnxc/ORT", "onnxc GFLOP/s", "ORT GFLOP/s",
              "compile s", "onnxc RSS MB", "ORT RSS MB", "max err", "match"]  # fmt: skip
    rows, failures = [], []
    for record in records:
        if "error" in record:
            failures.append(f"- {record['model']}: {record['error']}")
            continue
        for count in threads:
            timing = record["threads"][str(count)]
            onnxc_ms, ort_ms = timing["onnxc_ms"], timing["ort_ms"]
            rows.append([
                record["model"], f"{record['gflop']:.3f}", str(count), f"{onnxc_ms:.2f}", f"{ort_ms:.2f}",
                f"{onnxc_ms / ort_ms:.2f}", f"{record['gflop'] / onnxc_ms * 1000:.1f}",
                f"{record['gflop'] / ort_ms * 1000:.1f}", _seconds(record["compile_s"]),
                f"{record['onnxc_rss_mb']:.0f}", f"{record['ort_rss_mb']:.0f}", f"{record['max_error']:.1e}",
                "yes" if record["max_error"] <= TOLERANCE else "NO",
            ])  # fmt: skip
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    lines = [_row(header, widths), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [_row(row, widths) for row in rows]
    lines.append("")
    for count in threads:
        ratios = [r["threads"][str(count)]["onnxc_ms"] / r["threads"][str(count)]["ort_ms"] for r in records
                  if "error" not in r]  # fmt: skip
        if ratios:
            geomean = statistics.geometric_mean(ratios)
            lines.append(f"geometric mean onnxc/ORT at {count} thread(s): {geomean:.2f} over {len(ratios)} models")
    if failures:
        lines += ["", "not compiled:", *failures]
    return "\n".join(lines)


def main() -> int:
    import models

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        default=",".join(models.MODELS),
        help=f"comma-separated, from {models.MODELS}, {tuple(models.FAMILIES)} and {models.TORCH}; "
        "'families' and 'torch' name the latter two",
    )
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per engine and thread count (default 5)")
    parser.add_argument("--opt-level", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per model and step (default 900)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument(
        "--libraries",
        help="a folder of libraries built beforehand (MODEL.so, e.g. with --mcpu for another machine): "
        "run those instead of compiling",
    )
    parser.add_argument("--compile-child", nargs=2, metavar=("MODEL", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--benchmark-child", nargs=2, metavar=("MODEL", "LIB"), help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", nargs=2, metavar=("ENGINE", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]

    if args.compile_child:
        print(json.dumps(_compile_child(*args.compile_child, args.opt_level)))
        return 0
    if args.benchmark_child:
        print(json.dumps(_benchmark_child(*args.benchmark_child, threads, args.repeat)))
        return 0
    if args.memory_child:
        print(json.dumps(_memory_child(*args.memory_child, max(threads))))
        return 0

    groups = {"families": tuple(models.FAMILIES), "torch": models.TORCH}
    names = [m for n in args.models.split(",") if n for m in groups.get(n, [n])]
    unknown = [n for n in names if n not in (*models.MODELS, *models.FAMILIES, *models.TORCH)]
    if unknown:
        parser.error(
            f"unknown models {unknown}; choose from {models.MODELS}, {tuple(models.FAMILIES)} and {models.TORCH}"
        )
    records = []
    with tempfile.TemporaryDirectory(prefix="onnxc-bench-") as work:
        for name in names:
            library = str(Path(work) / f"{name}.so")
            if args.libraries:
                compiled, error = _prebuilt(name, Path(args.libraries) / f"{name}.so", library)
            else:
                print(f"{name}: compiling", file=sys.stderr, flush=True)
                compiled, error = _child(["--compile-child", name, library, "--opt-level", str(args.opt_level)],
                                         args.timeout)  # fmt: skip
            if compiled is None:
                records.append({"model": name, "error": f"compile failed: {error}"})
                continue
            print(f"{name}: running ({_seconds(compiled['compile_s'])} s to compile)", file=sys.stderr, flush=True)
            measured, errors = {**compiled}, []
            steps = [["--memory-child", "ort", _model_path(library)], ["--memory-child", "onnxc", library],
                     ["--benchmark-child", name, library, "--repeat", str(args.repeat)]]  # fmt: skip
            for step in steps:
                result, error = _child([*step, "--threads", args.threads], args.timeout)
                measured.update(result or {})
                errors += [error] if result is None else []
            if errors:
                records.append({"model": name, "error": f"run failed: {errors[0]}", **compiled})
                continue
            records.append({"model": name, **measured})
            os.unlink(library)
            os.unlink(_model_path(library))

    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {_cpu_name()}, {os.cpu_count()} CPUs, "
          f"median of {args.repeat} runs\n")  # fmt: skip
    print(_table(json.loads(json.dumps(records)), threads))
    if args.json:
        document = {"date": datetime.now(timezone.utc).isoformat(), "cpu": _cpu_name(), "repeat": args.repeat,
                    "threads": threads, "models": records}  # fmt: skip
        Path(args.json).write_text(json.dumps(document, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
