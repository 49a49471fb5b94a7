// RUN: onnxc-opt %s -p shape-inference,decompose --print-debuginfo | filecheck %s

// The optimizers of ai.onnx.preview.training have no schema body: decompose inlines the
// spec formula per (X, G, H) group, named after the node. Two groups of Adagrad here:
// the rate r = R / (1 + T * decay_factor) is computed once and shared.
builtin.module attributes {onnx.opset = 28 : i64} {
  func.func @main_graph(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<2xf32>, %x2: tensor<3xf32>, %g1: tensor<2xf32>, %g2: tensor<3xf32>, %h1: tensor<2xf32>, %h2: tensor<3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %nx1, %nx2, %nh1, %nh2 = "onnx.Adagrad"(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) <{operandSegmentSizes = array<i32: 1, 1, 6>, resultSegmentSizes = array<i32: 4>}> {decay_factor = 1.000000e-01 : f32, epsilon = 1.000000e-05 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) loc("opt")
    func.return %nx1, %nx2, %nh1, %nh2 : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK-NOT: "onnx.Adagrad"
// CHECK:     %[[RATE:.*]] = "onnx.Div"{{.*}} -> tensor<f32> loc("opt/Div_{{[0-9]+}}")
// CHECK:     %[[H1:.*]] = "onnx.Add"(%h1, {{.*}}) {{.*}} -> tensor<2xf32>
// CHECK:     %[[X1:.*]] = "onnx.Sub"(%x1, {{.*}}) {{.*}} -> tensor<2xf32>
// CHECK:     %[[H2:.*]] = "onnx.Add"(%h2, {{.*}}) {{.*}} -> tensor<3xf32>
// CHECK:     "onnx.Mul"(%[[RATE]], {{.*}}) {{.*}} -> tensor<3xf32>
// CHECK:     %[[X2:.*]] = "onnx.Sub"(%x2, {{.*}}) {{.*}} -> tensor<3xf32>
// CHECK:     func.return %[[X1]], %[[X2]], %[[H1]], %[[H2]] : tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>
