// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// An If on a run-time condition: the condition loaded, an scf.if whose branches
// hold their nodes' nests; each branch's last node writes the If's result buffer
// (here the graph output) directly. Regions come as else_branch, then_branch.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
    %y = "onnx.If"(%c) <{resultSegmentSizes = array<i32: 1>}> ({
      %a = "onnx.Exp"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("else_exp")
      onnx.yield %a : tensor<4xf32>
    }, {
      %m = "onnx.Neg"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("then_neg")
      onnx.yield %m : tensor<4xf32>
    }) : (tensor<i1>) -> tensor<4xf32> loc("choose")
    func.return %y : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%c: memref<i1>, %x: memref<4xf32>, %y: memref<4xf32>) {
// CHECK:         %[[COND:.+]] = memref.load %c[] : memref<i1>
// CHECK-NEXT:    scf.if %[[COND]] {
// CHECK:           krnl.iterate
// CHECK:             arith.negf
// CHECK:             memref.store %{{.+}}, %y[%{{.+}}] : memref<4xf32>
// CHECK:         } else {
// CHECK:           krnl.iterate
// CHECK:             math.exp
// CHECK:             memref.store %{{.+}}, %y[%{{.+}}] : memref<4xf32>
// CHECK:         func.return
