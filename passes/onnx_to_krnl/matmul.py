"""MatMul and Gemm: contractions with column tiling."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.dialects.types import dim_params
from onnxc.errors import CompileError
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped
from onnxc.passes.onnx_to_krnl.common import (
    MATMUL_COLUMN_TILE,
    GraphLowering,
    Operand,
    broadcast,
    broadcast_axes,
    broadcast_index,
    dims_agree,
    elementwise,
    fill,
    lowers,
    shape_of,
)
from onnxc.passes.onnx_to_krnl.gemm_epilogue import GemmFusion, bias_per_column, claim_fusion
from onnxc.passes.onnx_to_krnl.matmul_kernel import (
    gemm_kernel_applies,
    lower_gemm_as_gemm,
    lower_matmul_as_gemm,
    lower_matmul_of_run_time_products,
    lower_matmul_of_run_time_rows,
    panel_weights,
)

# ------------------------------------------------------------------ MatMul and Gemm


IndexFunction = Callable[[list[SSAValue], SSAValue], list[Bound]]
"""(output ivs, reduction iv) -> indices of an operand."""


def contract(
    g: GraphLowering,
    out: SSAValue,
    reduction_size: int,
    lhs: tuple[SSAValue, IndexFunction],
    rhs: tuple[SSAValue, IndexFunction],
    *,
    row_axis: int | None,
    column_axis: int | None,
    alpha: float = 1.0,
) -> None:
    """out[i...] += alpha * sum_k lhs[..k..] * rhs[..k..], accumulating in `out`
    (float16 and bfloat16 accumulate in a float32 copy of `out`, rounded once at the
    end, as onnxruntime does: partial sums rounded to 11 bits drift far from it).

    Schedule: the column loop is blocked and the reduction loop sits between
    its tile loops, so that the innermost loop walks a row of `rhs` and of
    `out` with unit stride while a tile of `rhs` columns stays in cache across
    rows: (batch..., column tile, row, k, column).
    """
    element = out.type.get_element_type()
    result, wide = out, f32 if isinstance(element, Float16Type | BFloat16Type) else None
    if wide is not None:
        out = alloc_shaped(g.top, wide, shape_of(result))
        elementwise(g.top, out, [Operand.whole(result)], lambda b, xs: b.convert(xs[0], wide))
    nest = g.top.loops([*shape_of(out), reduction_size])
    *out_loops, k_loop = nest.loops
    batch = [loop for axis, loop in enumerate(out_loops) if axis not in (row_axis, column_axis)]
    row = [] if row_axis is None else [out_loops[row_axis]]
    if column_axis is None:
        nest.permute([*batch, *row, k_loop])
    else:
        column_outer, column_inner = nest.block(out_loops[column_axis], MATMUL_COLUMN_TILE)
        nest.permute([*batch, column_outer, *row, k_loop, column_inner])
    (*ivs, k), body = nest.iterate()
    (lhs_buffer, lhs_index), (rhs_buffer, rhs_index) = lhs, rhs
    accumulated = out.type.get_element_type()
    left = body.convert(body.load(lhs_buffer, lhs_index(ivs, k)), accumulated)
    if alpha != 1.0:
        left = body.mul(left, body.constant(alpha, left.type))
    product = body.mul(left, body.convert(body.load(rhs_buffer, rhs_index(ivs, k)), accumulated))
    body.store(body.add(body.load(out, ivs), product), out, ivs)
    if wide is not None:
        elementwise(g.top, result, [Operand.whole(out)], lambda b, xs: b.convert(xs[0], element))


@lowers("MatMul", run_time_dims=True)
def lower_matmul(g: GraphLowering, op: OnnxOp) -> None:
    """numpy.matmul. Float32 takes the GEMM kernel, other types a tiled loop nest."""
    a, b = g.input(op, 0), g.input(op, 1)
    g.same_element_type(op, [op.input(0), op.input(1), op.results[0]])
    weights = panel_weights(op, shape_of(a))
    fusion = claim_fusion(g, op, weights.shape[1]) if weights is not None else None
    out = _fused_result(g, op, fusion)
    batch_rank = matmul_batch_rank(g, op, a, b, out)
    if all(isinstance(d, int) for d in shape_of(out) + shape_of(a)):
        if lower_matmul_as_gemm(g, op, out, batch_rank, fusion):
            return
    elif lower_matmul_of_run_time_rows(g, op, out, fusion) or lower_matmul_of_run_time_products(g, op, out):
        return
    if fusion is not None:
        raise CompileError(f"MatMul {op.node_name!r}: fused ops claimed for a GEMM lowering that did not apply")
    matmul_nest(g, op, a, b, out)


def _fused_result(g: GraphLowering, op: OnnxOp, fusion: GemmFusion | None) -> SSAValue:
    """The buffer a GEMM-lowered op writes: its own result's, or with `fusion` the last fused
    op's, which every fused result then aliases."""
    if fusion is None:
        return g.result(op)
    out = g.result(fusion.last)
    for value in (op.results[0], *(fused.results[0] for fused in fusion.fused)):
        g.alias(value, out)
    return out


