// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A Conv1d with constant weights over a length known at run time only (stride 2, pads
// [1, 0]) is one krnl.matmul of run-time rows: x copied channels-last into segments of
// R*2 positions (R = ceil((L + 1) / 2)), the gaps of a segment zeroed, the product's rows
// read at a stride of 2*C = 4 floats over K = 3*C = 6 (the weights packed in panels),
// then copied back to [1, 3, L_out] with the bias added.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x?xf32, ["", "", "L"]>) -> tensor<1x3x?xf32, ["", "", "((L - 2) // 2) + 1"]> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<3x2x3xf32>} : () -> tensor<3x2x3xf32>
    %b = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
    %y = "onnx.Conv"(%x, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {kernel_shape = [3 : i64], pads = [1 : i64, 0 : i64], strides = [2 : i64]} : (tensor<1x2x?xf32, ["", "", "L"]>, tensor<3x2x3xf32>, tensor<3xf32>) -> tensor<1x3x?xf32, ["", "", "((L - 2) // 2) + 1"]>
    func.return %y : tensor<1x3x?xf32, ["", "", "((L - 2) // 2) + 1"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x?xf32>, %y: memref<1x3x?xf32>) {
// CHECK:         %[[L:.+]] = memref.dim %x, %{{.+}} : memref<1x2x?xf32>
// CHECK-NEXT:    %[[LOUT:.+]] = memref.dim %y, %{{.+}} : memref<1x3x?xf32>
// CHECK:         %[[BIAS:.+]] = krnl.global {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>} : memref<3xf32>
// CHECK:         %[[R:.+]] = arith.divsi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[S:.+]] = arith.muli %[[R]], %{{.+}} : index
// CHECK-NEXT:    %[[IMAGE:.+]] = memref.alloc(%[[S]]) : memref<?x2xf32>
// CHECK-NEXT:    %[[GAP:.+]] = arith.subi %[[S]], %[[L]] : index
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0, 0, 0] to [1, %[[GAP]], 2] {
// CHECK:           arith.remsi %{{.+}}, %[[S]] : index
// CHECK:           memref.store %{{.+}}, %[[IMAGE]][%{{.+}}, %{{.+}}] : memref<?x2xf32>
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0, 0, 0, 0] to [1, 1, %{{.+}}, 2] {
// CHECK:           scf.for
// CHECK:             %[[PIXEL:.+]] = memref.load %x[%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x?xf32>
// CHECK-NEXT:        memref.store %[[PIXEL]], %[[IMAGE]][%{{.+}}, %{{.+}}] : memref<?x2xf32>
// CHECK:         %[[PRODUCT:.+]] = memref.alloc(%[[R]]) : memref<?x3xf32>
// CHECK-NEXT:    %[[W:.+]] = krnl.global {value = #onnx.weight<"conv_b_panels", tensor<1x6x16xf32>>} : memref<1x6x16xf32>
// CHECK-NEXT:    krnl.matmul %[[IMAGE]], %[[W]] into %[[PRODUCT]] rows %[[LOUT]] {sizes = [256 : i64, 3 : i64, 6 : i64],
// CHECK-SAME:      a_layout = #krnl<a_layout strided>, a_strides = [4 : i64, 1 : i64], b_access = #krnl<b_access panels>
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0, 0, 0, 0] to [1, 1, %{{.+}}, 3] {
// CHECK:           scf.for
// CHECK:             %[[VALUE:.+]] = memref.load %[[PRODUCT]][%{{.+}}, %[[O:.+]]] : memref<?x3xf32>
// CHECK-NEXT:        %[[B:.+]] = memref.load %[[BIAS]][%[[C:.+]]] : memref<3xf32>
// CHECK-NEXT:        %[[SUM:.+]] = arith.addf %[[VALUE]], %[[B]] : f32
// CHECK-NEXT:        memref.store %[[SUM]], %y[%{{.+}}, %[[C]], %{{.+}}] : memref<1x3x?xf32>
// CHECK-NOT:     krnl.matmul
