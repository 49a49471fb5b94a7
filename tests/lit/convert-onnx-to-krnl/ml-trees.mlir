// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// A small tree is nested comparisons: the threshold and the leaf values are
// immediates, the leaf reached is an scf.if result. Binary classifier weighting
// class 0 only with positive weights (a skl2onnx forest): label by score > 0.5,
// scores [1 - s, s].
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<4x2xf32>) -> (tensor<4xi64>, tensor<4x2xf32>) {
    %label, %scores = "onnx.TreeEnsembleClassifier"(%x) {classlabels_int64s = [10, 20], nodes_treeids = [0, 0, 0], nodes_nodeids = [0, 1, 2], nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_featureids = [1, 0, 0], nodes_values = [0.5 : f32, 0.0 : f32, 0.0 : f32], nodes_truenodeids = [1, 0, 0], nodes_falsenodeids = [2, 0, 0], class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [0, 0], class_weights = [0.25 : f32, 0.75 : f32], post_transform = "NONE"} : (tensor<4x2xf32>) -> (tensor<4xi64>, tensor<4x2xf32>)
    func.return %label, %scores : tensor<4xi64>, tensor<4x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG:     %[[LEFT:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG:     %[[RIGHT:.+]] = arith.constant 7.500000e-01 : f32
// CHECK-DAG:     %[[TWENTY:.+]] = arith.constant 20 : i64
// CHECK-DAG:     %[[TEN:.+]] = arith.constant 10 : i64
// CHECK:         ^bb0(%[[n:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %x[%[[n]], %{{.+}}] : memref<4x2xf32>
// CHECK-NEXT:      %[[GO:.+]] = arith.cmpf ole, %[[X]], %[[HALF]] : f32
// CHECK-NEXT:      %[[LEAF:.+]] = scf.if %[[GO]] -> (f32) {
// CHECK-NEXT:        scf.yield %[[LEFT]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[RIGHT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[S:.+]] = arith.addf %{{.+}}, %[[LEAF]] : f32
// CHECK-NEXT:      %[[POSITIVE:.+]] = arith.cmpf ogt, %[[S]], %[[HALF]] : f32
// CHECK-NEXT:      %[[LABEL:.+]] = arith.select %[[POSITIVE]], %[[TWENTY]], %[[TEN]] : i64
// CHECK-NEXT:      %[[NEG:.+]] = arith.subf %{{.+}}, %[[S]] : f32
// CHECK-NEXT:      memref.store %[[LABEL]], %label[%[[n]]] : memref<4xi64>
// CHECK-NEXT:      memref.store %[[NEG]], %scores[%[[n]], %{{.+}}] : memref<4x2xf32>
// CHECK-NEXT:      memref.store %[[S]], %scores[%[[n]], %{{.+}}] : memref<4x2xf32>

// -----

// A tree of 65 nodes (over NESTED_MAX_NODES) is walked: one flat array of node
// records [feature, threshold bits, true delta, false delta] by handle, made
// before the sample loop, a node being its record's element offset; an scf.while
// adds the delta chosen until it is 0 (a leaf, whose threshold field holds its
// row of leaf values). Two modes (the second read from the mode array) and a
// missing-value track (NaN goes to the true child where the flag is set), both
// by record number.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
    %y = "onnx.TreeEnsembleRegressor"(%x) {n_targets = 1 : i64, nodes_treeids = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], nodes_nodeids = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64], nodes_modes = ["BRANCH_LEQ", "LEAF", "BRANCH_GT", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF"], nodes_featureids = [0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 0], nodes_values = [0.0 : f32, 0.0  : f32, 0.2 : f32, 0.0  : f32, 0.4 : f32, 0.0  : f32, 0.6 : f32, 0.0  : f32, 0.8 : f32, 0.0  : f32, 1.0 : f32, 0.0  : f32, 1.2 : f32, 0.0  : f32, 1.4 : f32, 0.0  : f32, 1.6 : f32, 0.0  : f32, 1.8 : f32, 0.0  : f32, 2.0 : f32, 0.0  : f32, 2.2 : f32, 0.0  : f32, 2.4 : f32, 0.0  : f32, 2.6 : f32, 0.0  : f32, 2.8 : f32, 0.0  : f32, 3.0 : f32, 0.0  : f32, 3.2 : f32, 0.0  : f32, 3.4 : f32, 0.0  : f32, 3.6 : f32, 0.0  : f32, 3.8 : f32, 0.0  : f32, 4.0 : f32, 0.0  : f32, 4.2 : f32, 0.0  : f32, 4.4 : f32, 0.0  : f32, 4.6 : f32, 0.0  : f32, 4.8 : f32, 0.0  : f32, 5.0 : f32, 0.0  : f32, 5.2 : f32, 0.0  : f32, 5.4 : f32, 0.0  : f32, 5.6 : f32, 0.0  : f32, 5.8 : f32, 0.0  : f32, 6.0 : f32, 0.0  : f32, 6.2 : f32, 0.0  : f32, 0.0  : f32], nodes_truenodeids = [1, 0, 3, 0, 5, 0, 7, 0, 9, 0, 11, 0, 13, 0, 15, 0, 17, 0, 19, 0, 21, 0, 23, 0, 25, 0, 27, 0, 29, 0, 31, 0, 33, 0, 35, 0, 37, 0, 39, 0, 41, 0, 43, 0, 45, 0, 47, 0, 49, 0, 51, 0, 53, 0, 55, 0, 57, 0, 59, 0, 61, 0, 63, 0, 0], nodes_falsenodeids = [2, 0, 4, 0, 6, 0, 8, 0, 10, 0, 12, 0, 14, 0, 16, 0, 18, 0, 20, 0, 22, 0, 24, 0, 26, 0, 28, 0, 30, 0, 32, 0, 34, 0, 36, 0, 38, 0, 40, 0, 42, 0, 44, 0, 46, 0, 48, 0, 50, 0, 52, 0, 54, 0, 56, 0, 58, 0, 60, 0, 62, 0, 64, 0, 0], nodes_missing_value_tracks_true = [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], target_treeids = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], target_nodeids = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63, 64], target_ids = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], target_weights = [1.0 : f32, 3.0 : f32, 5.0 : f32, 7.0 : f32, 9.0 : f32, 11.0 : f32, 13.0 : f32, 15.0 : f32, 17.0 : f32, 19.0 : f32, 21.0 : f32, 23.0 : f32, 25.0 : f32, 27.0 : f32, 29.0 : f32, 31.0 : f32, 33.0 : f32, 35.0 : f32, 37.0 : f32, 39.0 : f32, 41.0 : f32, 43.0 : f32, 45.0 : f32, 47.0 : f32, 49.0 : f32, 51.0 : f32, 53.0 : f32, 55.0 : f32, 57.0 : f32, 59.0 : f32, 61.0 : f32, 63.0 : f32, 64.0 : f32], base_values = [0.5 : f32], post_transform = "NONE"} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    func.return %y : tensor<2x1xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[NODES:.+]] = krnl.global {value = #onnx.weight<"tree_nodes", tensor<260xi32>>} : memref<260xi32>
// CHECK-DAG:     %[[ROOTS:.+]] = krnl.global {value = #onnx.weight<"tree_roots", tensor<1xi32>>} : memref<1xi32>
// CHECK-DAG:     %[[VALUES:.+]] = krnl.global {value = #onnx.weight<"tree_leaf_values", tensor<33x1xf32>>} : memref<33x1xf32>
// CHECK-DAG:     %[[MODES:.+]] = krnl.global {value = #onnx.weight<"tree_modes", tensor<65xi8>>} : memref<65xi8>
// CHECK-DAG:     %[[MISSING:.+]] = krnl.global {value = #onnx.weight<"tree_missing_true", tensor<65xi8>>} : memref<65xi8>
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [2] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index):
// CHECK-NEXT:      %[[ROOT:.+]] = memref.load %[[ROOTS]][%{{.+}}] : memref<1xi32>
// CHECK-NEXT:      %[[ROOTI:.+]] = arith.index_cast %[[ROOT]] : i32 to index
// CHECK-NEXT:      %[[LEAF:.+]] = scf.while (%[[node:.+]] = %[[ROOTI]]) : (index) -> index {
// CHECK-NEXT:        %[[F:.+]] = memref.load %[[NODES]][%[[node]]] : memref<260xi32>
// CHECK-NEXT:        %[[FI:.+]] = arith.index_cast %[[F]] : i32 to index
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%[[n]], %[[FI]]] : memref<2x3xf32>
// CHECK-NEXT:        %[[AT1:.+]] = arith.addi %[[node]], %{{.+}} : index
// CHECK-NEXT:        %[[BITS:.+]] = memref.load %[[NODES]][%[[AT1]]] : memref<260xi32>
// CHECK-NEXT:        %[[TH:.+]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK-NEXT:        %[[NUMBER:.+]] = arith.divsi %[[node]], %{{.+}} : index
// CHECK-NEXT:        %[[FLAG:.+]] = memref.load %[[MISSING]][%[[NUMBER]]] : memref<65xi8>
// CHECK:             arith.cmpf ogt, %[[V]], %[[TH]] : f32
// CHECK:             arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK:             %[[MODE:.+]] = memref.load %[[MODES]][%[[NUMBER]]] : memref<65xi8>
// CHECK:             arith.cmpf ole, %[[V]], %[[TH]] : f32
// CHECK:             %[[GO:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : i1
// CHECK-NEXT:        %[[AT2:.+]] = arith.addi %[[node]], %{{.+}} : index
// CHECK-NEXT:        %[[T:.+]] = memref.load %[[NODES]][%[[AT2]]] : memref<260xi32>
// CHECK-NEXT:        %[[AT3:.+]] = arith.addi %[[node]], %{{.+}} : index
// CHECK-NEXT:        %[[E:.+]] = memref.load %[[NODES]][%[[AT3]]] : memref<260xi32>
// CHECK-NEXT:        %[[DELTA:.+]] = arith.select %[[GO]], %[[T]], %[[E]] : i32
// CHECK-NEXT:        %[[DELTAI:.+]] = arith.index_cast %[[DELTA]] : i32 to index
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addi %[[node]], %[[DELTAI]] : index
// CHECK-NEXT:        %[[MOVED:.+]] = arith.cmpi ne, %[[DELTA]], %{{.+}} : i32
// CHECK-NEXT:        scf.condition(%[[MOVED]]) %[[NEXT]] : index
// CHECK-NEXT:      } do {
// CHECK:           %[[AT4:.+]] = arith.addi %[[LEAF]], %{{.+}} : index
// CHECK-NEXT:      %[[ROW:.+]] = memref.load %[[NODES]][%[[AT4]]] : memref<260xi32>
// CHECK-NEXT:      %[[ROWI:.+]] = arith.index_cast %[[ROW]] : i32 to index
// CHECK-NEXT:      %[[W:.+]] = memref.load %[[VALUES]][%[[ROWI]], %{{.+}}] : memref<33x1xf32>
// CHECK-NEXT:      %[[TOTAL:.+]] = arith.addf %{{.+}}, %[[W]] : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.addf %[[TOTAL]], %{{.+}} : f32
// CHECK-NEXT:      memref.store %[[Y]], %y[%[[n]], %{{.+}}] : memref<2x1xf32>
