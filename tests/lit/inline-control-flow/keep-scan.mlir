// RUN: onnxc-opt %s -p inline-control-flow | filecheck %s

// A Scan over T steps, T known only at run time, stays: its body typed with the
// state's type and one step of the scan input (dim 1 of xs, scanned along axis
// 1, dropped); its scan output stacks [4] rows along axis 0, a dim named T.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%h0: tensor<4xf32>, %xs: tensor<4x?xf32, ["", "T"]>) -> (tensor<*xnone>, tensor<*xnone>) {
    %h, %rows = "onnx.Scan"(%h0, %xs) <{operandSegmentSizes = array<i32: 2>, resultSegmentSizes = array<i32: 2>}> ({
    ^bb0(%s: tensor<*xf32>, %x: tensor<*xf32>):
      %next = "onnx.Add"(%s, %x) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xnone>
      %row = "onnx.Neg"(%next) : (tensor<*xnone>) -> tensor<*xnone>
      onnx.yield %next, %row : tensor<*xnone>, tensor<*xnone>
    }) {num_scan_inputs = 1 : i64, scan_input_axes = [1 : i64]} : (tensor<4xf32>, tensor<4x?xf32, ["", "T"]>) -> (tensor<*xnone>, tensor<*xnone>) loc("steps")
    func.return %h, %rows : tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph({{.*}}) -> (tensor<4xf32>, tensor<?x4xf32, ["T", ""]>)
// CHECK:      "onnx.Scan"(%h0, %xs)
// CHECK:      ^bb0(%s: tensor<4xf32>, %x: tensor<4xf32>):
// CHECK:        "onnx.Add"(%s, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:      }) {{.*}} -> (tensor<4xf32>, tensor<?x4xf32, ["T", ""]>)
