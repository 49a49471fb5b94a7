"""`onnxc verify MODEL.onnx ...`: check a compiled model against onnxruntime (or
onnx.reference) and, on a mismatch, name the first node that goes wrong."""

from __future__ import annotations

import argparse
import sys

from onnxc.commands.compile import add_shape_option
from onnxc.errors import InputError


def parser() -> argparse.ArgumentParser:
    from onnxc.tools.verification import RANDOM_INT_RANGE

    low, high = RANDOM_INT_RANGE
    parser = argparse.ArgumentParser(
        prog="onnxc verify",
        description="Compile a model, run it, and compare every output with onnxruntime (or onnx.reference "
        "when onnxruntime is not installed). An output passes when every element satisfies "
        "|onnxc - reference| <= atol + rtol * |reference|; 'max rel' is the max abs error divided by the "
        "largest |reference|. On FAIL, a -O0 build exposing every intermediate value is compared node by "
        "node and the first node (topological order) whose output diverges is printed. Exit status: 0 PASS, "
        "1 FAIL or error.",
    )
    parser.add_argument("model", help="the .onnx model file")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help=f"an input as a .npy file (repeatable); missing inputs are random (seeded): standard normal "
        f"floats, integers in [{low}, {high})",
    )
    add_shape_option(
        parser,
        "pin an input's symbolic dims, e.g. --shape input=1,3,224,224 (inputs given as files are pinned "
        "to the file's shape)",
    )
    parser.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance (default 1e-3)")
    parser.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance (default 1e-4)")
    for level in range(4):
        parser.add_argument(f"-O{level}", dest="opt_level", action="store_const", const=level)
    parser.set_defaults(opt_level=3)
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each step with its elapsed time")
    parser.add_argument("--no-locate", action="store_true", help="on FAIL, do not search for the divergent node")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def main(argv: list[str]) -> int:
    import numpy as np

    from onnxc.tools.verification import verify

    args = parser().parse_args(argv)
    inputs = {}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep or not name:
            raise InputError(f"expected --input NAME=FILE.npy, got '{item}'")
        try:
            inputs[name] = np.load(path)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read input '{name}' from {path}: {exc}") from None
    report = verify(
        args.model,
        inputs,
        shapes=dict(args.shape),
        rtol=args.rtol,
        atol=args.atol,
        opt_level=args.opt_level,
        seed=args.seed,
        locate=not args.no_locate,
        progress=_print_step if args.verbose else None,
    )
    print(format_report(report))
    return 0 if report.passed else 1


def _print_step(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def format_report(report) -> str:
    lines = [f"reference: {report.reference}; tolerance: rtol {report.rtol:g}, atol {report.atol:g}"]
    rows = [("output", "shape", "max abs", "max rel", "result")]
    for c in report.outputs:
        rows.append((c.name, str(list(c.shape)), f"{c.max_abs:.3g}", f"{c.max_rel:.3g}", _verdict(c)))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    if report.passed:
        lines.append("PASS")
        return "\n".join(lines)
    lines.append("FAIL")
    divergence = report.divergence
    if divergence is not None:
        node, c = divergence.node, divergence.comparison
        lines.append(
            f"first divergent node ({divergence.position} of {divergence.node_count} in topological order): "
            f"'{node.name or '<unnamed>'}' ({node.op_type})"
        )
        lines.append(f"  attributes: {divergence.attributes or '{}'}")
        for name, shape in divergence.input_shapes:
            lines.append(f"  input  {name}: {list(shape) if shape is not None else '?'}")
        lines.append(f"  output {c.name}: {_details(c)}")
    elif report.locate_error:
        lines.append(f"could not search for the divergent node: {report.locate_error}")
    elif report.located:
        lines.append(
            "every intermediate value of the -O0 debug build agrees with the reference: the difference comes "
            "from an optimization (try -O0)"
        )
    return "\n".join(lines)


def _verdict(c) -> str:
    if c.passed:
        return "PASS"
    if c.shape != c.expected_shape:
        return f"FAIL (reference shape {list(c.expected_shape)})"
    return f"FAIL ({c.mismatched} of {c.size} elements)"


def _details(c) -> str:
    if c.shape != c.expected_shape:
        return f"shape {list(c.shape)}, reference shape {list(c.expected_shape)}"
    return (
        f"max abs err {c.max_abs:.3g}, max rel err {c.max_rel:.3g}, {c.mismatched} of {c.size} elements outside "
        f"tolerance; worst at {list(c.worst_index)}: onnxc {c.actual_value:.6g}, reference {c.expected_value:.6g}"
    )
