// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// LinearClassifier: one scf.for over the features carries the three classes' dot
// products (coefficients by handle, intercepts as the initial values); the label
// is the first argmax, and SOFTMAX is applied in registers before the stores.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<5x2xf32>) -> (tensor<5xi64>, tensor<5x3xf32>) {
    %label, %scores = "onnx.LinearClassifier"(%x) {coefficients = [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32, 5.0 : f32, 6.0 : f32], intercepts = [0.5 : f32, -0.5 : f32, 0.0 : f32], classlabels_ints = [7, 8, 9], post_transform = "SOFTMAX"} : (tensor<5x2xf32>) -> (tensor<5xi64>, tensor<5x3xf32>)
    func.return %label, %scores : tensor<5xi64>, tensor<5x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[B0:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG:     %[[B1:.+]] = arith.constant -5.000000e-01 : f32
// CHECK-DAG:     %[[W:.+]] = krnl.global {value = #onnx.weight<"coefficients", tensor<3x2xf32>>} : memref<3x2xf32>
// CHECK-DAG:     %[[LABELS:.+]] = krnl.global {value = #onnx.weight<"class_labels", tensor<3xi64>>} : memref<3xi64>
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [5] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index):
// CHECK-NEXT:      %[[S0:.+]], %[[S1:.+]], %[[S2:.+]] = scf.for %[[c:[^ ]+]] = {{.*}} iter_args(%[[a0:.+]] = %[[B0]], %[[a1:.+]] = %[[B1]], %{{.+}} = %{{.+}}) -> (f32, f32, f32) {
// CHECK-NEXT:        %[[X:.+]] = memref.load %x[%[[n]], %[[c]]] : memref<5x2xf32>
// CHECK-NEXT:        %[[W0:.+]] = memref.load %[[W]][%{{.+}}, %[[c]]] : memref<3x2xf32>
// CHECK-NEXT:        %[[P0:.+]] = arith.mulf %[[X]], %[[W0]] : f32
// CHECK-NEXT:        %{{.+}} = arith.addf %[[a0]], %[[P0]] : f32
// CHECK:             scf.yield
// CHECK:           arith.cmpf ogt, %[[S1]], %[[S0]] : f32
// CHECK:           %[[L:.+]] = memref.load %[[LABELS]][%{{.+}}] : memref<3xi64>
// CHECK:           math.exp
// CHECK:           memref.store %[[L]], %label[%[[n]]] : memref<5xi64>
// CHECK-COUNT-3:   memref.store %{{.+}}, %scores[%[[n]], %{{.+}}] : memref<5x3xf32>

// -----

// LinearRegressor with one target: the post transform of a single score is PROBIT
// only (onnxruntime ignores LOGISTIC there), so none is emitted.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<3xi64>) -> tensor<1x1xf32> {
    %y = "onnx.LinearRegressor"(%x) {coefficients = [1.0 : f32, 2.0 : f32, 3.0 : f32], intercepts = [0.25 : f32], targets = 1 : i64, post_transform = "LOGISTIC"} : (tensor<3xi64>) -> tensor<1x1xf32>
    func.return %y : tensor<1x1xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         scf.for %[[c:[^ ]+]] = {{.*}} -> (f32) {
// CHECK-NEXT:      %[[I:.+]] = memref.load %x[%[[c]]] : memref<3xi64>
// CHECK-NEXT:      %[[F:.+]] = arith.sitofp %[[I]] : i64 to f32
// CHECK:         }
// CHECK-NOT:     math.exp
// CHECK:         memref.store
