// RUN: onnxc-opt %s -p inline-control-flow | filecheck %s

// A run-time If whose branches give static shapes differing in one dim (4 and
// 2 elements) stays, its result typed with that dim dynamic and unnamed: the
// branch taken decides it (the lowering hands it out as a graph output).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<*xnone> {
    %y = "onnx.If"(%c) <{resultSegmentSizes = array<i32: 1>}> ({
      %n = "onnx.Concat"(%x, %x) <{operandSegmentSizes = array<i32: 2>}> {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone>
      onnx.yield %n : tensor<*xnone>
    }, {
      onnx.yield %x : tensor<2xf32>
    }) : (tensor<i1>) -> tensor<*xnone> loc("choose")
    func.return %y : tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph({{.*}}) -> tensor<?xf32>
// CHECK:      "onnx.If"(%c)
// CHECK:        "onnx.Concat"(%x, %x) {{.*}} -> tensor<4xf32>
// CHECK:      }) : (tensor<i1>) -> tensor<?xf32>
