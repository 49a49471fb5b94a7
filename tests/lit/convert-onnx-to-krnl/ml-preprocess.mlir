// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Scaler: (x - offset) * scale with per-feature parameters by handle; integer
// input converted to float.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4x2xi64>) -> tensor<4x2xf32> {
    %y = "onnx.Scaler"(%x) {offset = [1.0 : f32, 2.0 : f32], scale = [0.5 : f32]} : (tensor<4x2xi64>) -> tensor<4x2xf32>
    func.return %y : tensor<4x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[OFFSET:.+]] = krnl.global {value = #onnx.weight<"offset", tensor<2xf32>>} : memref<2xf32>
// CHECK-DAG:     %[[SCALE:.+]] = krnl.global {value = #onnx.weight<"scale", tensor<2xf32>>} : memref<2xf32>
// CHECK:         ^bb0(%[[n:.+]]: index, %[[c:.+]]: index):
// CHECK-NEXT:      %[[I:.+]] = memref.load %x[%[[n]], %[[c]]] : memref<4x2xi64>
// CHECK-NEXT:      %[[F:.+]] = arith.sitofp %[[I]] : i64 to f32
// CHECK-NEXT:      %[[O:.+]] = memref.load %[[OFFSET]][%[[c]]] : memref<2xf32>
// CHECK-NEXT:      %[[D:.+]] = arith.subf %[[F]], %[[O]] : f32
// CHECK-NEXT:      %[[S:.+]] = memref.load %[[SCALE]][%[[c]]] : memref<2xf32>
// CHECK-NEXT:      %[[Y:.+]] = arith.mulf %[[D]], %[[S]] : f32
// CHECK-NEXT:      memref.store %[[Y]], %y[%[[n]], %[[c]]] : memref<4x2xf32>

// -----

// Normalizer L2: one reduction over the row, a zero norm replaced by 1, then a
// second pass dividing the row.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    %y = "onnx.Normalizer"(%x) {norm = "L2"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
    func.return %y : tensor<4x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[SUM:.+]] = scf.for {{.*}} -> (f32) {
// CHECK:           arith.mulf
// CHECK:         }
// CHECK-NEXT:    %[[NORM:.+]] = math.sqrt %[[SUM]] : f32
// CHECK-NEXT:    %[[ZERO:.+]] = arith.cmpf oeq, %[[NORM]], %{{.+}} : f32
// CHECK-NEXT:    %[[DIVISOR:.+]] = arith.select %[[ZERO]], %{{.+}}, %[[NORM]] : f32
// CHECK:         scf.for
// CHECK:           arith.divf %{{.+}}, %[[DIVISOR]] : f32

// -----

// OneHotEncoder: an equality with each category (held as the input's type).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4x1xi64>) -> tensor<4x1x3xf32> {
    %y = "onnx.OneHotEncoder"(%x) {cats_int64s = [2, 5, 7], zeros = 0 : i64} : (tensor<4x1xi64>) -> tensor<4x1x3xf32>
    func.return %y : tensor<4x1x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[CATS:.+]] = krnl.global {value = #onnx.weight<"cats", tensor<3xi64>>} : memref<3xi64>
// CHECK:         ^bb0(%[[n:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %x[%[[n]], %[[j]]] : memref<4x1xi64>
// CHECK-NEXT:      %[[C:.+]] = memref.load %[[CATS]][%[[k]]] : memref<3xi64>
// CHECK-NEXT:      %[[EQ:.+]] = arith.cmpi eq, %[[X]], %[[C]] : i64
// CHECK-NEXT:      %[[Y:.+]] = arith.select %[[EQ]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:      memref.store %[[Y]], %y[%[[n]], %[[j]], %[[k]]] : memref<4x1x3xf32>

// -----

// Imputer: NaN is replaced (NaN never equals itself), Binarizer: x > threshold.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
    %i = "onnx.Imputer"(%x) {imputed_value_floats = [1.0 : f32, 2.0 : f32], replaced_value_float = 0x7FC00000 : f32} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %b = "onnx.Binarizer"(%i) {threshold = 1.5 : f32} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    func.return %i, %b : tensor<2x2xf32>, tensor<2x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[V:.+]] = memref.load %x[%{{.+}}, %[[c:.+]]] : memref<2x2xf32>
// CHECK-NEXT:    %[[NAN:.+]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK-NEXT:    %[[IMPUTED:.+]] = memref.load %{{.+}}[%[[c]]] : memref<2xf32>
// CHECK-NEXT:    arith.select %[[NAN]], %[[IMPUTED]], %[[V]] : f32
// CHECK:         arith.cmpf ogt
// CHECK-NEXT:    arith.select

// -----

// FeatureVectorizer: each input's columns at its offset, zeros past an input's width.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<2x2xf32>, %b: tensor<2x1xi32>) -> tensor<2x4xf32> {
    %y = "onnx.FeatureVectorizer"(%a, %b) <{operandSegmentSizes = array<i32: 2>}> {inputdimensions = [2, 2]} : (tensor<2x2xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
    func.return %y : tensor<2x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [2, 2] {
// CHECK:           memref.load %a
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [2, 2] {
// CHECK:           %[[INSIDE:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : index
// CHECK:           memref.load %b
// CHECK:           arith.sitofp
// CHECK:           arith.select %[[INSIDE]]
// CHECK:           %[[COL:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:      memref.store %{{.+}}, %y[%{{.+}}, %[[COL]]] : memref<2x4xf32>

// -----

// ArrayFeatureExtractor of a vector: one row [1, indices]; a matrix of indices is
// read by the row-major position of the result's column.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<5xf32>, %i: tensor<2x2xi64>) -> tensor<1x4xf32> {
    %y = "onnx.ArrayFeatureExtractor"(%x, %i) : (tensor<5xf32>, tensor<2x2xi64>) -> tensor<1x4xf32>
    func.return %y : tensor<1x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 4] {
// CHECK-NEXT:    ^bb0(%[[r:.+]]: index, %[[c:.+]]: index):
// CHECK:           %[[ROW:.+]] = arith.divsi %[[c]], %{{.+}} : index
// CHECK:           %[[COL:.+]] = arith.remsi %[[c]], %{{.+}} : index
// CHECK:           memref.load %i[%[[ROW]], %[[COL]]] : memref<2x2xi64>
// CHECK:           %[[V:.+]] = memref.load %x[%{{.+}}] : memref<5xf32>
// CHECK:           memref.store %[[V]], %y[%[[r]], %[[c]]] : memref<1x4xf32>
