"""An SVM's class probabilities from its one-vs-one decisions, as libsvm and
onnxruntime compute them (ml_common.h): Platt's sigmoid turns each decision into
a pairwise probability, and Wu, Lin and Weng's pairwise coupling (method 2 of
"Probability Estimates for Multi-class Classification by Pairwise Coupling")
finds the class probabilities by at most 100 fixed-point sweeps.

Everything is f32 in onnxruntime's operation order, and the sweeps stop on the
same test (largest |Qp_i - pQp| below 0.005 / classes), so that the number of
sweeps, and with it the result, matches. The sweeps are an scf.while carrying
the probabilities; the k x k matrix Q lives in registers (classes are few).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, f32
from xdsl.ir import Block, Region, SSAValue

from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.ml_scores import logistic

MAX_SWEEPS = 100
PROBABILITY_BOUND = np.float32(1e-7)
"""Pairwise probabilities are clamped to [bound, 1 - bound]."""


def pairwise_probability(b: KernelBuilder, decision: SSAValue, a: float, offset: float) -> SSAValue:
    """1 - logistic(decision * a + offset), clamped away from 0 and 1."""
    scaled = b.add(b.mul(decision, b.constant(a, f32)), b.constant(offset, f32))
    probability = b.sub(b.constant(1.0, f32), logistic(b, scaled))
    low = b.max(probability, b.constant(float(PROBABILITY_BOUND), f32))
    return b.min(low, b.constant(float(np.float32(1) - PROBABILITY_BOUND), f32))


def _coupling_matrix(b: KernelBuilder, pairwise: Sequence[SSAValue], classes: int) -> list[list[SSAValue]]:
    """Q: Q[i][i] = sum over j != i of r[j][i]^2, Q[i][j] = -r[j][i] * r[i][j], where
    r[i][j] is pair (i, j)'s probability for i < j and r[j][i] = 1 - r[i][j]."""
    pairs = iter(pairwise)
    r: list[list[SSAValue | None]] = [[None] * classes for _ in range(classes)]
    for i in range(classes):
        for j in range(i + 1, classes):
            r[i][j] = next(pairs)
            r[j][i] = b.sub(b.constant(1.0, f32), r[i][j])
    q: list[list[SSAValue | None]] = [[None] * classes for _ in range(classes)]
    for i in range(classes):
        diagonal = b.constant(0.0, f32)
        for j in (*range(i), *range(i + 1, classes)):
            diagonal = b.add(diagonal, b.square(r[j][i]))
            if j > i:
                q[i][j] = q[j][i] = b.neg(b.mul(r[j][i], r[i][j]))
        q[i][i] = diagonal
    return q


def _products(b: KernelBuilder, q: list[list[SSAValue]], p: Sequence[SSAValue]) -> tuple[list[SSAValue], SSAValue]:
    """Qp and p.Qp, summed in onnxruntime's order."""
    qp, pqp = [], b.constant(0.0, f32)
    for i, row in enumerate(q):
        total = b.constant(0.0, f32)
        for j, entry in enumerate(row):
            total = b.add(total, b.mul(entry, p[j]))
        qp.append(total)
        pqp = b.add(pqp, b.mul(p[i], total))
    return qp, pqp


def _not_converged(b: KernelBuilder, qp: Sequence[SSAValue], pqp: SSAValue, classes: int) -> SSAValue:
    largest = b.constant(0.0, f32)
    for value in qp:
        error = b.abs(b.sub(value, pqp))
        largest = b.select(b.compare("gt", error, largest), error, largest)
    epsilon = float(np.float32(0.005) / np.float32(classes))
    return b.not_(b.less_than(largest, b.constant(epsilon, f32)))


def _sweep(b: KernelBuilder, q, p: list[SSAValue], qp: list[SSAValue], pqp: SSAValue) -> list[SSAValue]:
    """One pass over the classes, each moving its probability to the fixed point."""
    one, two = b.constant(1.0, f32), b.constant(2.0, f32)
    p, qp = list(p), list(qp)
    for i, row in enumerate(q):
        diff = b.div(b.add(b.neg(qp[i]), pqp), row[i])
        p[i] = b.add(p[i], diff)
        grown = b.add(one, diff)
        pqp = b.div(b.div(b.add(pqp, b.mul(diff, b.add(b.mul(diff, row[i]), b.mul(two, qp[i])))), grown), grown)
        for j in range(len(p)):
            qp[j] = b.div(b.add(qp[j], b.mul(diff, row[j])), grown)
            p[j] = b.div(p[j], grown)
    return p


def couple_probabilities(b: KernelBuilder, pairwise: Sequence[SSAValue], classes: int) -> list[SSAValue]:
    """The class probabilities (f32) from the pairwise ones, in pair order (0,1), (0,2), ..."""
    q = _coupling_matrix(b, pairwise, classes)
    start = [b.constant(float(np.float32(1) / np.float32(classes)), f32)] * classes
    state_types = [IndexType(), *[f32] * classes]
    before = Block(arg_types=state_types)
    check = b.at_end(before)
    sweep, p = before.args[0], list(before.args[1:])
    qp, pqp = _products(check, q, p)
    going = check.and_(check.compare_index("slt", sweep, MAX_SWEEPS), _not_converged(check, qp, pqp, classes))
    check.insert(scf.ConditionOp(going, sweep, *p, *qp, pqp))
    after = Block(arg_types=[*state_types, *[f32] * classes, f32])
    run = b.at_end(after)
    state = list(after.args)
    p, qp, pqp = state[1 : 1 + classes], state[1 + classes : 1 + 2 * classes], state[-1]
    run.insert(scf.YieldOp(run.add(state[0], 1), *_sweep(run, q, p, qp, pqp)))
    result_types = [*state_types, *[f32] * classes, f32]
    loop = b.insert(scf.WhileOp([b.index(0), *start], result_types, Region(before), Region(after)))
    return list(loop.results[1 : 1 + classes])
