// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// TopK: each element counts the elements before it (greater, or equal at a
// lower index) and, if that rank is below K, is stored at its rank.
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main_graph(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
    %k = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
    %v, %i = "onnx.TopK"(%x, %k) {axis = 1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
    func.return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [3, 4] {
// CHECK-NEXT:    ^bb0(%[[r:.+]]: index, %[[c:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %x[%[[r]], %[[c]]] : memref<3x4xf32>
// CHECK-NEXT:      %[[RANK:.+]] = scf.for %[[o:.+]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[acc:.+]] = %[[C0]]) -> (index) {
// CHECK-NEXT:        %[[Y:.+]] = memref.load %x[%[[r]], %[[o]]] : memref<3x4xf32>
// CHECK-NEXT:        %[[GT:.+]] = arith.cmpf ogt, %[[Y]], %[[X]] : f32
// CHECK-NEXT:        %[[EQ:.+]] = arith.cmpf oeq, %[[Y]], %[[X]] : f32
// CHECK-NEXT:        %[[EARLIER:.+]] = arith.cmpi slt, %[[o]], %[[c]] : index
// CHECK-NEXT:        %[[TIE:.+]] = arith.andi %[[EQ]], %[[EARLIER]] : i1
// CHECK-NEXT:        %[[BEFORE:.+]] = arith.ori %[[GT]], %[[TIE]] : i1
// CHECK-NEXT:        %[[ONE:.+]] = arith.select %[[BEFORE]], %[[C1]], %[[C0]] : index
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addi %[[acc]], %[[ONE]] : index
// CHECK-NEXT:        scf.yield %[[NEXT]] : index
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[KEPT:.+]] = arith.cmpi slt, %[[RANK]], %[[C2]] : index
// CHECK-NEXT:      scf.if %[[KEPT]] {
// CHECK-NEXT:        memref.store %[[X]], %v[%[[r]], %[[RANK]]] : memref<3x2xf32>
// CHECK-NEXT:        %[[I:.+]] = arith.index_cast %[[c]] : index to i64
// CHECK-NEXT:        memref.store %[[I]], %i[%[[r]], %[[RANK]]] : memref<3x2xi64>
// CHECK-NEXT:      }