def matmul_batch_rank(g: GraphLowering, op: OnnxOp, a: SSAValue, b: SSAValue, out: SSAValue) -> int:
    """The number of batch dims of `out` = a @ b, after checking the shapes: batch
    dims broadcast; a 1-D lhs is a row, a 1-D rhs a column, and the dim they add
    is absent from the result."""
    a_shape, b_shape, out_shape = shape_of(a), shape_of(b), shape_of(out)
    if not a_shape or not b_shape:
        raise g.shape_error(op, "MatMul of a scalar")
    has_rows, has_columns = len(a_shape) > 1, len(b_shape) > 1
    batch_rank = len(out_shape) - has_rows - has_columns
    expected_tail = a_shape[-2:-1] if has_rows else ()
    expected_tail += b_shape[-1:] if has_columns else ()
    b_reduction = b_shape[-2] if has_columns else b_shape[0]
    if (
        batch_rank < 0
        or not dims_agree([a_shape[-1]], [b_reduction])
        or not dims_agree(out_shape[batch_rank:], expected_tail)
    ):
        raise g.shape_error(op, f"MatMul of {list(a_shape)} and {list(b_shape)} into {list(out_shape)}")
    return batch_rank


def matmul_nest(g: GraphLowering, op: OnnxOp, a: SSAValue, b: SSAValue, out: SSAValue) -> None:
    """out = numpy.matmul(a, b) by a tiled loop nest, the operands converted to and
    accumulated in the element type of `out` (MatMul; int32 for the integer matmuls)."""
    batch_rank = matmul_batch_rank(g, op, a, b, out)
    a_shape, b_shape, out_shape = shape_of(a), shape_of(b), shape_of(out)
    has_rows, has_columns = len(a_shape) > 1, len(b_shape) > 1
    batch_shape = out_shape[:batch_rank]
    a_axes = broadcast_axes(g, op, a_shape[:-2], batch_shape)
    b_axes = broadcast_axes(g, op, b_shape[:-2], batch_shape)

    def a_index(ivs: list[SSAValue], k: SSAValue) -> list[Bound]:
        return [*broadcast_index(a_axes, ivs), *([ivs[batch_rank]] if has_rows else []), k]

    def b_index(ivs: list[SSAValue], k: SSAValue) -> list[Bound]:
        return [*broadcast_index(b_axes, ivs), k, *([ivs[-1]] if has_columns else [])]

    fill(g.top, out, g.top.constant(0, out.type.get_element_type()))
    contract(
        g,
        out,
        a_shape[-1],
        (a, a_index),
        (b, b_index),
        row_axis=batch_rank if has_rows else None,
        column_axis=len(out_shape) - 1 if has_columns else None,
    )


