// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// Attention scores q[b, 2, s, 8] @ kt[b, 2, 8, s], both operands computed at run time: a loop
// over the b*2 products, each one krnl.matmul of run-time rows (s) and columns (s), A starting
// at product*s rows (first_row), B and C at product*8*s and product*s*s (offsets); B packed.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%q: tensor<?x2x?x8xf32, ["b", "", "s", ""]>, %kt: tensor<?x2x8x?xf32, ["b", "", "", "s"]>) -> tensor<?x2x?x?xf32, ["b", "", "s", "s"]> {
    %y = "onnx.MatMul"(%q, %kt) : (tensor<?x2x?x8xf32, ["b", "", "s", ""]>, tensor<?x2x8x?xf32, ["b", "", "", "s"]>) -> tensor<?x2x?x?xf32, ["b", "", "s", "s"]>
    func.return %y : tensor<?x2x?x?xf32, ["b", "", "s", "s"]>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         scf.for %[[P:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:      %[[PK:.+]] = arith.muli %[[P]], %{{.+}} : index
// CHECK-NEXT:      %[[B:.+]] = arith.muli %[[PK]], %[[N:.+]] : index
// CHECK-NEXT:      %[[PM:.+]] = arith.muli %[[P]], %[[M:.+]] : index
// CHECK-NEXT:      %[[C:.+]] = arith.muli %[[PM]], %[[N]] : index
// CHECK-NEXT:      %[[FIRST:.+]] = arith.muli %[[P]], %[[M]] : index
// CHECK-NEXT:      krnl.matmul %q, %kt into %y rows %[[M]] columns %[[N]] offsets(%[[B]], %[[C]]) first_row %[[FIRST]] {sizes = [256 : i64, 1024 : i64, 8 : i64], tile = [12 : i64, 8 : i64, 512 : i64]
// CHECK-SAME:        a_strides = [8 : i64, 1 : i64], b_access = #krnl<b_access rows>, ldb = 0 : i64, ldc = 0 : i64
// CHECK-SAME:        pack
