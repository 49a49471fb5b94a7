// RUN: onnxc-opt %s -p cdist-scan,shape-inference --print-debuginfo | filecheck %s

// skl2onnx's cdist Scan (state: the samples; scanned: the rows; each step the squared
// distances) then Transpose becomes Unsqueeze - rows, ReduceSumSquare over the features:
// the batch n stays the leading dim. A Scan whose body does anything else is kept.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<?x4xf32, ["n", ""]>, %y: tensor<?x4xf32, ["m", ""]>) -> (tensor<*xnone>, tensor<*xnone>) {
    %rows = "onnx.Constant"() {value = dense<1.0> : tensor<150x4xf32>} : () -> tensor<150x4xf32>
    %s, %d = "onnx.Scan"(%x, %rows) <{operandSegmentSizes = array<i32: 2>, resultSegmentSizes = array<i32: 2>}> ({
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?xf32>):
      %i = "onnx.Identity"(%a) : (tensor<?x4xf32>) -> tensor<?x?xf32>
      %sub = "onnx.Sub"(%a, %b) : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<*xnone>
      %axes = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
      %r = "onnx.ReduceSumSquare"(%sub, %axes) <{operandSegmentSizes = array<i32: 1, 1>}> {keepdims = 0 : i64, onnx.since_version = 18 : i64} : (tensor<*xnone>, tensor<1xi64>) -> tensor<*xnone>
      %o = "onnx.Identity"(%r) : (tensor<*xnone>) -> tensor<?xf32>
      onnx.yield %i, %o : tensor<?x?xf32>, tensor<?xf32>
    }) {num_scan_inputs = 1 : i64} : (tensor<?x4xf32, ["n", ""]>, tensor<150x4xf32>) -> (tensor<*xnone>, tensor<*xnone>) loc("scan")
    %t = "onnx.Transpose"(%d) {perm = [1 : i64, 0 : i64]} : (tensor<*xnone>) -> tensor<*xnone> loc("transpose")
    %s2, %d2 = "onnx.Scan"(%y, %rows) <{operandSegmentSizes = array<i32: 2>, resultSegmentSizes = array<i32: 2>}> ({
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?xf32>):
      %i = "onnx.Identity"(%a) : (tensor<?x4xf32>) -> tensor<?x?xf32>
      %sub = "onnx.Add"(%a, %b) : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<*xnone>
      %axes = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
      %r = "onnx.ReduceSumSquare"(%sub, %axes) <{operandSegmentSizes = array<i32: 1, 1>}> {keepdims = 0 : i64, onnx.since_version = 18 : i64} : (tensor<*xnone>, tensor<1xi64>) -> tensor<*xnone>
      onnx.yield %i, %r : tensor<?x?xf32>, tensor<*xnone>
    }) {num_scan_inputs = 1 : i64} : (tensor<?x4xf32, ["m", ""]>, tensor<150x4xf32>) -> (tensor<*xnone>, tensor<*xnone>) loc("sums")
    func.return %t, %d2 : tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      %[[U:.*]] = "onnx.Unsqueeze"(%x, %{{.*}}) {{.*}} -> tensor<?x1x4xf32, ["n", "", ""]> loc("scan.samples")
// CHECK-NEXT: %[[S:.*]] = "onnx.Sub"(%[[U]], %rows) {{.*}} -> tensor<?x150x4xf32, ["n", "", ""]> loc("scan.differences")
// CHECK-NEXT: %[[D:.*]] = "onnx.ReduceSumSquare"(%[[S]], %{{.*}}) {{.*}} -> tensor<?x150xf32, ["n", ""]> loc("scan.distances")
// CHECK:      "onnx.Scan"(%y, %rows)
// CHECK:      func.return %[[D]],
