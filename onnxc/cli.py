"""The `onnxc` command.

    onnxc MODEL.onnx -o OUT.so [-O0..-O3] [--emit KIND] [--target T] [--shape NAME=DIMS] [-v]
    onnxc run OUT.so [--input NAME=FILE.npy ...] [--output-dir DIR] [--repeat N]

Errors print as one line and exit with status 1 (`--debug` shows the traceback).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from onnxc.errors import OnnxcError


def _parse_shape(text: str) -> tuple[str, list[int]]:
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=D0,D1,..., got '{text}'")
    try:
        values = [int(d) for d in dims.split(",")] if dims else []
    except ValueError:
        raise argparse.ArgumentTypeError(f"dims must be integers in '{text}'") from None
    if any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"dims must be non-negative in '{text}'")
    return name, values


def _compile_parser() -> argparse.ArgumentParser:
    from onnxc.compiler import EMIT_KINDS

    parser = argparse.ArgumentParser(
        prog="onnxc",
        description="Compile an ONNX model to a native shared library. "
        "Also: 'onnxc run LIB.so ...' runs a compiled library.",
    )
    parser.add_argument("model", help="the .onnx model file")
    parser.add_argument("-o", "--output", required=True, help="output file (.so, or IR text with --emit)")
    for level in range(4):
        parser.add_argument(f"-O{level}", dest="opt_level", action="store_const", const=level)
    parser.set_defaults(opt_level=3)
    parser.add_argument("--emit", choices=EMIT_KINDS, default="lib", help="what to write (default: lib)")
    parser.add_argument("--target", help="x86_64 (default: host), ppc64le, s390x, or an LLVM triple")
    parser.add_argument("--shape", action="append", type=_parse_shape, default=[], metavar="NAME=DIMS",
                        help="pin an input's shape, e.g. --shape input=1,3,224,224 (repeatable)")
    parser.add_argument("--print-pipeline", action="store_true", help="print the passes run at this -O level")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each stage with its elapsed time")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def _run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="onnxc run", description="Run a compiled model library.")
    parser.add_argument("library", help="the .so written by onnxc")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input as a .npy file (repeatable); missing inputs are random")
    parser.add_argument("--output-dir", help="write each output as NAME.npy here")
    parser.add_argument("--repeat", type=int, default=1, help="run N times and print the median latency")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def compile_main(argv: list[str]) -> int:
    args = _compile_parser().parse_args(argv)
    from onnxc.compiler import CompileLog, compile, pipeline

    if args.print_pipeline:
        print(",".join(pipeline(args.opt_level)))
    log = CompileLog(on_stage=(lambda stage, s: print(f"  {stage:<24} {s * 1000:9.1f} ms", file=sys.stderr))
                     if args.verbose else None)
    start = time.perf_counter()
    out = compile(args.model, args.output, target=args.target, opt_level=args.opt_level,
                  shapes=dict(args.shape), emit=args.emit, log=log)
    if args.verbose:
        print(f"  {'total':<24} {(time.perf_counter() - start) * 1000:9.1f} ms", file=sys.stderr)
    if str(out) != "-":
        print(f"wrote {out}")
    return 0


def run_main(argv: list[str]) -> int:
    import numpy as np

    from onnxc.runtime import Session

    args = _run_parser().parse_args(argv)
    session = Session(args.library)
    feeds = {}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"onnxc run: expected NAME=FILE.npy, got '{item}'")
        feeds[name] = np.load(path)
    rng = np.random.default_rng(0)
    for arg in session.get_inputs():
        if arg.name not in feeds:
            feeds[arg.name] = _random_input(rng, arg.dtype, arg.shape)
    latencies = []
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        outputs = session.run(None, feeds)
        latencies.append(time.perf_counter() - start)
    for arg, value in zip(session.get_outputs(), outputs):
        if args.output_dir:
            Path(args.output_dir).mkdir(parents=True, exist_ok=True)
            np.save(Path(args.output_dir) / f"{arg.name}.npy", value)
        flat = value.reshape(-1)
        preview = np.array2string(flat[:8], precision=5, separator=", ")
        print(f"{arg.name}: {value.dtype}{list(value.shape)} {preview}{' ...' if flat.size > 8 else ''}")
    if args.repeat > 1:
        print(f"median latency: {np.median(latencies) * 1000:.3f} ms over {args.repeat} runs")
    return 0


def _random_input(rng, dtype, shape):
    import numpy as np

    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, 10, shape).astype(dtype)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        if argv and argv[0] == "run":
            return run_main(argv[1:])
        return compile_main(argv)
    except OnnxcError as exc:
        if debug:
            raise
        print(f"onnxc: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # an internal bug: still one line unless --debug
        if debug:
            raise
        print(f"onnxc: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
