"""Op lowerings for convert-onnx-to-krnl, one module per op family (as in
onnx-mlir's Conversion/ONNXToKrnl). Importing the package imports every module
in it, which registers their lowerings in `common.LOWERINGS`: a new family is a
new file, with no list to keep in step."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
