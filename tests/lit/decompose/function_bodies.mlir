// RUN: onnxc-opt %s -p shape-inference,decompose,constprop --print-debuginfo | filecheck %s

// An op without a kernel is replaced by its schema's function body (MeanVarianceNormalization
// here); the new nodes are named after the original node. Relu has a kernel and stays;
// Det has neither a kernel nor a function body and stays (lowering reports it).
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%x: tensor<2x3x4x4xf32>, %m: tensor<3x3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %n = "onnx.MeanVarianceNormalization"(%x) : (tensor<2x3x4x4xf32>) -> tensor<*xnone> loc("mvn")
    %r = "onnx.Relu"(%x) : (tensor<2x3x4x4xf32>) -> tensor<*xnone> loc("relu")
    %d = "onnx.Det"(%m) : (tensor<3x3xf32>) -> tensor<*xnone> loc("det")
    func.return %n, %r, %d : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK-NOT: "onnx.MeanVarianceNormalization"
// CHECK:     "onnx.ReduceMean"(%x, {{.*}}) {{.*}} -> tensor<1x3x1x1xf32> loc("mvn/ReduceMean_{{[0-9]+}}")
// CHECK:     %[[N:.*]] = "onnx.Div"{{.*}} -> tensor<2x3x4x4xf32> loc("mvn/Div_{{[0-9]+}}")
// CHECK:     %[[R:.*]] = "onnx.Relu"(%x) {{.*}} loc("relu")
// CHECK:     %[[D:.*]] = "onnx.Det"(%m) {{.*}} loc("det")
// CHECK:     func.return %[[N]], %[[R]], %[[D]] : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<f32>
