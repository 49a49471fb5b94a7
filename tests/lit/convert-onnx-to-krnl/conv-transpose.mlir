// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// ConvTranspose [1,1,3] -> [1,2,7] with stride 2, kernel 3: per (n, m) the output
// row is set to the bias, then each (input channel, kernel offset) scatters the
// input row into every second output position. Output size 2*(3-1)+3 = 7.
builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @main_graph(%x: tensor<1x1x3xf32>, %w: tensor<1x2x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x7xf32> {
    %y = "onnx.ConvTranspose"(%x, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {strides = [2]} : (tensor<1x1x3xf32>, tensor<1x2x3xf32>, tensor<2xf32>) -> tensor<1x2x7xf32>
    func.return %y : tensor<1x2x7xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x1x3xf32>, %w: memref<1x2x3xf32>, %b: memref<2xf32>, %y: memref<1x2x7xf32>) {
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK-NEXT:    ^bb0(%[[N:.+]]: index, %[[M:.+]]: index):
// CHECK:           %[[BIAS:.+]] = memref.load %b[%[[M]]] : memref<2xf32>
// CHECK:           scf.for %[[O:.+]] = {{.*}} {
// CHECK-NEXT:        memref.store %[[BIAS]], %y[%[[N]], %[[M]], %[[O]]] : memref<1x2x7xf32>
// CHECK:           scf.for %[[K:.+]] = {{.*}} {
// CHECK:             %[[W:.+]] = memref.load %w[%{{.+}}, %{{.+}}, %[[K]]] : memref<1x2x3xf32>
// CHECK:             scf.for %[[I:.+]] = {{.*}} {
// CHECK:               %[[AT:.+]] = arith.muli %[[I]], %[[C2]] : index
// CHECK:               %[[P:.+]] = memref.load %y[%[[N]], %[[M]], %{{.+}}] : memref<1x2x7xf32>
// CHECK:               %[[X:.+]] = memref.load %x[%[[N]], %{{.+}}, %[[I]]] : memref<1x1x3xf32>
// CHECK-NEXT:          %[[XW:.+]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK-NEXT:          %[[SUM:.+]] = arith.addf %[[P]], %[[XW]] : f32
// CHECK-NEXT:          memref.store %[[SUM]], %y[%[[N]], %[[M]], %{{.+}}] : memref<1x2x7xf32>
