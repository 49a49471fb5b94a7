// RUN: onnxc-opt %s -p shape-inference,fuse-gemm --print-debuginfo | filecheck %s

// MatMul + Add of a broadcastable bias → Gemm; a following Add folds into Gemm's C.
// Not fused: a MatMul whose result has two uses, and a 3-D MatMul.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<2x3xf32>, %a3: tensor<5x2x3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %b = "onnx.Constant"() {value = dense<1.0> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
    %bias = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %bias2 = "onnx.Constant"() {value = dense<0.5> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
    %m = "onnx.MatMul"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<*xnone> loc("mm")
    %y = "onnx.Add"(%m, %bias) : (tensor<*xnone>, tensor<4xf32>) -> tensor<*xnone> loc("add")
    %z = "onnx.Add"(%bias2, %y) : (tensor<1x4xf32>, tensor<*xnone>) -> tensor<*xnone> loc("add2")
    %m2 = "onnx.MatMul"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<*xnone> loc("mm_shared")
    %y2 = "onnx.Add"(%m2, %bias) : (tensor<*xnone>, tensor<4xf32>) -> tensor<*xnone> loc("add_shared")
    %m3 = "onnx.MatMul"(%a3, %b) : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<*xnone> loc("mm3d")
    %y3 = "onnx.Add"(%m3, %bias) : (tensor<*xnone>, tensor<4xf32>) -> tensor<*xnone> loc("add3d")
    func.return %z, %y2, %m2, %y3 : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     %[[C:.*]] = "onnx.Constant"() {value = #onnx.weight<"mm.bias", tensor<1x4xf32>>}
// CHECK:     %[[Z:.*]] = "onnx.Gemm"(%a, %b, %[[C]]) {{.*}} -> tensor<2x4xf32> loc("mm")
// CHECK:     "onnx.MatMul"(%a, %b) {{.*}} loc("mm_shared")
// CHECK:     "onnx.Add"{{.*}} loc("add_shared")
// CHECK:     "onnx.MatMul"(%a3, %b) {{.*}} loc("mm3d")
// CHECK:     "onnx.Add"{{.*}} loc("add3d")
// CHECK:     func.return %[[Z]],
