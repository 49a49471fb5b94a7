"""`onnxc MODEL.onnx [-o OUT.so] ...`: compile a model."""

from __future__ import annotations

import argparse
import sys
import time


def parse_shape(text: str) -> tuple[str, list[int]]:
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


def add_shape_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """The repeatable `--shape NAME=DIMS` option of every subcommand that imports a model."""
    parser.add_argument("--shape", action="append", type=parse_shape, default=[], metavar="NAME=DIMS", help=help_text)


def parser() -> argparse.ArgumentParser:
    from onnxc.compiler import EMIT_SUFFIXES, pipeline

    parser = argparse.ArgumentParser(
        prog="onnxc",
        description="Compile an ONNX model to a native shared library. "
        "Also: 'onnxc run LIB.so ...' runs a compiled library, 'onnxc verify MODEL.onnx' checks a compiled "
        "model against onnxruntime, 'onnxc inspect MODEL.onnx' summarizes a model (each has --help).",
        epilog=f"passes at -O0: {', '.join(pipeline(0))}; at -O1..-O3: {', '.join(pipeline(3))}",
    )
    parser.add_argument("model", help="the .onnx model file")
    by_kind = ", ".join(f"{kind}: MODEL{suffix}" for kind, suffix in EMIT_SUFFIXES.items() if kind != "lib")
    parser.add_argument(
        "-o",
        "--output",
        help="output file; '-' writes IR text to standard output (default: beside MODEL.onnx, MODEL.so; "
        f"with --emit, {by_kind})",
    )
    for level in range(4):
        parser.add_argument(
            f"-O{level}",
            dest="opt_level",
            action="store_const",
            const=level,
            help="only the graph passes correctness needs (see --print-pipeline)"
            if level == 0
            else f"graph optimizations, LLVM -O{level}" + (" (default)" if level == 3 else ""),
        )
    parser.set_defaults(opt_level=3)
    parser.add_argument("--emit", choices=tuple(EMIT_SUFFIXES), default="lib", help="what to write (default: lib)")
    parser.add_argument(
        "--target",
        help="x86_64 (default: host), aarch64, ppc64le, riscv64, s390x, wasm32 (a .wasm module), or an LLVM triple",
    )
    parser.add_argument(
        "--mcpu",
        help="LLVM CPU name (default: the host's for native builds, generic for aarch64, generic-rv64 "
        "for riscv64, pwr9 for ppc64le, z14 for s390x)",
    )
    parser.add_argument(
        "--mattr", help="LLVM target features to add, comma-separated (e.g. +v: RVV on riscv64; +sve on aarch64)"
    )
    add_shape_option(parser, "pin an input's shape, e.g. --shape input=1,3,224,224 (repeatable)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="time every kernel call and name its ONNX nodes (see 'onnxc run --profile'); "
        "without it the library has no timing code",
    )
    parser.add_argument("--print-pipeline", action="store_true", help="print the passes run at this -O level")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print each stage (import, each pass, LLVM optimize, object emission, weights object, link) "
        "with its elapsed time as it ends",
    )
    parser.add_argument(
        "--time-passes", action="store_true", help="print a table of the time per stage (ms, %% of total) at the end"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from onnxc.compiler import CompileLog, compile, default_output_path, pipeline

    if args.print_pipeline:
        print(",".join(pipeline(args.opt_level)))
    log = CompileLog(on_stage=_print_stage if args.verbose else None)
    start = time.perf_counter()
    out = compile(
        args.model,
        args.output or default_output_path(args.model, args.emit, args.target),
        target=args.target,
        cpu=args.mcpu,
        features=args.mattr,
        opt_level=args.opt_level,
        shapes=dict(args.shape),
        emit=args.emit,
        log=log,
        profile=args.profile,
    )
    if args.verbose:
        print(f"  {'total':<24} {(time.perf_counter() - start) * 1000:9.1f} ms", file=sys.stderr)
    if args.time_passes:
        print(log.table(), file=sys.stderr)
    if str(out) != "-":
        print(f"wrote {out}")
    return 0


def _print_stage(stage: str, seconds: float) -> None:
    print(f"  {stage:<24} {seconds * 1000:9.1f} ms", file=sys.stderr, flush=True)
