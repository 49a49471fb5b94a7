"""Pass registry: every pass by its command-line name, imported on first use.

One file per pass. `onnxc-opt -p NAME` and the compiler driver both look
passes up here, so a pass registered once is usable everywhere.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

_REGISTRY: dict[str, str] = {
    "cdist-scan": "onnxc.passes.cdist_scan:CdistScanPass",
    "inline-control-flow": "onnxc.passes.inline_control_flow:InlineControlFlowPass",
    "shape-inference": "onnxc.passes.shape_inference:ShapeInferencePass",
    "decompose": "onnxc.passes.decompose:DecomposePass",
    "constprop": "onnxc.passes.constprop:ConstPropPass",
    "fold-shapes": "onnxc.passes.constprop:FoldShapesPass",
    "simplify": "onnxc.passes.simplify:SimplifyPass",
    "fold-affine": "onnxc.passes.fold_affine:FoldAffinePass",
    "fuse-gemm": "onnxc.passes.fuse_gemm:FuseGemmPass",
    "conv1d-as-2d": "onnxc.passes.conv1d_as_2d:Conv1dAs2dPass",
    "expand-depthwise-tiles": "onnxc.passes.expand_depthwise_tiles:ExpandDepthwiseTilesPass",
    "fuse-qdq": "onnxc.passes.fuse_qdq:FuseQDQPass",
    "gather-features": "onnxc.passes.gather_features:GatherFeaturesPass",
    "fuse-tokenizer": "onnxc.passes.fuse_tokenizer:FuseTokenizerPass",
    "cse": "onnxc.passes.cse:CSEPass",
    "dce": "onnxc.passes.dce:DCEPass",
    "convert-onnx-to-krnl": "onnxc.passes.convert_onnx_to_krnl:ConvertOnnxToKrnlPass",
    "convert-krnl-to-loops": "onnxc.passes.convert_krnl_to_loops:ConvertKrnlToLoopsPass",
}


def _loader(target: str) -> Callable[[], type[ModulePass]]:
    module_name, class_name = target.split(":")

    def load() -> type[ModulePass]:
        return getattr(importlib.import_module(module_name), class_name)

    return load


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> loader of the pass class (the form xDSL's opt driver wants)."""
    return {name: _loader(target) for name, target in _REGISTRY.items()}


def get_pass(name: str) -> type[ModulePass]:
    if name not in _REGISTRY:
        raise KeyError(f"unknown pass '{name}'; known: {', '.join(sorted(_REGISTRY))}")
    return _loader(_REGISTRY[name])()
