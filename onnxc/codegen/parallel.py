"""Which loop of a loop nest may run its iterations on several threads.

A nest (one kernel function, see outlining.py) is split over the thread pool of
runtime/support/onnxc_parallel.c when its outermost loop with more than one
iteration — below any single-iteration loops such as a batch of 1, and below
a loop over one run-time dim (a symbolic batch) if the loop it holds can be
split — provably has independent iterations and the nest does enough work to
repay waking the pool.

Independence is shown per buffer, without any dependence algebra: every
buffer the nest stores to must be accessed (loaded and stored) only at
indices that hold the loop's induction variable itself in one fixed
dimension. Then iteration i touches only slice i of that buffer, and distinct
iterations touch disjoint memory (buffers never alias: see llvm_idioms.internal_function). Loops
carrying values between iterations (`iter_args`) are never split.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from onnxc.dialects.krnl import int_values
from onnxc.dialects.krnl_int8 import QMatmulOp
from onnxc.dialects.krnl_matmul import MatmulOp
from onnxc.dialects.krnl_scratch import ThreadScratchOp

# Estimated operations (see _work) below which a nest stays on one thread: waking the pool costs a few µs.
MIN_PARALLEL_WORK = 1 << 18
# A math function (exp, tanh, ...) costs about this many simple operations (vector_math.py).
MATH_FUNCTION_WORK = 20
RUN_TIME_TRIP_COUNT_GUESS = 64
"""Iterations assumed of a loop bounded by a dim known at run time only (a batch
times a sequence, a sequence: tens to hundreds), for deciding what to split."""


@dataclass(frozen=True)
class ParallelLoop:
    loop: scf.ForOp
    trip_count: int | None
    """None: known at run time only (computed from the loop's bounds, defined outside the nest)."""


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def trip_count(loop: scf.ForOp) -> int | None:
    lower, upper, step = (_constant(v) for v in (loop.lb, loop.ub, loop.step))
    if lower is None or upper is None or step is None or step <= 0:
        return None
    return max(0, -(-(upper - lower) // step))


def _run_time_bounds(loop: scf.ForOp) -> bool:
    """Bounds that are run-time dims: defined in the graph function outside any loop (at its
    top level, or in a branch taken at run time: the strided conv of a run-time image size),
    with a constant step."""
    step = _constant(loop.step)
    return step is not None and step > 0 and all(_outside_loops(v) for v in (loop.lb, loop.ub))


def _outside_loops(value: SSAValue) -> bool:
    if not isinstance(value.owner, Operation):
        return False
    parent = value.owner.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if not isinstance(parent, scf.IfOp):
            return False
        parent = parent.parent_op()
    return parent is not None


def _estimated_trip_count(loop: scf.ForOp) -> int:
    """The trip count, or for bounds computed at run time a guess from a constant clamp
    (min(x, C)), or for run-time dims RUN_TIME_TRIP_COUNT_GUESS (per factor of a product)."""
    exact = trip_count(loop)
    if exact is not None:
        return exact
    if _run_time_bounds(loop):
        return _estimated_dim(loop.ub)
    owner = loop.ub.owner
    if isinstance(owner, arith.MinSIOp | arith.MinUIOp):
        bounds = [c for c in (_constant(v) for v in owner.operands) if c is not None]
        if bounds:
            return max(1, min(bounds))
    return 1


def _estimated_dim(value: SSAValue) -> int:
    """A run-time dim's guess: a constant as it is, a product (a nest over a tensor's
    elements, its dims merged) the product of its factors' guesses."""
    constant = _constant(value)
    if constant is not None:
        return constant
    if isinstance(value.owner, arith.MuliOp):
        return _estimated_dim(value.owner.lhs) * _estimated_dim(value.owner.rhs)
    return RUN_TIME_TRIP_COUNT_GUESS


def _work(op: Operation) -> int:
    """Operations `op` executes, counting loop bodies by their (estimated) trip counts and a
    GEMM by its multiply-adds (attention's Q.K^T over a run-time sequence: a loop of a product
    per head, each too small to split well, split by heads instead)."""
    if isinstance(op, MatmulOp | QMatmulOp):
        m, n, k = int_values(op.sizes)
        return m * n * k * (len(int_values(op.batch)) // 3)
    if isinstance(op, scf.ForOp):
        return _estimated_trip_count(op) * sum(_work(inner) for inner in op.body.block.ops)
    if op.dialect_name() == math.Math.name:
        return MATH_FUNCTION_WORK
    return 1 + sum(_work(inner) for region in op.regions for block in region.blocks for inner in block.ops)


def _only_loop_in(op: scf.ForOp | scf.IfOp) -> scf.ForOp | None:
    """The loop that is the whole body of a loop, or of a branch's one region (besides the
    yield), if any."""
    ops = [inner for inner in op.regions[0].block.ops if not isinstance(inner, scf.YieldOp | arith.ConstantOp)]
    return ops[0] if len(ops) == 1 and isinstance(ops[0], scf.ForOp) else None


def _one_sided(op: Operation) -> bool:
    """An scf.if with no else branch and no results."""
    return isinstance(op, scf.IfOp) and not op.results and not op.false_region.blocks


def _slices_by(loop: scf.ForOp, nest: Operation) -> bool:
    """Whether every stored buffer but thread scratch is only accessed at indices holding
    `loop`'s induction variable in one dimension (or its block there: see `_block`)."""
    iv = loop.body.block.args[0]
    accesses: dict[SSAValue, list[memref.LoadOp | memref.StoreOp]] = {}
    for op in nest.walk():
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            accesses.setdefault(op.memref, []).append(op)
    for buffer, ops in accesses.items():
        if not any(isinstance(op, memref.StoreOp) for op in ops) or isinstance(buffer.owner, ThreadScratchOp):
            continue  # (the thread's scratch is the iteration's own: private_scratch.py)
        blocks = [{d: _block(index, iv) for d, index in enumerate(op.indices)} for op in ops]
        if not any(None not in (sizes := {of[d] for of in blocks}) and len(sizes) == 1 for d in blocks[0]):
            return False
    return True


def _block(index: SSAValue, iv: SSAValue) -> int | None:
    """s where `index` is iv*s + c for a constant 0 <= c < s (iv itself: 1), so that iteration iv
    touches only [iv*s, iv*s + s) of that dim (a grouped conv's 4 channels per group, unrolled)."""
    blocked = _blocked(index, iv)
    return blocked[0] if blocked is not None else None


def _blocked(index: SSAValue, iv: SSAValue) -> tuple[int, int] | None:
    """(s, c) with `index` = iv*s + c, 0 <= c < s."""
    if index == iv:
        return 1, 0
    owner = index.owner
    if isinstance(owner, arith.MuliOp | arith.AddiOp):
        for value, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            constant = _constant(other)
            if constant is None:
                continue
            if isinstance(owner, arith.MuliOp) and value == iv and constant > 0:
                return constant, 0
            inner = _blocked(value, iv) if isinstance(owner, arith.AddiOp) else None
            if inner is not None and 0 <= inner[1] + constant < inner[0]:
                return inner[0], inner[1] + constant
    return None


def parallel_loop(nest: Operation) -> ParallelLoop | None:
    """The loop of `nest` to split over threads, or None to run the nest on one thread (a branch
    taken at run time around one loop nest, a strided conv's for run-time sizes: that nest's,
    each thread testing the condition). Below a loop over one run-time dim, likely a batch of 1,
    the loop it holds if that one can be split (each thread then runs every sample, its own
    part of each): split by samples, torch exports' attention, LayerNorms and transposes ran on
    one thread (BERT-base: 150 nests, 8 ms of 170, no faster on two threads)."""
    loop = nest if isinstance(nest, scf.ForOp) else _only_loop_in(nest) if _one_sided(nest) else None
    while loop is not None and not loop.iter_args and trip_count(loop) == 1:
        loop = _only_loop_in(loop)
    if loop is None or _work(nest) < MIN_PARALLEL_WORK:
        return None
    inner = _only_loop_in(loop) if _over_one_run_time_dim(loop) else None
    return (inner is not None and _split(inner, nest)) or _split(loop, nest)


def _over_one_run_time_dim(loop: scf.ForOp) -> bool:
    """A loop from 0 to a run-time dim itself (a product of dims is a nest over merged dims)."""
    return (
        not loop.iter_args
        and trip_count(loop) is None
        and _constant(loop.lb) == 0
        and _run_time_bounds(loop)
        and not isinstance(loop.ub.owner, arith.MuliOp)
    )


def _split(loop: scf.ForOp, nest: Operation) -> ParallelLoop | None:
    """`loop` as the loop of `nest` (one of enough work) that the threads split, if it can be."""
    if loop.iter_args:
        return None
    steps = trip_count(loop)
    if steps is None and not (
        _run_time_bounds(loop) and not any(nest.is_ancestor(v.owner) for v in (loop.lb, loop.ub))
    ):
        return None  # (the caller counts the iterations: from bounds computed before the nest)
    if (steps is not None and steps < 2) or not _slices_by(loop, nest):
        return None
    return ParallelLoop(loop, steps)
