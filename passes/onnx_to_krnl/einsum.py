"""Einsum: any equation (explicit or implicit output, ellipsis broadcasting,
repeated labels for diagonals, summed labels) as one loop nest over the output
with a reduction over the summed labels: out[o] = sum_r prod_k input_k[...]."""

from __future__ import annotations

import functools
import math as pymath
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, dims_agree, lowers, shape_of, shape_text

ELLIPSIS = "..."


@dataclass(frozen=True)
class Equation:
    """A parsed equation: the labels of each input's dims and of the output's.
    Ellipsis dims get labels "...0", "...1"... numbered from the left of the
    broadcast ellipsis shape, so that inputs with fewer of them share the
    rightmost labels (numpy broadcasting)."""

    inputs: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]


def _terms(term: str) -> list[str]:
    """The labels of one term, the ellipsis kept as one item."""
    if term.count(ELLIPSIS) > 1:
        raise ValueError(f"more than one ellipsis in '{term}'")
    before, dots, after = term.partition(ELLIPSIS)
    labels = [*before, *([ELLIPSIS] if dots else []), *after]
    if not all(label == ELLIPSIS or label.isalpha() for label in labels):
        raise ValueError(f"term '{term}' has a label that is not a letter")
    return labels


def parse_equation(equation: str, ranks: Sequence[int]) -> Equation:
    """Labels per input and for the output, given the inputs' ranks. Implicit
    output (no '->'): the ellipsis dims, then the labels used once, sorted."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = [_terms(term) for term in lhs.split(",")]
    if len(terms) != len(ranks):
        raise ValueError(f"{len(terms)} terms for {len(ranks)} inputs")
    ellipsis_ranks = []
    for term, rank in zip(terms, ranks):
        letters = len(term) - (ELLIPSIS in term)
        if (ELLIPSIS not in term and letters != rank) or letters > rank:
            raise ValueError(f"term '{''.join(term)}' for an input of rank {rank}")
        ellipsis_ranks.append(rank - letters if ELLIPSIS in term else 0)
    broadcast_rank = max(ellipsis_ranks, default=0)
    dots = tuple(f"{ELLIPSIS}{k}" for k in range(broadcast_rank))

    def expand(term: list[str], ellipsis_rank: int) -> tuple[str, ...]:
        labels: list[str] = []
        for label in term:
            labels.extend(dots[broadcast_rank - ellipsis_rank :] if label == ELLIPSIS else [label])
        return tuple(labels)

    inputs = tuple(expand(term, rank) for term, rank in zip(terms, ellipsis_ranks))
    if arrow:
        output = expand(_terms(rhs), broadcast_rank)
        unknown = set(output) - {label for labels in inputs for label in labels}
        if unknown or len(set(output)) != len(output):
            raise ValueError(f"output '{rhs}' has unknown or repeated labels")
    else:
        letters = [label for term in terms for label in term if label != ELLIPSIS]
        output = dots + tuple(sorted(label for label in set(letters) if letters.count(label) == 1))
    return Equation(inputs, output)


def label_sizes(equation: Equation, shapes: Sequence[Sequence[Bound]]) -> dict[str, Bound | None]:
    """The extent of every label; a dim of 1 stretches to the others (broadcast).
    None where every dim of the label is known at run time only (or 1 but some)."""
    sizes: dict[str, Bound | None] = {}
    for labels, shape in zip(equation.inputs, shapes):
        for label, size in zip(labels, shape):
            known = sizes.get(label, 1)
            if not isinstance(size, int):
                sizes.setdefault(label, None)
                continue
            if known is None:
                known = 1
            if size not in (1, known) and known != 1:
                raise ValueError(f"label '{label}' has sizes {known} and {size}")
            sizes[label] = size if known == 1 else known
    return sizes


@lowers("Einsum", run_time_dims=True)
def lower_einsum(g: GraphLowering, op: OnnxOp) -> None:
    """A label's dims known at run time only are 1 or its extent (the output's dim, or
    the largest of them): they are read at min(i, dim - 1), never past their end."""
    inputs = g.inputs(op)
    element = g.same_element_type(op, [*op.operands, op.results[0]])
    out = g.result(op)
    shapes = [shape_of(buffer) for buffer in inputs]
    try:
        equation = parse_equation(op.attr("equation"), [len(s) for s in shapes])
        sizes = label_sizes(equation, shapes)
    except ValueError as error:
        raise g.shape_error(op, f"equation '{op.attr('equation')}': {error}") from None
    out_shape = shape_of(out)
    for label, size in zip(equation.output, out_shape):
        sizes[label] = size if sizes[label] in (None, 1) else sizes[label]
    for label, size in sizes.items():
        if size is None:  # summed, each dim known at run time only: the largest
            dims = [d for labels, shape in zip(equation.inputs, shapes) for k, d in zip(labels, shape) if k == label]
            sizes[label] = functools.reduce(g.top.max, [d for d in dims if not isinstance(d, int)])
    if not dims_agree([sizes[label] for label in equation.output], out_shape):
        raise g.shape_error(op, f"equation '{op.attr('equation')}' gives no output of shape {shape_text(out_shape)}")
    if all(isinstance(d, int) for d in out_shape) and pymath.prod(out_shape) == 0:
        return
    summed = sorted({label for labels in equation.inputs for label in labels} - set(equation.output))
    # 16-bit floats accumulate in f32, rounded once.
    compute = f32 if is_float(element) and element.bitwidth == 16 else element

    ivs, body = g.top.loop_nest(out_shape)
    out_ivs: dict[str, Bound] = dict(zip(equation.output, ivs))

    def product(b: KernelBuilder, summed_ivs: Sequence[Bound]) -> SSAValue:
        at = {**out_ivs, **dict(zip(summed, summed_ivs))}
        result = None
        for buffer, labels, shape in zip(inputs, equation.inputs, shapes):
            index = [_position(b, at[label], size, sizes[label]) for label, size in zip(labels, shape)]
            value = b.convert(b.load(buffer, index), compute)
            result = value if result is None else b.mul(result, value)
        return result

    if summed:
        ranges = [(0, sizes[label]) for label in summed]
        zero = body.constant(0, compute)
        total = body.reduce(ranges, zero, lambda b, summed_ivs, acc: b.add(acc, product(b, summed_ivs)))
    else:
        total = product(body, [])
    body.store(body.convert(total, element), out, ivs)


def _position(b: KernelBuilder, iv: Bound, size: Bound, extent: Bound) -> Bound:
    """Where a dim of `size` is read at position `iv` of its label's `extent`: 0 for a
    stretched 1, clamped into a dim known at run time only that is not the extent."""
    if size == 1:
        return 0
    if isinstance(size, int) or size is extent:
        return iv
    return b.min(iv, b.sub(size, 1))
