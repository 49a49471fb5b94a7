// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// MaxPool's indices over dims known at run time only: each maximum's row-major
// offset in x, (n * C + c) * H * W + y * W + x, with C, H and W read from x's
// descriptor at entry.
builtin.module attributes {onnx.opset = 12 : i64} {
  func.func @main_graph(%x: tensor<?x?x?x?xf32, ["n", "c", "h", "w"]>) -> (tensor<?x?x?x?xf32, ["n", "c", "h - 1", "w - 1"]>, tensor<?x?x?x?xi64, ["n", "c", "h - 1", "w - 1"]>) {
    %y, %i = "onnx.MaxPool"(%x) <{resultSegmentSizes = array<i32: 1, 1>}> {kernel_shape = [2 : i64, 2 : i64]} : (tensor<?x?x?x?xf32, ["n", "c", "h", "w"]>) -> (tensor<?x?x?x?xf32, ["n", "c", "h - 1", "w - 1"]>, tensor<?x?x?x?xi64, ["n", "c", "h - 1", "w - 1"]>)
    func.return %y, %i : tensor<?x?x?x?xf32, ["n", "c", "h - 1", "w - 1"]>, tensor<?x?x?x?xi64, ["n", "c", "h - 1", "w - 1"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x?x?x?xf32>, %y: memref<?x?x?x?xf32>, %i: memref<?x?x?x?xi64>) {
// CHECK:         memref.dim %x, %{{.+}} : memref<?x?x?x?xf32>
// CHECK-NEXT:    %[[C:.+]] = memref.dim %x, %{{.+}} : memref<?x?x?x?xf32>
// CHECK-NEXT:    %[[H:.+]] = memref.dim %x, %{{.+}} : memref<?x?x?x?xf32>
// CHECK-NEXT:    %[[W:.+]] = memref.dim %x, %{{.+}} : memref<?x?x?x?xf32>
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0, 0, 0, 0] to [{{.*}}] {
// CHECK-NEXT:    ^bb0(%[[N:.+]]: index, %[[CH:.+]]: index, %{{.+}}: index, %{{.+}}: index):
// CHECK:           memref.store %[[MAX:.+]], %y
// CHECK-NEXT:      %[[NC:.+]] = arith.muli %[[N]], %[[C]] : index
// CHECK-NEXT:      %[[PLANE:.+]] = arith.addi %[[NC]], %[[CH]] : index
// CHECK-NEXT:      %[[HW:.+]] = arith.muli %[[H]], %[[W]] : index
// CHECK-NEXT:      %[[BASE:.+]] = arith.muli %[[PLANE]], %[[HW]] : index
// CHECK:             %[[ROW:.+]] = arith.muli %{{.+}}, %[[W]] : index
// CHECK-NEXT:        %[[IN_PLANE:.+]] = arith.addi %[[ROW]], %{{.+}} : index
// CHECK-NEXT:        %{{.+}} = arith.addi %[[BASE]], %[[IN_PLANE]] : index
// CHECK:           memref.store %{{.+}}, %i
