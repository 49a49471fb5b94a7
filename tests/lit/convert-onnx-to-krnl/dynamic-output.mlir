// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// NonZero: one sequential scan (scf.for carrying the count) writes the indices
// of each nonzero element into a scratch buffer of the largest shape, [rank,
// numel]; krnl.dynamic_output then hands the first `count` columns to the
// graph output, a memref with a dynamic dim that the library allocates.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>) -> tensor<2x?xi64> {
    %y = "onnx.NonZero"(%x) : (tensor<2x3xf32>) -> tensor<2x?xi64> loc("nz")
    func.return %y : tensor<2x?xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<2x3xf32>, %y: memref<2x?xi64, "onnxc_tensor">) {
// CHECK:         %[[BOUND:.+]] = memref.alloc() : memref<2x6xi64>
// CHECK:         %[[COUNT:.+]] = scf.for %[[I:.+]] = {{.*}} iter_args(%[[OUTER:.+]] = %{{.*}}) -> (index) {
// CHECK:           scf.for %[[J:.+]] = {{.*}} iter_args(%[[ACC:.+]] = %[[OUTER]]) -> (index) {
// CHECK:             %[[X:.+]] = memref.load %x[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK:             %[[NZ:.+]] = arith.cmpf une, %[[X]], %{{.*}} : f32
// CHECK:             scf.if %[[NZ]] {
// CHECK:               memref.store %{{.*}}, %[[BOUND]][%{{.*}}, %[[ACC]]] : memref<2x6xi64>
// CHECK:               memref.store %{{.*}}, %[[BOUND]][%{{.*}}, %[[ACC]]] : memref<2x6xi64>
// CHECK:             }
// CHECK:         krnl.dynamic_output %[[BOUND]][%[[COUNT]]] into %y {axis = 1 : i64} : memref<2x6xi64>, memref<2x?xi64, "onnxc_tensor">
// CHECK-NEXT:    func.return
