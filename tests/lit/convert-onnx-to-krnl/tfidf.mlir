// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// TfIdfVectorizer: the pool's trie as sorted tables by handle; per row, a
// unigram pass (depth 1), then the skip distances 1..2 walking two steps, each
// step a binary search of the token and one of the edge (parent * 2 + token),
// counting the weight of an n-gram reached at step 1 (bigrams) only.
builtin.module attributes {onnx.opset = 9 : i64} {
  func.func @main_graph(%x: tensor<2x5xi64>) -> tensor<2x3xf32> {
    %y = "onnx.TfIdfVectorizer"(%x) {mode = "TFIDF", min_gram_length = 1 : i64, max_gram_length = 2 : i64, max_skip_count = 1 : i64, ngram_counts = [0, 2], ngram_indexes = [0, 1, 2], pool_int64s = [4, 7, 4, 7], weights = [1.0 : f32, 2.0 : f32, 3.0 : f32]} : (tensor<2x5xi64>) -> tensor<2x3xf32> loc("tfidf0")
    func.return %y : tensor<2x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[EDGES:.+]] = krnl.global {value = #onnx.weight<"ngram_edges", tensor<3xi64>>} : memref<3xi64>
// CHECK-DAG:     %[[WEIGHTS:.+]] = krnl.global {value = #onnx.weight<"weights", tensor<5xf32>>} : memref<5xf32>
// CHECK-DAG:     %[[TOKENS:.+]] = krnl.global {value = #onnx.weight<"ngram_tokens", tensor<2xi64>>} : memref<2xi64>
// CHECK:         krnl.iterate
// CHECK:           memref.store %{{.+}}, %y[%{{.+}}, %{{.+}}] : memref<2x3xf32>
// CHECK:           scf.for
// CHECK:             memref.load %[[TOKENS]]
// CHECK:             memref.load %[[EDGES]]
// CHECK:             scf.if
// CHECK:           scf.for %[[D:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT:        scf.for %[[START:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT:          scf.for %[[N:.+]] = {{.*}} iter_args(%[[NODE:.+]] = %{{.+}}) -> (index) {
// CHECK-NEXT:            %[[STEP:.+]] = arith.muli %[[N]], %[[D]] : index
// CHECK-NEXT:            arith.addi %[[START]], %[[STEP]] : index
// CHECK:                 arith.muli %[[NODE]], %{{.+}} : index
// CHECK:                 %[[BIGRAM:.+]] = arith.cmpi sge, %[[N]], %{{.+}} : index
// CHECK-NEXT:            %[[HIT:.+]] = arith.andi %{{.+}}, %[[BIGRAM]] : i1
// CHECK:                 scf.if %[[HIT]] {
// CHECK-NEXT:              %[[W:.+]] = memref.load %[[WEIGHTS]]
// CHECK-NEXT:              %[[OLD:.+]] = memref.load %y
// CHECK-NEXT:              %[[NEW:.+]] = arith.addf %[[OLD]], %[[W]] : f32
// CHECK-NEXT:              memref.store %[[NEW]], %y

