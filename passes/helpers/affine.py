"""Per-channel affine maps `y = x·scale + shift` of inference ops, for folding them
into the op before them (a graph rewrite) or into a kernel's weights (a lowering)."""

from __future__ import annotations

import numpy as np

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.graph import constant_array


def batch_norm_factor(scale: np.ndarray, var: np.ndarray, epsilon: float) -> np.ndarray:
    """`scale / sqrt(var + epsilon)` per channel, in float64 (see `batch_norm_affine`)."""
    return scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + np.float64(epsilon))


def batch_norm_affine(norm: OnnxOp) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, shift) per channel, float64 vectors, of an inference BatchNormalization
    whose parameters are constant float vectors of one length and whose mean/var
    outputs are unused: `y = x·scale + shift`, `scale = gamma / sqrt(var + epsilon)`,
    `shift = beta − mean·scale`. None when it is not one.

    Computed in float64, whatever the parameters' type, for the caller to cast once
    where the result is stored: the folded weights are then the exact affine map
    rounded once (never worse than the unfolded op, which rounds at every step, and
    not depending on how many maps were composed first), and a Conv+BatchNormalization
    folded in the graph (fold-affine, -O1 and up) or in the Conv kernel's epilogue
    (-O0) gets the same float32 weights, bit for bit.
    """
    if norm.attr("training_mode") or norm.attr("spatial") == 0 or any(r.uses for r in norm.results[1:]):
        return None
    params = [constant_array(norm.input(k)) for k in range(1, 5)]
    if any(p is None or p.ndim != 1 or p.dtype.kind != "f" or p.shape != params[0].shape for p in params):
        return None
    gamma, beta, mean, var = params
    scale = batch_norm_factor(gamma, var, norm.attr("epsilon"))
    return scale, beta.astype(np.float64) - mean.astype(np.float64) * scale
