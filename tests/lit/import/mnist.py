# RUN: %python %S/../inputs/make_model.py mnist %t.onnx
# RUN: onnxc %t.onnx --emit onnx-basic -o - | filecheck %s

# Initializers become onnx.Constant ops holding weight handles, never data;
# node names become locations; results the model says nothing about stay unranked.
# CHECK: builtin.module attributes {onnx.opset = 13 : i64, onnx.weights = #onnx.weights<"7 arrays, {{[0-9]+}} bytes">}
# CHECK: func.func @main_graph(%{{.*}}: tensor<1x1x28x28xf32>{{.*}}) -> tensor<1x10xf32>
# CHECK-SAME: onnx.input_names = ["input"], onnx.output_names = ["logits"]
# CHECK: "onnx.Constant"() {value = #onnx.weight<"conv1.weight", tensor<8x1x5x5xf32>>} : () -> tensor<8x1x5x5xf32> loc("conv1.weight")
# CHECK: "onnx.Conv"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {auto_pad = "SAME_UPPER", kernel_shape = [5 : i64, 5 : i64]} : (tensor<1x1x28x28xf32>, tensor<8x1x5x5xf32>, tensor<8xf32>) -> tensor<*xnone> loc("conv1")
# CHECK: "onnx.MaxPool"(%{{.*}}) <{resultSegmentSizes = array<i32: 1, 0>}>
# CHECK: "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<*xnone>, tensor<1x10xf32>) -> tensor<1x10xf32> loc("fc.add")
# CHECK: func.return
