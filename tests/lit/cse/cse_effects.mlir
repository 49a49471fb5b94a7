// RUN: onnxc-opt %s -p cse --print-debuginfo | filecheck %s

// Only pure ops merge: two draws of a random op are two values, and an If merges
// with another only when their sub-graphs are the same too.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%c: tensor<i1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %r1 = "onnx.RandomNormal"() {shape = [2 : i64]} : () -> tensor<2xf32> loc("r1")
    %r2 = "onnx.RandomNormal"() {shape = [2 : i64]} : () -> tensor<2xf32> loc("r2")
    %y1 = "onnx.If"(%c) <{resultSegmentSizes = array<i32: 1>}> ({
      %n = "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      onnx.yield %n : tensor<2xf32>
    }, {
      onnx.yield %x : tensor<2xf32>
    }) : (tensor<i1>) -> tensor<2xf32> loc("if_neg")
    %y2 = "onnx.If"(%c) <{resultSegmentSizes = array<i32: 1>}> ({
      %a = "onnx.Abs"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      onnx.yield %a : tensor<2xf32>
    }, {
      onnx.yield %x : tensor<2xf32>
    }) : (tensor<i1>) -> tensor<2xf32> loc("if_abs")
    %y3 = "onnx.If"(%c) <{resultSegmentSizes = array<i32: 1>}> ({
      %n = "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      onnx.yield %n : tensor<2xf32>
    }, {
      onnx.yield %x : tensor<2xf32>
    }) : (tensor<i1>) -> tensor<2xf32> loc("if_neg_again")
    func.return %r1, %r2, %y1, %y2, %y3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
}
// CHECK:     %[[R1:.*]] = "onnx.RandomNormal"{{.*}} loc("r1")
// CHECK:     %[[R2:.*]] = "onnx.RandomNormal"{{.*}} loc("r2")
// CHECK:     %[[Y1:.*]] = "onnx.If"
// CHECK:     loc("if_neg")
// CHECK:     %[[Y2:.*]] = "onnx.If"
// CHECK:     loc("if_abs")
// CHECK-NOT: loc("if_neg_again")
// CHECK:     func.return %[[R1]], %[[R2]], %[[Y1]], %[[Y2]], %[[Y1]]
