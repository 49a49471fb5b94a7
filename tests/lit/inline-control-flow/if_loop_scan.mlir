// RUN: onnxc-opt %s -p inline-control-flow --print-debuginfo | filecheck %s

// An If whose condition folds (Equal of constants) becomes the branch taken; a Loop
// with a constant trip count becomes one copy of its body per iteration, the nested If
// resolved per copy (iteration 0 takes `then` (Mul), 1 and 2 `else` (Add)), its scan output stacked;
// a Scan becomes its body per slice along the scan axis. If's regions come in the
// schema's attribute order: else_branch, then then_branch.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %zero = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %three = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %true = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    %is_zero = "onnx.Equal"(%zero, %three) : (tensor<i64>, tensor<i64>) -> tensor<*xnone> loc("is_zero")
    %picked = "onnx.If"(%is_zero) <{resultSegmentSizes = array<i32: 1>}> ({
      %n = "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<*xnone> loc("else_neg")
      onnx.yield %n : tensor<*xnone>
    }, {
      %a = "onnx.Abs"(%x) : (tensor<2xf32>) -> tensor<*xnone> loc("then_abs")
      onnx.yield %a : tensor<*xnone>
    }) : (tensor<*xnone>) -> tensor<*xnone> loc("choose")
    %final, %scan = "onnx.Loop"(%three, %true, %x) <{operandSegmentSizes = array<i32: 1, 1, 1>, resultSegmentSizes = array<i32: 2>}> ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
      %first = "onnx.Equal"(%i, %zero) : (tensor<i64>, tensor<i64>) -> tensor<*xnone> loc("first")
      %step = "onnx.If"(%first) <{resultSegmentSizes = array<i32: 1>}> ({
        %s = "onnx.Add"(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone> loc("add_x")
        onnx.yield %s : tensor<*xnone>
      }, {
        %m = "onnx.Mul"(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone> loc("mul_x")
        onnx.yield %m : tensor<*xnone>
      }) : (tensor<*xnone>) -> tensor<*xnone> loc("step")
      onnx.yield %c, %step, %step : tensor<i1>, tensor<*xnone>, tensor<*xnone>
    }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<*xnone>, tensor<*xnone>) loc("loop")
    %sum, %partial = "onnx.Scan"(%x, %xs) <{operandSegmentSizes = array<i32: 2>, resultSegmentSizes = array<i32: 2>}> ({
    ^bb0(%s_in: tensor<2xf32>, %row: tensor<2xf32>):
      %s_out = "onnx.Add"(%s_in, %row) : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone> loc("running")
      onnx.yield %s_out, %s_out : tensor<*xnone>, tensor<*xnone>
    }) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<*xnone>, tensor<*xnone>) loc("scan")
    func.return %picked, %final, %scan, %sum, %partial : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph({{.*}}) -> (tensor<2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>)
// CHECK-NOT:  "onnx.If"
// CHECK-NOT:  "onnx.Loop"
// CHECK-NOT:  "onnx.Scan"
// CHECK-NOT:  then_abs
// CHECK:      %[[PICKED:.*]] = "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("else_neg")
// CHECK:      %[[I0:.*]] = "onnx.Mul"(%x, %x) {{.*}} loc("mul_x")
// CHECK:      %[[I1:.*]] = "onnx.Add"(%[[I0]], %x) {{.*}} loc("add_x")
// CHECK:      %[[I2:.*]] = "onnx.Add"(%[[I1]], %x) {{.*}} loc("add_x")
// CHECK:      "onnx.Unsqueeze"(%[[I0]],
// CHECK:      "onnx.Unsqueeze"(%[[I1]],
// CHECK:      "onnx.Unsqueeze"(%[[I2]],
// CHECK:      %[[STACK:.*]] = "onnx.Concat"{{.*}}{axis = 0 : i64}{{.*}}-> tensor<3x2xf32> loc("loop")
// CHECK:      "onnx.Gather"(%xs, {{.*}}) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<2xf32> loc("scan")
// CHECK:      %[[R0:.*]] = "onnx.Add"(%x, {{.*}}) {{.*}} loc("running")
// CHECK:      %[[R1:.*]] = "onnx.Add"(%[[R0]], {{.*}}) {{.*}} loc("running")
// CHECK:      %[[R2:.*]] = "onnx.Add"(%[[R1]], {{.*}}) {{.*}} loc("running")
// CHECK:      %[[PARTIAL:.*]] = "onnx.Concat"{{.*}}{axis = 0 : i64}{{.*}}-> tensor<3x2xf32> loc("scan")
// CHECK:      func.return %[[PICKED]], %[[I2]], %[[STACK]], %[[R2]], %[[PARTIAL]]
