// RUN: onnxc-opt %s -p shape-inference | filecheck %s

// Result dims over run-time input dims for DeformConv and ConvInteger (Conv's
// window formula, the weights' rows as channels), MaxPool's indices (the
// values' dims), Col2Im (the channels less the block: a divisibility check;
// the column count fixed by the constant image), Resize keeping the aspect
// ratio (the least over the axes of the rounded size_j / in_j * in) and STFT
// (frames and bins of the window's run-time length). What the ops require of
// their dims becomes run-time checks (offsets for every tap, channels in blocks).
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<?x?x?x?xf32, ["n", "c", "h", "w"]>, %wd: tensor<?x?x?x?xf32, ["m", "cg", "kh", "kw"]>, %off: tensor<?x?x?x?xf32, ["n", "o", "oh", "ow"]>, %q: tensor<?x?x?x?xui8, ["n", "c", "h", "w"]>, %wq: tensor<?x?x?x?xui8, ["m", "c", "kh", "kw"]>, %cols: tensor<?x?x?xf32, ["n", "cb", "l"]>, %sig: tensor<?x?x1xf32, ["n", "t", ""]>, %win: tensor<?xf32, ["wl"]>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %deform = "onnx.DeformConv"(%x, %wd, %off) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> {strides = [1 : i64, 2 : i64], pads = [1 : i64, 0 : i64, 1 : i64, 1 : i64]} : (tensor<?x?x?x?xf32, ["n", "c", "h", "w"]>, tensor<?x?x?x?xf32, ["m", "cg", "kh", "kw"]>, tensor<?x?x?x?xf32, ["n", "o", "oh", "ow"]>) -> tensor<*xnone> loc("deform")
    %convint = "onnx.ConvInteger"(%q, %wq) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>}> {pads = [1 : i64, 1 : i64, 0 : i64, 0 : i64]} : (tensor<?x?x?x?xui8, ["n", "c", "h", "w"]>, tensor<?x?x?x?xui8, ["m", "c", "kh", "kw"]>) -> tensor<*xnone> loc("convinteger")
    %pool, %indices = "onnx.MaxPool"(%x) <{resultSegmentSizes = array<i32: 1, 1>}> {kernel_shape = [3 : i64, 2 : i64], strides = [2 : i64, 1 : i64]} : (tensor<?x?x?x?xf32, ["n", "c", "h", "w"]>) -> (tensor<*xnone>, tensor<*xnone>) loc("pool")
    %image = "onnx.Constant"() {value = dense<[5, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
    %block = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
    %col2im = "onnx.Col2Im"(%cols, %image, %block) : (tensor<?x?x?xf32, ["n", "cb", "l"]>, tensor<2xi64>, tensor<2xi64>) -> tensor<*xnone> loc("col2im")
    %sizes = "onnx.Constant"() {value = dense<[6, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
    %resized = "onnx.Resize"(%x, %sizes) <{operandSegmentSizes = array<i32: 1, 0, 0, 1>}> {axes = [2 : i64, 3 : i64], keep_aspect_ratio_policy = "not_larger"} : (tensor<?x?x?x?xf32, ["n", "c", "h", "w"]>, tensor<2xi64>) -> tensor<*xnone> loc("resize")
    %step = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %stft = "onnx.STFT"(%sig, %step, %win) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<?x?x1xf32, ["n", "t", ""]>, tensor<i64>, tensor<?xf32, ["wl"]>) -> tensor<*xnone> loc("stft")
    func.return %deform, %convint, %indices, %col2im, %resized, %stft : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph({{.*}}%wd: tensor<?x?x?x?xf32, ["m", "c", "kh", "kw"]>{{.*}}%cols: tensor<?x?x16xf32, ["n", "cb", ""]>
// CHECK-SAME:   onnx.dim_checks = [["o", "==", "2*kh*kw", "deform", "DeformConv"], ["oh", "==", "h - kh + 3", "deform", "DeformConv"], ["ow", "==", "((-kw + w + 1) // 2) + 1", "deform", "DeformConv"]
// CHECK-SAME:   ["cb", "==", "6*(cb // 6)", "col2im", "Col2Im"]
// CHECK:      "onnx.DeformConv"{{.*}} -> tensor<?x?x?x?xf32, ["n", "m", "h - kh + 3", "((-kw + w + 1) // 2) + 1"]>
// CHECK:      "onnx.ConvInteger"{{.*}} -> tensor<?x?x?x?xi32, ["n", "m", "h - kh + 2", "-kw + w + 2"]>
// CHECK:      "onnx.MaxPool"{{.*}} -> (tensor<?x?x?x?xf32, ["n", "c", "((h - 3) // 2) + 1", "w - 1"]>, tensor<?x?x?x?xi64, ["n", "c", "((h - 3) // 2) + 1", "w - 1"]>)
// CHECK:      "onnx.Col2Im"{{.*}} -> tensor<?x?x5x6xf32, ["n", "(cb // 6)", "", ""]>
// CHECK:      "onnx.Resize"{{.*}} -> tensor<?x?x?x?xf32, ["n", "c", "(min(((10*h + w) // (2*w)), 6))", "(min(((h + 12*w) // (2*h)), 5))"]>
// CHECK:      "onnx.STFT"{{.*}} -> tensor<?x?x?x2xf32, ["n", "((t - wl) // 3) + 1", "(wl // 2) + 1", ""]>
