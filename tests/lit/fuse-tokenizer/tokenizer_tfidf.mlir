// RUN: onnxc-opt %s -p shape-inference,fuse-tokenizer | filecheck %s

// StringNormalizer (no stopwords) -> Tokenizer -> Flatten -> TfIdfVectorizer becomes one
// TfIdfVectorizer on the strings made rows ([n] -> [n, 1]), the Tokenizer's settings and
// the case change in onnxc.tokenize; its result keeps the symbolic batch.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%0: tensor<?x!onnx.string, ["n"]>) -> tensor<*xf32> {
    %1 = "onnx.StringNormalizer"(%0) {case_change_action = "LOWER", locale = "C"} : (tensor<?x!onnx.string, ["n"]>) -> tensor<*xnone> loc("normalizer")
    %2 = "onnx.Tokenizer"(%1) {mark = 0 : i64, mincharnum = 1 : i64, pad_value = "#", tokenexp = "[a-c]+"} : (tensor<*xnone>) -> tensor<*xnone> loc("tokenizer")
    %3 = "onnx.Flatten"(%2) : (tensor<*xnone>) -> tensor<*xnone> loc("flatten")
    %4 = "onnx.TfIdfVectorizer"(%3) {max_gram_length = 2 : i64, max_skip_count = 1 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = [0 : i64, 2 : i64], ngram_indexes = [0 : i64, 1 : i64, 2 : i64, 3 : i64], pool_strings = ["ab", "c", "ab", "c", "c", "ab"]} : (tensor<*xnone>) -> tensor<*xf32> loc("y")
    func.return %4 : tensor<*xf32>
  }
}
// CHECK-NOT: onnx.StringNormalizer
// CHECK-NOT: onnx.Tokenizer
// CHECK-NOT: onnx.Flatten
// CHECK:     %[[ROWS:.*]] = "onnx.Unsqueeze"(%0, %{{.*}}) : {{.*}} -> tensor<?x1x!onnx.string, ["n", ""]>
// CHECK:     "onnx.TfIdfVectorizer"(%[[ROWS]])
// CHECK-SAME: onnxc.tokenize = {bytes = [97 : i64, 98 : i64, 99 : i64], mincharnum = 1 : i64, mark = 0 : i64, pad_value = "#", case_change = "LOWER", padding_counts = 0 : i64, locale = "C"}
// CHECK-SAME: -> tensor<?x4xf32, ["n", ""]>
