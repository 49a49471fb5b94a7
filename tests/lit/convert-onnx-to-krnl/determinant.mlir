// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// Det of a batch of 3x3 matrices: an f64 scratch copy, then per matrix an
// elimination loop over the columns carrying the determinant: find the pivot
// row (largest magnitude), swap it up, eliminate below, multiply the pivot in
// (negated after a swap).
builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @main_graph(%x: tensor<2x3x3xf32>) -> tensor<2xf32> {
    %y = "onnx.Det"(%x) : (tensor<2x3x3xf32>) -> tensor<2xf32>
    func.return %y : tensor<2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[M:.+]] = memref.alloc() : memref<2x3x3xf64>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [2, 3, 3] {
// CHECK:           arith.extf {{.*}} : f32 to f64
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [2] {
// CHECK-NEXT:    ^bb0(%[[b:.+]]: index):
// CHECK-NEXT:      %[[DET:.+]] = scf.for %[[k:[^ ]+]] = {{.*}} iter_args(%[[ACC:[^ ]+]] = %{{.+}}) -> (f64) {
// CHECK:             %[[P:.+]] = scf.for {{.*}} -> (index) {
// CHECK:               math.absf
// CHECK:               arith.cmpf ogt
// CHECK:             scf.for
// CHECK:               memref.store {{.*}}, %[[M]][%[[b]], %[[k]], %{{.+}}]
// CHECK:               memref.store {{.*}}, %[[M]][%[[b]], %[[P]], %{{.+}}]
// CHECK:             %[[PIVOT:.+]] = memref.load %[[M]][%[[b]], %[[k]], %[[k]]] : memref<2x3x3xf64>
// CHECK:             arith.divf
// CHECK:             arith.subf
// CHECK:             %[[SWAPPED:.+]] = arith.cmpi ne, %[[P]], %[[k]] : index
// CHECK:             %[[SIGNED:.+]] = arith.select %[[SWAPPED]], %{{.+}}, %[[PIVOT]] : f64
// CHECK-NEXT:        %[[NEXT:.+]] = arith.mulf %[[ACC]], %[[SIGNED]] : f64
// CHECK-NEXT:        scf.yield %[[NEXT]] : f64
// CHECK:           %[[R:.+]] = arith.truncf %[[DET]] : f64 to f32
// CHECK-NEXT:      memref.store %[[R]], %y[%[[b]]] : memref<2xf32>
