// RUN: onnxc-opt %s -p inline-control-flow | filecheck %s

// A Loop kept for run time: an op of its body with no kernel (MeanVariance-
// Normalization) is replaced by its function body there, typed, as the
// decompose pass does for the graph's own ops (it does not walk sub-graphs).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%n: tensor<i64>, %x: tensor<2x3xf32>) -> tensor<*xnone> {
    %s = "onnx.Loop"(%n, %x) <{operandSegmentSizes = array<i32: 1, 0, 1>, resultSegmentSizes = array<i32: 1>}> ({
    ^bb0(%i: tensor<i64>, %go: tensor<i1>, %acc: tensor<*xf32>):
      %next = "onnx.MeanVarianceNormalization"(%acc) {axes = [1 : i64]} : (tensor<*xf32>) -> tensor<*xnone> loc("mvn")
      onnx.yield %go, %next : tensor<i1>, tensor<*xnone>
    }) : (tensor<i64>, tensor<2x3xf32>) -> tensor<*xnone> loc("steps")
    func.return %s : tensor<*xnone>
  }
}
// CHECK:      "onnx.Loop"(%n, %x)
// CHECK-NOT:    onnx.MeanVarianceNormalization
// CHECK:        "onnx.ReduceMean"
// CHECK-NOT:    onnx.MeanVarianceNormalization
// CHECK:        "onnx.Div"({{.*}}) {{.*}}: (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK:      }) : (tensor<i64>, tensor<2x3xf32>) -> tensor<2x3xf32>
