"""Helpers the passes share (not passes): building onnx ops, krnl code, low-precision conversions, written function bodies."""
