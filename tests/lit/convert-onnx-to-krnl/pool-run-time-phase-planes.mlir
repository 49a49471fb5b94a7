// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// MaxPool 3x3 stride 2, pads 1, over a height and width known at run time only: the same
// kernel as for static sizes (pool.mlir), the input in four phase planes padded with -inf,
// their size computed at run time; each of their elements written once (padding rows, the
// columns every phase copies, each phase's own, its padding columns), then each output the
// max of nine shifted reads, row by row (no wide rows to compact: the width is unknown).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x2x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]> {
    %y = "onnx.MaxPool"(%x) <{resultSegmentSizes = array<i32: 1, 0>}> {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x2x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x2x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]>
    func.return %y : tensor<1x2x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x?x?xf32>, %y: memref<1x2x?x?xf32>) {
// CHECK:         %[[NEG_INF:.+]] = arith.constant 0xff800000 : f32
// CHECK:         %[[OH:.+]] = memref.dim %y, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[OW:.+]] = memref.dim %y, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[PH:.+]] = arith.addi %[[OH]], %{{.+}} : index
// CHECK-NEXT:    %[[PW:.+]] = arith.addi %[[OW]], %{{.+}} : index
// CHECK:         %[[PLANE:.+]] = arith.muli %[[PH]], %[[PW]] : index
// CHECK-NEXT:    %[[SIZE:.+]] = arith.muli %[[PLANE]], %{{.+}} : index
// CHECK-NEXT:    %[[PLANES:.+]] = memref.alloc(%[[SIZE]]) : memref<1x2x?xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK:           memref.store %[[NEG_INF]], %[[PLANES]]
// CHECK:           %[[V:.+]] = memref.load %x[{{.*}}] : memref<1x2x?x?xf32>
// CHECK-NEXT:      %{{.+}} = arith.addi
// CHECK-NEXT:      memref.store %[[V]], %[[PLANES]]
// CHECK-NOT:     memref.alloc
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index):
// CHECK:           scf.for %[[oy:.+]] = %{{.+}} to %[[OH]] step %{{.+}} {
// CHECK-NEXT:        scf.for %[[ox:.+]] = %{{.+}} to %[[OW]] step %{{.+}} {
// CHECK:               %[[R0:.+]] = memref.load %[[PLANES]][%[[n]], %[[c]], %{{.+}}]
// CHECK-COUNT-8:       memref.load %[[PLANES]]
// CHECK-NEXT:          %{{.+}} = arith.maximumf %[[R0]], %{{.+}} : f32
// CHECK-COUNT-7:       arith.maximumf
// CHECK-NEXT:          memref.store %{{.+}}, %y[%[[n]], %[[c]], %[[oy]], %[[ox]]] : memref<1x2x?x?xf32>
