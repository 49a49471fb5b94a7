// RUN: not onnxc-opt %s -p inline-control-flow 2>&1 | filecheck %s

// A condition known only at run time keeps the If for a run-time branch, which
// needs its results' types to differ at most in one static dim: branches of
// different ranks are refused, naming op and opset.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%c: tensor<i1>, %x: tensor<2xf32>, %z: tensor<1x2xf32>) -> tensor<*xnone> {
    %y = "onnx.If"(%c) <{resultSegmentSizes = array<i32: 1>}> ({
      %n = "onnx.Concat"(%x, %x) <{operandSegmentSizes = array<i32: 2>}> {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone>
      onnx.yield %n : tensor<*xnone>
    }, {
      onnx.yield %z : tensor<1x2xf32>
    }) : (tensor<i1>) -> tensor<*xnone> loc("choose")
    func.return %y : tensor<*xnone>
  }
}
// CHECK: node 'choose' (If): If (opset 17, outputs untyped): its condition is known only at run time and its branches give result 0 types (tensor<1x2xf32>, tensor<4xf32>) that differ in more than one static dim
