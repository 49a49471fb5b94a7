// RUN: not onnxc-opt %s -p convert-onnx-to-krnl 2>&1 | filecheck %s

// A pool whose counts do not make whole n-grams is refused naming the node.
builtin.module attributes {onnx.opset = 9 : i64} {
  func.func @main_graph(%x: tensor<5xi32>) -> tensor<2xf32> {
    %y = "onnx.TfIdfVectorizer"(%x) {mode = "TF", min_gram_length = 2 : i64, max_gram_length = 2 : i64, max_skip_count = 0 : i64, ngram_counts = [0, 0], ngram_indexes = [0, 1], pool_int64s = [4, 7, 4]} : (tensor<5xi32>) -> tensor<2xf32> loc("tfidf1")
    func.return %y : tensor<2xf32>
  }
}

// CHECK: ShapeError: node 'tfidf1' (TfIdfVectorizer): 3 items for n-grams of size 2
