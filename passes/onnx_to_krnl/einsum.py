"""Einsum: any equation (explicit or implicit output, ellipsis broadcasting,
repeated labels for diagonals, summed labels) as one loop nest over the output
with a reduction over the summed labels: out[o] = sum_r prod_k input_k[...]."""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of

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


def label_sizes(equation: Equation, shapes: Sequence[Sequence[int]]) -> dict[str, int]:
    """The extent of every label; a dim of 1 stretches to the others (broadcast)."""
    sizes: dict[str, int] = {}
    for labels, shape in zip(equation.inputs, shapes):
        for label, size in zip(labels, shape):
            known = sizes.get(label, 1)
            if size not in (1, known) and known != 1:
                raise ValueError(f"label '{label}' has sizes {known} and {size}")
            sizes[label] = size if known == 1 else known
    return sizes


@lowers("Einsum")
def lower_einsum(g: GraphLowering, op: OnnxOp) -> None:
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
    if tuple(sizes[label] for label in equation.output) != out_shape:
        raise g.shape_error(op, f"equation '{op.attr('equation')}' gives no output of shape {list(out_shape)}")
    if pymath.prod(out_shape) == 0:
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
            index = [0 if size == 1 else at[label] for label, size in zip(labels, shape)]
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
