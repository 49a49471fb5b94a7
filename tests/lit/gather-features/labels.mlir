// RUN: onnxc-opt %s -p shape-inference,gather-features --print-debuginfo | filecheck %s

// ArrayFeatureExtractor of 1-D labels at [n, 5] indices, reshaped to [-1, 5]: a Gather
// ([n, 5] at once). With a Cast between, the Cast follows the Gather. Reshaped to another
// shape ([-1, 1]), it is kept.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%i: tensor<?x5xi64, ["n", ""]>, %j: tensor<?xi64, ["n"]>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %labels = "onnx.Constant"() {value = dense<[0, 1, 2, 1, 0, 2]> : tensor<6xi64>} : () -> tensor<6xi64>
    %classes = "onnx.Constant"() {value = dense<[4, 5, 6]> : tensor<3xi64>} : () -> tensor<3xi64>
    %by_five = "onnx.Constant"() {value = dense<[-1, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
    %flat = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
    %by_one = "onnx.Constant"() {value = dense<[-1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
    %a = "onnx.ArrayFeatureExtractor"(%labels, %i) : (tensor<6xi64>, tensor<?x5xi64, ["n", ""]>) -> tensor<*xnone> loc("near")
    %ra = "onnx.Reshape"(%a, %by_five) : (tensor<*xnone>, tensor<2xi64>) -> tensor<*xnone> loc("near_rows")
    %b = "onnx.ArrayFeatureExtractor"(%classes, %j) : (tensor<3xi64>, tensor<?xi64, ["n"]>) -> tensor<*xnone> loc("label")
    %cb = "onnx.Cast"(%b) {to = 1 : i64} : (tensor<*xnone>) -> tensor<*xnone> loc("label_float")
    %rb = "onnx.Reshape"(%cb, %flat) : (tensor<*xnone>, tensor<1xi64>) -> tensor<*xnone> loc("label_rows")
    %c = "onnx.ArrayFeatureExtractor"(%classes, %j) : (tensor<3xi64>, tensor<?xi64, ["n"]>) -> tensor<*xnone> loc("kept")
    %rc = "onnx.Reshape"(%c, %by_one) : (tensor<*xnone>, tensor<2xi64>) -> tensor<*xnone> loc("kept_rows")
    func.return %ra, %rb, %rc : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      %[[A:.*]] = "onnx.Gather"(%labels, %i) {{.*}} -> tensor<?x5xi64, ["n", ""]> loc("near")
// CHECK:      %[[B:.*]] = "onnx.Gather"(%classes, %j) {{.*}} -> tensor<?xi64, ["n"]> loc("label")
// CHECK-NEXT: %[[C:.*]] = "onnx.Cast"(%[[B]]) {{.*}} -> tensor<?xf32, ["n"]> loc("label_float")
// CHECK:      "onnx.ArrayFeatureExtractor"(%classes, %j) {{.*}} loc("kept")
// CHECK:      func.return %[[A]], %[[C]], %{{.*}} :
