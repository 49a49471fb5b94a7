// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// SAME_UPPER with stride 2 over a width known at run time only: the padding
// depends on the width, so it is computed once at run time,
// total = max((OW - 1) * 2 + 3 - W, 0), begin = total / 2, and each window's
// taps are clipped against it and the input's width.
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<1x1x?xf32, ["", "", "w"]>) -> tensor<1x1x?xf32, ["", "", "(w + 1)//2"]> {
    %y = "onnx.AveragePool"(%x) {kernel_shape = [3 : i64], strides = [2 : i64], auto_pad = "SAME_UPPER"} : (tensor<1x1x?xf32, ["", "", "w"]>) -> tensor<1x1x?xf32, ["", "", "(w + 1)//2"]>
    func.return %y : tensor<1x1x?xf32, ["", "", "(w + 1)//2"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x1x?xf32>, %y: memref<1x1x?xf32>) {
// CHECK:         %[[W:.+]] = memref.dim %x, %{{.+}} : memref<1x1x?xf32>
// CHECK-NEXT:    %[[OW:.+]] = memref.dim %y, %{{.+}} : memref<1x1x?xf32>
// CHECK-NEXT:    %[[LAST:.+]] = arith.subi %[[OW]], %{{.+}} : index
// CHECK-NEXT:    %[[REACH:.+]] = arith.muli %[[LAST]], %{{.+}} : index
// CHECK-NEXT:    %[[END:.+]] = arith.addi %[[REACH]], %{{.+}} : index
// CHECK-NEXT:    %[[OVER:.+]] = arith.subi %[[END]], %[[W]] : index
// CHECK-NEXT:    %[[TOTAL:.+]] = arith.maxsi %[[OVER]], %{{.+}} : index
// CHECK-NEXT:    %[[BEGIN:.+]] = arith.divsi %[[TOTAL]], %{{.+}} : index
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0, 0, 0] to [1, 1, %[[OW]]] {
// CHECK-NEXT:    ^bb0(%{{.+}}: index, %{{.+}}: index, %[[O:.+]]: index):
// CHECK-NEXT:      %[[STRIDED:.+]] = arith.muli %[[O]], %{{.+}} : index
// CHECK-NEXT:      %[[START:.+]] = arith.subi %[[STRIDED]], %[[BEGIN]] : index
// CHECK:           scf.for
