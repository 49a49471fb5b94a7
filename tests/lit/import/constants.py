# RUN: %python %S/../inputs/make_model.py constants %t.onnx
# RUN: onnxc %t.onnx --emit onnx-basic -o - | filecheck %s

# Constant nodes of every attribute form become weight handles of the right dtype;
# an initializer also listed as a graph input is a constant, not a function argument;
# an empty optional input is an absent operand (segment size 0).
# CHECK: func.func @main_graph(%[[X:.*]]: tensor<2xf32>{{.*}}) -> tensor<2xf32>
# CHECK: #onnx.weight<"hi", tensor<f32>>
# CHECK: #onnx.weight<"c_float", tensor<f32>>
# CHECK: #onnx.weight<"c_ints", tensor<2xi64>>
# CHECK: #onnx.weight<"c_half", tensor<2xf16>>
# CHECK: "onnx.Clip"(%{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 0, 1>}>
