// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// MaxPool 3x3 stride 2, pads 1, over a height and width known at run time only: the same
// kernel as for static sizes (pool.mlir), its row buffer as wide as the padded image (or as
// the last window reaches), computed at run time.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x2x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]> {
    %y = "onnx.MaxPool"(%x) <{resultSegmentSizes = array<i32: 1, 0>}> {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x2x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x2x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]>
    func.return %y : tensor<1x2x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x?x?xf32>, %y: memref<1x2x?x?xf32>) {
// CHECK:         %[[NEG_INF:.+]] = arith.constant 0xff800000 : f32
// CHECK:         memref.dim %x, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[W:.+]] = memref.dim %x, %{{.+}} : memref<1x2x?x?xf32>
// CHECK:         %[[OH:.+]] = memref.dim %y, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[OW:.+]] = memref.dim %y, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[IMAGE_END:.+]] = arith.addi %[[W]], %{{.+}} : index
// CHECK:         %[[REACH:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[ROW:.+]] = arith.maxsi %[[REACH]], %[[IMAGE_END]] : index
// CHECK-NEXT:    %[[ROWS:.+]] = memref.alloc(%[[ROW]]) : memref<1x2x?xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK:           scf.for %{{.+}} = %[[IMAGE_END]] to %[[ROW]] step %{{.+}} {
// CHECK-NEXT:        memref.store %[[NEG_INF]], %[[ROWS]]
// CHECK:           scf.for %[[oy:.+]] = %{{.+}} to %[[OH]] step %{{.+}} {
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[W]] step %{{.+}} {
// CHECK:               memref.store %[[NEG_INF]], %[[ROWS]]
// CHECK:             scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:               scf.for %{{.+}} = %{{.+}} to %[[W]] step %{{.+}} {
// CHECK:                 arith.maximumf {{.*}} fastmath<nsz> : f32
// CHECK:             scf.for %[[ox:.+]] = %{{.+}} to %[[OW]] step %{{.+}} {
// CHECK-COUNT-3:       memref.load %[[ROWS]]
// CHECK-COUNT-2:       arith.maximumf
// CHECK-NEXT:          memref.store %{{.+}}, %y[%{{.+}}, %{{.+}}, %[[oy]], %[[ox]]] : memref<1x2x?x?xf32>
// CHECK-NOT:     memref.alloc
