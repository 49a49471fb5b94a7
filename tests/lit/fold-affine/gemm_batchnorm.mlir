// RUN: onnxc-opt %s -p shape-inference,fold-affine --print-debuginfo | filecheck %s

// A BatchNormalization (BatchNorm1d, ArcFace's last layer) or per-column constant Mul/Add
// after a Gemm or a 2-D MatMul with constant B folds into B and C: a Gemm's C absorbs the
// shift (beta becomes 1); a MatMul stays one with only a scale, becomes a Gemm with a
// shift. Not folded: a Gemm whose C is a run-time input, a MatMul of a 3-D input.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4x3xf32>, %cx: tensor<2xf32>, %x3: tensor<5x4x3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %b = "onnx.Constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
    %bt = "onnx.Constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
    %c = "onnx.Constant"() {value = dense<[0.5, -0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
    %scale = "onnx.Constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %bias = "onnx.Constant"() {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %mean = "onnx.Constant"() {value = dense<[1.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %var = "onnx.Constant"() {value = dense<[4.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>

    %g = "onnx.Gemm"(%x, %b, %c) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {transB = 1 : i64, beta = 2.0 : f32} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<*xnone> loc("fc")
    %n = "onnx.BatchNormalization"(%g, %scale, %bias, %mean, %var) <{resultSegmentSizes = array<i32: 1, 0, 0>}> {epsilon = 0.0 : f32} : (tensor<*xnone>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone> loc("bn")

    %m = "onnx.MatMul"(%x, %bt) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<*xnone> loc("matmul_scaled")
    %m1 = "onnx.Mul"(%m, %scale) : (tensor<*xnone>, tensor<2xf32>) -> tensor<*xnone> loc("mul")

    %s = "onnx.MatMul"(%x, %bt) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<*xnone> loc("matmul_shifted")
    %s1 = "onnx.Mul"(%s, %scale) : (tensor<*xnone>, tensor<2xf32>) -> tensor<*xnone> loc("mul2")
    %s2 = "onnx.Add"(%s1, %bias) : (tensor<*xnone>, tensor<2xf32>) -> tensor<*xnone> loc("add2")

    %r = "onnx.Gemm"(%x, %b, %cx) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {transB = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<*xnone> loc("fc_runtime_c")
    %r1 = "onnx.Mul"(%r, %scale) : (tensor<*xnone>, tensor<2xf32>) -> tensor<*xnone> loc("mul_kept")

    %t = "onnx.MatMul"(%x3, %bt) : (tensor<5x4x3xf32>, tensor<3x2xf32>) -> tensor<*xnone> loc("matmul_3d")
    %t1 = "onnx.Mul"(%t, %scale) : (tensor<*xnone>, tensor<2xf32>) -> tensor<*xnone> loc("mul_3d")
    func.return %n, %m1, %s2, %r1, %t1 : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      %[[B:.*]] = "onnx.Constant"() {value = #onnx.weight<"fc.weight_affine", tensor<2x3xf32>>}
// CHECK-NEXT: %[[C:.*]] = "onnx.Constant"() {value = #onnx.weight<"fc.bias_affine", tensor<2xf32>>}
// CHECK-NEXT: %[[G:.*]] = "onnx.Gemm"(%x, %[[B]], %[[C]]) {{.*}} {transB = 1 : i64, beta = 1.000000e+00 : f32} {{.*}} -> tensor<4x2xf32> loc("fc")
// CHECK-NOT:  loc("bn")
// CHECK:      %[[M:.*]] = "onnx.Constant"() {value = #onnx.weight<"matmul_scaled.weight_affine", tensor<3x2xf32>>}
// CHECK-NEXT: %[[MM:.*]] = "onnx.MatMul"(%x, %[[M]]) {{.*}} -> tensor<4x2xf32> loc("matmul_scaled")
// CHECK-NOT:  loc("mul")
// CHECK:      %[[S:.*]] = "onnx.Constant"() {value = #onnx.weight<"matmul_shifted.weight_affine", tensor<3x2xf32>>}
// CHECK-NEXT: %[[SC:.*]] = "onnx.Constant"() {value = #onnx.weight<"matmul_shifted.bias_affine", tensor<2xf32>>}
// CHECK-NEXT: %[[SG:.*]] = "onnx.Gemm"(%x, %[[S]], %[[SC]]) {{.*}} -> tensor<4x2xf32> loc("matmul_shifted")
// CHECK-NOT:  loc("add2")
// CHECK:      %[[R:.*]] = "onnx.Gemm"(%x, %b, %cx) {{.*}} loc("fc_runtime_c")
// CHECK-NEXT: %[[R1:.*]] = "onnx.Mul"(%[[R]], %scale) {{.*}} loc("mul_kept")
// CHECK-NEXT: %[[T:.*]] = "onnx.MatMul"(%x3, %bt) {{.*}} loc("matmul_3d")
// CHECK-NEXT: %[[T1:.*]] = "onnx.Mul"(%[[T]], %scale) {{.*}} loc("mul_3d")
// CHECK-NEXT: func.return %[[G]], %[[MM]], %[[SG]], %[[R1]], %[[T1]]
