// RUN: onnxc-opt %s -p inline-control-flow | filecheck %s

// An If on a graph input and a Loop over a run-time trip count stay, their
// sub-graphs typed (the Loop's body with its loop-carried value's type) and
// their results typed from them; If's regions come as else_branch, then_branch.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%c: tensor<i1>, %n: tensor<i64>, %x: tensor<2xf32>) -> (tensor<*xnone>, tensor<*xnone>) {
    %y = "onnx.If"(%c) <{resultSegmentSizes = array<i32: 1>}> ({
      %a = "onnx.Exp"(%x) : (tensor<2xf32>) -> tensor<*xnone>
      onnx.yield %a : tensor<*xnone>
    }, {
      %m = "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<*xnone>
      onnx.yield %m : tensor<*xnone>
    }) : (tensor<i1>) -> tensor<*xnone> loc("choose")
    %s = "onnx.Loop"(%n, %x) <{operandSegmentSizes = array<i32: 1, 0, 1>, resultSegmentSizes = array<i32: 1>}> ({
    ^bb0(%i: tensor<i64>, %go: tensor<i1>, %acc: tensor<*xf32>):
      %next = "onnx.Add"(%acc, %x) : (tensor<*xf32>, tensor<2xf32>) -> tensor<*xnone>
      onnx.yield %go, %next : tensor<i1>, tensor<*xnone>
    }) : (tensor<i64>, tensor<2xf32>) -> tensor<*xnone> loc("steps")
    func.return %y, %s : tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph({{.*}}) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK:      "onnx.If"(%c)
// CHECK:        "onnx.Exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK:        "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK:      }) : (tensor<i1>) -> tensor<2xf32>
// CHECK:      "onnx.Loop"(%n, %x)
// CHECK:      ^bb0(%i: tensor<i64>, %go: tensor<i1>, %acc: tensor<2xf32>):
// CHECK:        "onnx.Add"(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK:      }) : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32>