@lowers("Gemm", run_time_dims=True)
def lower_gemm(g: GraphLowering, op: OnnxOp) -> None:
    """Y = alpha * A' @ B' + beta * C, with A' = A or A^T, B' = B or B^T, C broadcast to Y."""
    a, b, c = g.input(op, 0), g.input(op, 1), g.input(op, 2)
    alpha, beta = op.attr("alpha"), op.attr("beta")
    transpose_a, transpose_b = op.attr("transA"), op.attr("transB")
    element = g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=alpha == beta == 1.0)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if len(a_shape) != 2 or len(b_shape) != 2:
        raise g.shape_error(op, f"Gemm of {list(a_shape)} and {list(b_shape)}")
    rows, reduction = reversed(a_shape) if transpose_a else a_shape
    b_reduction, columns = reversed(b_shape) if transpose_b else b_shape
    fusion = None
    if gemm_kernel_applies(g, op):
        vector_c = bias_per_column(op.input(2), columns, 2) if beta != 0.0 else None
        bias = None if vector_c is None else (np.float32(beta) * vector_c).astype(np.float32)  # beta * C
        fusion = claim_fusion(g, op, columns, bias)
    out = _fused_result(g, op, fusion)
    out_shape = shape_of(out)
    if not dims_agree([reduction], [b_reduction]) or not dims_agree(out_shape, (rows, columns)):
        raise g.shape_error(op, f"Gemm of {list(a_shape)} and {list(b_shape)} into {list(out_shape)}")

    if fusion is not None and fusion.bias is not None:
        lower_gemm_as_gemm(g, op, out, accumulate=False, fusion=fusion)
        return
    # No C: the kernel's first reduction block starts from zero (a fill of Y first cost GPT-2's
    # 64-token MLP Gemm 27 of 2,460 us).
    if (c is None or beta == 0.0) and lower_gemm_as_gemm(g, op, out, accumulate=False, fusion=fusion):
        return
    if c is not None and beta != 0.0:
        c_operand = _bias_operand(g, op, c, out_shape)
        if beta == 1.0:
            elementwise(g.top, out, [c_operand], lambda _, xs: xs[0])
        else:
            scale = g.top.constant(beta, element)
            elementwise(g.top, out, [c_operand], lambda body, xs: body.mul(xs[0], scale))
    else:
        fill(g.top, out, g.top.constant(0, element))
    if lower_gemm_as_gemm(g, op, out, accumulate=True, fusion=fusion):
        return
    contract(
        g,
        out,
        reduction,
        (a, lambda ivs, k: [k, ivs[0]] if transpose_a else [ivs[0], k]),
        (b, lambda ivs, k: [ivs[1], k] if transpose_b else [k, ivs[1]]),
        row_axis=0,
        column_axis=1,
        alpha=alpha,
    )


@dataclass(frozen=True)
class ClampedOperand(Operand):
    """An operand whose dims at `clamped` are known at run time only and are 1 or the
    out dim of their axis: read at min(i, dim - 1) there."""

    clamped: tuple[int, ...] = ()

    def load(self, builder: KernelBuilder, ivs: Sequence[SSAValue]) -> SSAValue:
        index = broadcast_index(self.axes, ivs)
        shape = shape_of(self.buffer)
        for k in self.clamped:
            index[k] = builder.min(index[k], builder.sub(shape[k], 1))
        return builder.load(self.buffer, index)


def _bias_operand(g: GraphLowering, op: OnnxOp, c: SSAValue, out_shape: Sequence[Bound]) -> Operand:
    """Gemm's C, unidirectionally broadcast to Y. Shape inference does not unify C's
    symbolic dims with Y's: a dim of C known at run time only and not named as Y's
    is 1 or Y's, read clamped (static C keeps the plain broadcast)."""
    c_dims, out_dims = dim_params(op.input(2).type), dim_params(op.results[0].type)
    offset = len(out_dims) - len(c_dims)
    unknown = [
        k for k, (d, p) in enumerate(zip(shape_of(c), c_dims)) if not isinstance(d, int) and p != out_dims[offset + k]
    ]
    if not unknown:
        return broadcast(g, op, c, out_shape)
    known = [1 if k in unknown else d for k, d in enumerate(shape_of(c))]
    axes = list(broadcast_axes(g, op, known, out_shape))
    for k in unknown:
        axes[k] = offset + k
    return ClampedOperand(c, tuple(axes), tuple(unknown))
