# RUN: %python %S/../inputs/make_model.py old_opset %t.onnx
# RUN: onnxc %t.onnx --emit onnx-basic -o - | filecheck %s
# RUN: onnxc %t.onnx --emit onnx -o - | filecheck %s --check-prefix=INFER

# Attributes that later opsets turned into inputs are imported in the newest
# form, as constants, and the op records the schema version it now follows.
# CHECK: builtin.module attributes {onnx.opset = 9 : i64
# CHECK: %[[AXES:.*]] = "onnx.Constant"() {value = #onnx.weight<"unsqueeze.axes", tensor<1xi64>>}
# CHECK: "onnx.Unsqueeze"(%{{.*}}, %[[AXES]]) {onnx.since_version = 13 : i64}
# CHECK-DAG: #onnx.weight<"clip.min", tensor<f32>>
# CHECK-DAG: #onnx.weight<"clip.max", tensor<f32>>
# CHECK: "onnx.Clip"{{.*}} <{operandSegmentSizes = array<i32: 1, 1, 1>}> {onnx.since_version = 11 : i64}
# CHECK: "onnx.ReduceSum"{{.*}} {keepdims = 0 : i64, onnx.since_version = 13 : i64}

# INFER: "onnx.Unsqueeze"{{.*}} -> tensor<1x3x4xf32>
# INFER: "onnx.ReduceSum"{{.*}} -> tensor<1x3xf32>
