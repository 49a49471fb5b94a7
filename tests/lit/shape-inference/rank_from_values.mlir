// RUN: onnxc-opt %s -p shape-inference | filecheck %s
// RUN: onnxc-opt %s -p shape-inference,fold-shapes | filecheck %s --check-prefix=FOLDED

// A function body (RMSNormalization's) reduces over axes computed from the rank:
// before folding, ReduceMean's rank is unknown (the Range's length is known from
// the symbolic value of Size(Shape(x)), its values are not), and its consumers stay
// unranked (with their element type) instead of failing; fold-shapes types them all.
builtin.module attributes {onnx.opset = 23 : i64} {
  func.func @main_graph(%x: tensor<3x4xf32>) -> tensor<*xnone> {
    %shape = "onnx.Shape"(%x) : (tensor<3x4xf32>) -> tensor<*xnone>
    %rank = "onnx.Size"(%shape) : (tensor<*xnone>) -> tensor<*xnone>
    %zero = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %one = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %axes = "onnx.Range"(%zero, %rank, %one) : (tensor<i64>, tensor<*xnone>, tensor<i64>) -> tensor<*xnone>
    %mean = "onnx.ReduceMean"(%x, %axes) <{operandSegmentSizes = array<i32: 1, 1>}> : (tensor<3x4xf32>, tensor<*xnone>) -> tensor<*xnone> loc("mean")
    %eps = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %sum = "onnx.Add"(%mean, %eps) : (tensor<*xnone>, tensor<f32>) -> tensor<*xnone>
    func.return %sum : tensor<*xnone>
  }
}
// CHECK: "onnx.Range"{{.*}} -> tensor<2xi64>
// CHECK: "onnx.ReduceMean"{{.*}} -> tensor<*xf32>
// CHECK: "onnx.Add"{{.*}} -> tensor<*xf32>

// FOLDED:      func.func @main_graph(%{{.*}}: tensor<3x4xf32>) -> tensor<1x1xf32>
// FOLDED:      %[[AXES:.*]] = "onnx.Constant"() {value = #onnx.weight<"{{.*}}", tensor<2xi64>>}
// FOLDED-NEXT: "onnx.ReduceMean"(%{{.*}}, %[[AXES]]) {{.*}} -> tensor<1x1xf32>
// FOLDED:      "onnx.Add"{{.*}} -> tensor<1x1xf32>
