// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// TfIdfVectorizer: the pool's trie with its edges (parent, token) -> child in a
// hash table by handle; per row, a unigram pass (depth 1), then the skip
// distances 1..2 walking two steps, each step the hash of (token, node) and
// four unrolled probes comparing both, a dead end being node -1; the weight of
// an n-gram reached at step 1 (bigrams) counts.
builtin.module attributes {onnx.opset = 9 : i64} {
  func.func @main_graph(%x: tensor<2x5xi64>) -> tensor<2x3xf32> {
    %y = "onnx.TfIdfVectorizer"(%x) {mode = "TFIDF", min_gram_length = 1 : i64, max_gram_length = 2 : i64, max_skip_count = 1 : i64, ngram_counts = [0, 2], ngram_indexes = [0, 1, 2], pool_int64s = [4, 7, 4, 7], weights = [1.0 : f32, 2.0 : f32, 3.0 : f32]} : (tensor<2x5xi64>) -> tensor<2x3xf32> loc("tfidf0")
    func.return %y : tensor<2x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[TABLE:.+]] = krnl.global {value = #onnx.weight<"hash_table", tensor<12x3xi64>>} : memref<12x3xi64>
// CHECK-DAG:     %[[WEIGHTS:.+]] = krnl.global {value = #onnx.weight<"weights", tensor<5xf32>>} : memref<5xf32>
// CHECK:         krnl.iterate
// CHECK:           memref.store %{{.+}}, %y[%{{.+}}, %{{.+}}] : memref<2x3xf32>
// CHECK:           scf.for
// CHECK:             memref.load %[[TABLE]]
// CHECK:             scf.if
// CHECK:           scf.for %[[D:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT:        scf.for %[[START:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT:          scf.for %[[N:.+]] = {{.*}} iter_args(%[[NODE:.+]] = %{{.+}}) -> (i64) {
// CHECK-NEXT:            %[[STEP:.+]] = arith.muli %[[N]], %[[D]] : index
// CHECK-NEXT:            arith.addi %[[START]], %[[STEP]] : index
// CHECK:                 %[[TOKEN:.+]] = memref.load %x
// CHECK-NEXT:            %[[MIXED:.+]] = arith.muli %[[TOKEN]], %{{.+}} : i64
// CHECK-NEXT:            arith.muli %[[NODE]], %{{.+}} : i64
// CHECK-NEXT:            arith.addi
// CHECK-NEXT:            %[[HOME:.+]] = arith.shrui
// CHECK-NEXT:            %[[SLOT:.+]] = arith.index_cast %[[HOME]] : i64 to index
// CHECK-NEXT:            %[[PARENT:.+]] = memref.load %[[TABLE]][%[[SLOT]], %{{.+}}] : memref<12x3xi64>
// CHECK-NEXT:            arith.cmpi eq, %[[PARENT]], %[[NODE]] : i64
// CHECK-COUNT-3:         arith.addi %[[SLOT]], %{{.+}} : index
// CHECK:                 %[[BIGRAM:.+]] = arith.cmpi sge, %[[N]], %{{.+}} : index
// CHECK-NEXT:            %[[HIT:.+]] = arith.andi %{{.+}}, %[[BIGRAM]] : i1
// CHECK:                 scf.if %[[HIT]] {
// CHECK-NEXT:              %[[W:.+]] = memref.load %[[WEIGHTS]]
// CHECK-NEXT:              %[[OLD:.+]] = memref.load %y
// CHECK-NEXT:              %[[NEW:.+]] = arith.addf %[[OLD]], %[[W]] : f32
// CHECK-NEXT:              memref.store %[[NEW]], %y
