# RUN: %python %S/../inputs/make_model.py control_flow %t.onnx
# RUN: onnxc %t.onnx --emit onnx-basic -o - | filecheck %s
# RUN: onnxc %t.onnx --emit onnx -o - | filecheck %s --check-prefix=INLINED

# Sub-graphs become regions closed by onnx.yield: the Loop body's inputs are block
# arguments, outer values (x, zero) are used directly, the nested If keeps its two
# regions (else_branch first, in schema attribute order). The sequence never enters
# the IR: SequenceAt of a sequence built from known tensors is that tensor.
# CHECK:      func.func @main_graph(%0: tensor<2xf32> loc(unknown)) -> (tensor<2xf32>, tensor<2xf32>)
# CHECK:      %[[ZERO:.*]] = "onnx.Constant"() {value = #onnx.weight<"zero", tensor<i64>>}
# CHECK:      %[[LOOP:.*]] = "onnx.Loop"
# CHECK-NEXT: ^bb0(%[[I:.*]]: tensor<i64> loc(unknown), %[[C:.*]]: tensor<i1> loc(unknown), %[[ACC:.*]]: tensor<2xf32> loc(unknown)):
# CHECK:      "onnx.Equal"(%[[I]], %[[ZERO]])
# CHECK:      "onnx.If"
# CHECK:      "onnx.Mul"(%[[ACC]], %0)
# CHECK:      onnx.yield
# CHECK:      "onnx.Add"(%[[ACC]], %0)
# CHECK:      onnx.yield
# CHECK:      onnx.yield
# CHECK:      func.return %[[LOOP]], %0
# CHECK-NOT:  Sequence

# INLINED-NOT: "onnx.Loop"
# INLINED-NOT: "onnx.If"
# INLINED:     "onnx.Add"{{.*}} loc("then_add")
# INLINED:     "onnx.Mul"{{.*}} loc("else_mul")
# INLINED:     func.return
