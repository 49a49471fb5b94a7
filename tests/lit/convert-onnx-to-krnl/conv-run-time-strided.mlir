// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A strided depthwise conv over a height and width known at run time only: its output rows'
// length decides at run time between reading x straight (rows of 20 or more, as for static
// sizes) and the channels in the lanes (depthwise_lanes.py: its 8 channels one block, its
// padded image and its sums in lanes buffers of run-time size). Read straight, the outputs split into runs along each axis:
// those whose windows reach the padding or past the image (each tap checked against the
// image's bounds, 0 where outside: clamped read, select) and the inside ones (every tap read
// unchecked, one fused multiply-add each); no buffer but the output. The runs' bounds are
// computed before the branch: its one op is the nest, which the thread pool can split.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x8x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x8x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<8x1x3x3xf32>} : () -> tensor<8x1x3x3xf32>
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 8 : i64, kernel_shape = [3 : i64, 3 : i64], strides = [2 : i64, 2 : i64], pads = [1 : i64, 1 : i64, 1 : i64, 1 : i64]} : (tensor<1x8x?x?xf32, ["", "", "h", "w"]>, tensor<8x1x3x3xf32>) -> tensor<1x8x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]>
    func.return %y : tensor<1x8x?x?xf32, ["", "", "(h - 1)//2 + 1", "(w - 1)//2 + 1"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x8x?x?xf32>, %y: memref<1x8x?x?xf32>) {
// CHECK:         %{{.+}} = memref.dim %y, %{{.+}} : memref<1x8x?x?xf32>
// CHECK-NEXT:    %[[OW:.+]] = memref.dim %y, %{{.+}} : memref<1x8x?x?xf32>
// CHECK:         %[[LONG:.+]] = arith.cmpi sge, %[[OW]], %{{.+}} : index
// CHECK:         %[[SHORT:.+]] = arith.xori %[[LONG]], %{{.+}} : i1
// CHECK:         scf.if %[[LONG]] {
// CHECK-NOT:       memref.alloc
// CHECK:           krnl.iterate({{.*}}) bounds [0, 0] to [1, 8] {
// CHECK:               %[[EDGE:.+]] = memref.load %x[{{.*}}] : memref<1x8x?x?xf32>
// CHECK-NEXT:          %{{.+}} = arith.andi
// CHECK-NEXT:          %{{.+}} = arith.select %{{.+}}, %[[EDGE]], %{{.+}} : f32
// CHECK:               memref.store %{{.+}}, %y[{{.*}}] : memref<1x8x?x?xf32>
// CHECK:         scf.if %[[SHORT]] {
// CHECK:           %[[PADDED:.+]] = memref.alloc(%{{.+}}) : memref<1x1x?xf32>
// CHECK:           %[[SUMS:.+]] = memref.alloc(%{{.+}}) : memref<1x1x?xf32>
// CHECK:           krnl.iterate({{.*}}) bounds [0, 0] to [1, 1] {
// CHECK:             memref.load %{{.+}}[{{.*}}] : memref<1x1x8x?x?xf32>
// CHECK:             memref.store %{{.+}}, %[[PADDED]]
// CHECK:             math.fma
// CHECK:             memref.store %{{.+}}, %[[SUMS]]
// CHECK:             memref.load %[[SUMS]]
// CHECK-NEXT:        memref.store
