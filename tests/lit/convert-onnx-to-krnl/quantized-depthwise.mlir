// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A depthwise QLinearConv: x in planes of bytes padded with its zero point (3), then one nest
// along each channel's padded rows (6 wide, narrower than a vector: all 22 columns at once, run
// over 32: the planes' slack), each tap a byte widened to float32 and a fused multiply-add with
// the weight (the weights and the bias less zx * sum(w) made float32 at compile time: its sums
// are exact), requantized per channel (round half to even, plus the y zero point, clamped,
// narrowed to bytes) into wide rows, whose real columns are then copied out.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8> {
    %xs = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %xz = "onnx.Constant"() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
    %w = "onnx.Constant"() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]]> : tensor<2x1x3x3xi8>} : () -> tensor<2x1x3x3xi8>
    %ws = "onnx.Constant"() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
    %wz = "onnx.Constant"() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
    %ys = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %yz = "onnx.Constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
    %b = "onnx.Constant"() {value = dense<[10, -20]> : tensor<2xi32>} : () -> tensor<2xi32>
    %y = "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1>}> {group = 2 : i64, pads = [1, 1, 1, 1]} : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x1x3x3xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
    func.return %y : tensor<1x2x4x4xui8>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[M:.+]] = krnl.global {value = #onnx.weight<"qlinearconv_multipliers", tensor<2xf32>>}
// CHECK:         %[[PAD:.+]] = builtin.unrealized_conversion_cast %{{.+}} : i8 to ui8
// CHECK-NEXT:    %[[W:.+]] = krnl.global {value = #onnx.weight<"qlinearconv_weights", tensor<2x9xf32>>}
// CHECK-NEXT:    %[[B:.+]] = krnl.global {value = #onnx.weight<"qlinearconv_bias", tensor<2xf32>>}
// CHECK-NEXT:    %[[PLANES:.+]] = memref.alloc() : memref<1x2x46xui8>
// CHECK:         krnl.iterate
// CHECK:           memref.store %[[PAD]], %[[PLANES]]
// CHECK:             %[[X:.+]] = memref.load %x
// CHECK:             memref.store %[[X]], %[[PLANES]]
// CHECK:         %[[WIDE:.+]] = memref.alloc() : memref<1x2x32xui8>
// CHECK:         krnl.iterate({{.+}}) bounds [0, 0, 0] to [2, 1, 32] {
// CHECK-NEXT:    ^bb0(%[[C:.+]]: index, %[[BAND:.+]]: index, %[[J:.+]]: index):
// CHECK:           %[[Q:.+]] = arith.addi %{{.+}}, %[[J]] : index
// CHECK-NEXT:      %[[BIAS:.+]] = memref.load %[[B]][%[[C]]]
// CHECK-NEXT:      %[[W0:.+]] = memref.load %[[W]][%[[C]], %{{.+}}] : memref<2x9xf32>
// CHECK-NEXT:      %[[BYTE0:.+]] = memref.load %[[PLANES]][%{{.+}}, %[[C]], %[[Q]]]
// CHECK-NEXT:      %[[SIGNLESS0:.+]] = builtin.unrealized_conversion_cast %[[BYTE0]] : ui8 to i8
// CHECK-NEXT:      %[[X0:.+]] = arith.uitofp %[[SIGNLESS0]] : i8 to f32
// CHECK-NEXT:      %{{.+}} = math.fma %[[X0]], %[[W0]], %[[BIAS]] : f32
// CHECK-COUNT-8:   math.fma
// CHECK:           %[[MUL:.+]] = memref.load %[[M]][%[[C]]]
// CHECK-NEXT:      %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[MUL]] : f32
// CHECK-NEXT:      %[[ROUNDED:.+]] = math.roundeven %[[SCALED]] : f32
// CHECK-NEXT:      %[[SHIFTED:.+]] = arith.addf %[[ROUNDED]], %{{.+}} : f32
// CHECK-NEXT:      %[[ABOVE:.+]] = arith.cmpf ogt, %[[SHIFTED]], %{{.+}} : f32
// CHECK-NEXT:      %[[LOW:.+]] = arith.select %[[ABOVE]], %[[SHIFTED]], %{{.+}} : f32
// CHECK-NEXT:      %[[BELOW:.+]] = arith.cmpf olt, %[[LOW]], %{{.+}} : f32
// CHECK-NEXT:      %[[HIGH:.+]] = arith.select %[[BELOW]], %[[LOW]], %{{.+}} : f32
// CHECK-NEXT:      %[[INT:.+]] = arith.fptosi %[[HIGH]] : f32 to i32
// CHECK-NEXT:      %[[OUT:.+]] = arith.trunci %[[INT]] : i32 to i8
// CHECK-NEXT:      %[[U:.+]] = builtin.unrealized_conversion_cast %[[OUT]] : i8 to ui8
// CHECK-NEXT:      memref.store %[[U]], %[[WIDE]][%{{.+}}, %[[C]], %[[Q]]]
// CHECK:         krnl.iterate
// CHECK:           %[[COLUMN:.+]] = memref.load %[[WIDE]]
// CHECK-NEXT:      memref.store %[[COLUMN]], %y
