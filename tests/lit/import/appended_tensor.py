# RUN: onnxc %S/../../models/cf_decoder.onnx --emit onnx-basic -o - | filecheck %s

# A scripted greedy decoder (tests/models/export_control_flow.py): `tokens =
# torch.cat([tokens, token])` in a `for` with a `break`, exported as a Loop of
# trip count INT64_MAX whose carried `tokens` grows by a Concat each iteration.
# The body yields `tokens` unchanged instead and the appended token as a scan
# output, which continues carried value 0 (onnx.appended_to); the graph
# returns that scan output.
# CHECK:      %[[TOKEN:.+]]: tensor<1xi64>
# CHECK:      %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[TOKENS:.+]] = "onnx.Loop"(%{{.+}}, %{{.+}}, %[[TOKEN]], %{{.+}}, %[[TOKEN]], %{{.+}})
# CHECK-NEXT: ^bb0(%{{.+}}: tensor<i64> loc(unknown), %{{.+}}: tensor<i1> loc(unknown), %[[CARRIED:[0-9]+]]: tensor<1xi64> loc(unknown),
# CHECK:        %[[NEXT:.+]] = "onnx.ArgMax"
# CHECK-NOT:    "onnx.Concat"(%[[CARRIED]]
# CHECK:        onnx.yield %{{.+}}, %[[CARRIED]], %{{.+}}, %[[NEXT]], %{{.+}}, %[[NEXT]]
# CHECK:      {onnx.appended_to = [0 : i64]}
# CHECK:      func.return %[[TOKENS]]
