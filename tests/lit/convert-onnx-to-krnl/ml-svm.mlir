// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// SVMClassifier, three classes with probabilities: per sample a scratch row of
// kernel values is summed feature by feature over all support vectors (stored
// transposed, so the inner loop runs along them), then mapped by exp (RBF); per
// class an scf.for over its vectors carries that class's f64 share of its two
// decisions; the votes pick the label; the pairwise probabilities are coupled by
// an scf.while carrying the three class probabilities.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4x2xf32>) -> (tensor<4xi64>, tensor<4x3xf32>) {
    %label, %scores = "onnx.SVMClassifier"(%x) {classlabels_ints = [3, 5, 7], vectors_per_class = [1, 2, 1], support_vectors = [0.0 : f32, 1.0 : f32, 1.0 : f32, 0.0 : f32, 0.5 : f32, 0.5 : f32, 2.0 : f32, 1.0 : f32], coefficients = [1.0 : f32, -0.5 : f32, 0.25 : f32, -1.0 : f32, 0.5 : f32, 1.0 : f32, -1.0 : f32, 0.75 : f32], rho = [0.1 : f32, -0.1 : f32, 0.2 : f32], prob_a = [-1.0 : f32, -2.0 : f32, -1.5 : f32], prob_b = [0.0 : f32, 0.1 : f32, -0.1 : f32], kernel_type = "RBF", kernel_params = [0.5 : f32, 0.0 : f32, 3.0 : f32]} : (tensor<4x2xf32>) -> (tensor<4xi64>, tensor<4x3xf32>)
    func.return %label, %scores : tensor<4xi64>, tensor<4x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[SV:.+]] = krnl.global {value = #onnx.weight<"support_vectors", tensor<2x4xf32>>} : memref<2x4xf32>
// CHECK-DAG:     krnl.global {value = #onnx.weight<"coefficients", tensor<2x4xf32>>} : memref<2x4xf32>
// CHECK-DAG:     %[[K:.+]] = memref.alloc() : memref<4x4xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [4] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index):
// CHECK-NEXT:      scf.for %{{[^ ]+}} = {{.*}} {
// CHECK-NEXT:        memref.store %{{.+}}, %[[K]][%[[n]], %{{.+}}] : memref<4x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %[[f:[^ ]+]] = {{.*}} {
// CHECK-NEXT:        scf.for %[[v:[^ ]+]] = {{.*}} {
// CHECK-NEXT:          %[[X:.+]] = memref.load %x[%[[n]], %[[f]]] : memref<4x2xf32>
// CHECK-NEXT:          %[[S:.+]] = memref.load %[[SV]][%[[f]], %[[v]]] : memref<2x4xf32>
// CHECK-NEXT:          %[[D:.+]] = arith.subf %[[X]], %[[S]] : f32
// CHECK-NEXT:          %[[D2:.+]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:          %[[OLD:.+]] = memref.load %[[K]][%[[n]], %[[v]]] : memref<4x4xf32>
// CHECK-NEXT:          %[[NEW:.+]] = arith.addf %[[OLD]], %[[D2]] : f32
// CHECK-NEXT:          memref.store %[[NEW]], %[[K]][%[[n]], %[[v]]] : memref<4x4xf32>
// CHECK:           math.exp
// CHECK:           scf.for {{.*}} -> (f64, f64) {
// CHECK:             arith.extf {{.*}} : f32 to f64
// CHECK:           scf.for {{.*}} -> (f64, f64) {
// CHECK:           arith.cmpf ogt, {{.*}} : f64
// CHECK:           memref.load {{.*}} : memref<3xi64>
// CHECK:           memref.store {{.*}}, %label[{{.*}}] : memref<4xi64>
// CHECK:           scf.while {{.*}} : (index, f32, f32, f32) -> (index, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:             scf.condition
// CHECK-COUNT-3:   memref.store {{.*}}, %scores[{{.*}}] : memref<4x3xf32>

// -----

// SVMRegressor without support vectors: x . coefficients + rho[0], and one_class
// maps the value to +1 or -1.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<3x2xf32>) -> tensor<3x1xf32> {
    %y = "onnx.SVMRegressor"(%x) {coefficients = [1.0 : f32, -2.0 : f32], rho = [0.5 : f32], n_supports = 0 : i64, one_class = 1 : i64, kernel_params = [0.0 : f32, 0.0 : f32, 0.0 : f32]} : (tensor<3x2xf32>) -> tensor<3x1xf32>
    func.return %y : tensor<3x1xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [3] {
// CHECK:           scf.for {{.*}} -> (f32) {
// CHECK:           arith.cmpf ogt
// CHECK:           arith.select {{.*}} : f32
// CHECK:           memref.store {{.*}}, %y[{{.*}}] : memref<3x1xf32>
