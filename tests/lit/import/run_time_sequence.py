# RUN: %python %S/../inputs/make_model.py run_time_sequence %t.onnx
# RUN: onnxc %t.onnx --emit onnx-basic -o - | filecheck %s
# RUN: onnxc %t.onnx --emit krnl -o - | filecheck %s --check-prefix=ENTRY

# SplitToSequence along run-time dim M: a sequence of run-time length is the
# tensor it slices (frontend/sequence_values.py). SequenceLength reads M from
# its shape, SequenceAt at a run-time position is a Gather along the sliced
# axis, stacking the items along axis 0 a Transpose, and the sequence as a
# graph output is the tensor, with [axis, keepdims, size] for the signature.
# CHECK:      func.func @main_graph(%[[X:.+]]: tensor<2x?xf32, ["", "M"]> loc(unknown), %[[P:.+]]: tensor<i64> loc(unknown))
# CHECK-SAME: onnx.output_names = ["n", "item", "stacked", "s"], onnx.output_sequence_axes = [[], [], [], [1 : i64, 0 : i64, 1 : i64]]
# CHECK:      %[[SHAPE:.+]] = "onnx.Shape"(%[[X]])
# CHECK:      %[[N:.+]] = "onnx.Gather"(%[[SHAPE]], %{{.+}})
# CHECK:      %[[ITEM:.+]] = "onnx.Gather"(%[[X]], %[[P]]) {axis = 1 : i64}
# CHECK:      %[[STACKED:.+]] = "onnx.Transpose"(%[[X]]) {perm = [1 : i64, 0 : i64]}
# CHECK:      func.return %[[N]], %[[ITEM]], %[[STACKED]], %[[X]]
# CHECK-NOT:  Sequence

# ENTRY: krnl.entry_point {{.*}}output_names = ["n", "item", "stacked", "s"]{{.*}}sequence_axes = [[], [], [], [1 : i64, 0 : i64, 1 : i64]]
