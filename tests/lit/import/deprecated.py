# RUN: %python %S/../inputs/make_model.py deprecated %t.onnx
# RUN: onnxc %t.onnx --emit onnx-basic -o - | filecheck %s
# RUN: onnxc %t.onnx --emit onnx -o - | filecheck %s --check-prefix=INFER

# Operators deprecated in later opsets are imported as the operators that
# replaced them: Upsample-7 (scales an attribute) is a Resize-13 with the scales
# as a constant input, asymmetric coordinates and floor rounding.
# CHECK: builtin.module attributes {onnx.opset = 8 : i64
# CHECK: %[[SCALES:.*]] = "onnx.Constant"() {value = #onnx.weight<"upsample.scales", tensor<2xf32>>}
# CHECK: "onnx.Resize"(%{{.*}}, %[[SCALES]]) <{operandSegmentSizes = array<i32: 1, 0, 1, 0>}> {mode = "linear", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", onnx.since_version = 13 : i64}

# INFER: "onnx.Resize"{{.*}} -> tensor<2x6xf32>
