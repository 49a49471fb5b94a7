"""The frontend: ONNX protobuf -> the `onnx` dialect (graphs, sequences, tensor decoding)."""
