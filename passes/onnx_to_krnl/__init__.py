"""Op lowerings for convert-onnx-to-krnl, one module per op family (as in
onnx-mlir's Conversion/ONNXToKrnl). Importing the package registers them all
in `common.LOWERINGS`."""

from onnxc.passes.onnx_to_krnl import (  # noqa: F401
    conv,
    elementwise,
    gather_scatter,
    matmul,
    normalization,
    pooling,
    reduction,
    resize,
    slice_pad,
    tensor,
    topk,
)
