"""Example models built with onnx.helper (used by the demo and the tests)."""
