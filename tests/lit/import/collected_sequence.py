# RUN: onnxc %S/../../models/cf_collect.onnx --emit onnx-basic -o - | filecheck %s

# A scripted `while` appending to a list (tests/models/export_control_flow.py):
# the Loop carries a sequence that starts empty and only has one tensor
# appended per iteration, and its trip count is INT64_MAX, so it cannot be
# unrolled at import. The sequence becomes a scan output (the appended
# ReduceSum yielded last), no longer carried; ConcatFromSequence stacking it
# (new_axis=1, axis=0) is that scan output itself.
# CHECK:      %[[X:.+]]: tensor<3x4xf32>
# CHECK:      %[[STATE:.+]], %[[ROWS:.+]] = "onnx.Loop"(%{{.+}}, %{{.+}}, %[[X]]) <{operandSegmentSizes = array<i32: 1, 1, 1>, resultSegmentSizes = array<i32: 2>}>
# CHECK-NEXT: ^bb0(%{{.+}}: tensor<i64> loc(unknown), %{{.+}}: tensor<i1> loc(unknown), %{{.+}}: tensor<3x4xf32> loc(unknown)):
# CHECK:        %[[NEXT:.+]] = "onnx.Add"
# CHECK:        %[[ROW:.+]] = "onnx.ReduceSum"(%[[NEXT]], %{{.+}})
# CHECK:        onnx.yield %{{.+}}, %[[NEXT]], %[[ROW]]
# CHECK:      func.return %[[ROWS]]
# CHECK-NOT:  Sequence
