// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// A depthwise 3x3 conv of 16 channels, stride 2, pads 1, 4x4 -> 2x2, then HardSwish
// (passes/onnx_to_krnl/depthwise_lanes.py): the weights packed at compile time as [block, tap,
// lane]; one nest over (block of 16 channels, image) that zeroes the padding of the block's
// 5x5 image in lanes (the top row; the left column of each image row), transposes x's pixels
// into it (the lane loop innermost), sums each output's 9 taps by fused multiply-adds, the two
// outputs of a row together, computes the HardSwish before the store, and transposes the
// outputs back into %y. No nest is left for the HardSwish.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x2x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<16x1x3x3xf32>} : () -> tensor<16x1x3x3xf32>
    %b = "onnx.Constant"() {value = dense<2.0> : tensor<16xf32>} : () -> tensor<16xf32>
    %c = "onnx.Conv"(%x, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {group = 16 : i64, pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x16x4x4xf32>, tensor<16x1x3x3xf32>, tensor<16xf32>) -> tensor<1x16x2x2xf32>
    %y = "onnx.HardSwish"(%c) : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
    func.return %y : tensor<1x16x2x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x16x4x4xf32>, %y: memref<1x16x2x2xf32>) {
// CHECK:         %[[W:.+]] = krnl.global {value = #onnx.weight<"depthwise lanes", tensor<1x9x16xf32>>} : memref<1x9x16xf32>
// CHECK-NEXT:    %[[BIAS:.+]] = krnl.global {value = #onnx.weight<"depthwise lanes bias", tensor<1x16xf32>>} : memref<1x16xf32>
// CHECK-NEXT:    %[[PADDED:.+]] = memref.alloc() : memref<1x1x400xf32>
// CHECK-NEXT:    %[[SUMS:.+]] = memref.alloc() : memref<1x1x64xf32>
// CHECK-NEXT:    %[[PLANES:.+]] = krnl.view %x[0 : i64] : memref<1x16x4x4xf32> to memref<1x1x16x4x4xf32>
// CHECK-NEXT:    %[[OUT:.+]] = krnl.view %y[0 : i64] : memref<1x16x2x2xf32> to memref<1x1x16x4xf32>
// CHECK:         krnl.iterate
// CHECK:           ^bb0(%[[BLOCK:.+]]: index, %[[N:.+]]: index):
// CHECK:             memref.store %{{.*}}, %[[PADDED]][%[[N]], %[[BLOCK]], %{{.*}}] : memref<1x1x400xf32>
// CHECK:             memref.store %{{.*}}, %[[PADDED]][%[[N]], %[[BLOCK]], %{{.*}}] : memref<1x1x400xf32>
// CHECK:             scf.for %[[ROW:.+]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:          scf.for %[[LANE:.+]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:            memref.load %[[PLANES]][%[[N]], %[[BLOCK]], %[[LANE]], %[[ROW]], %{{.*}}] : memref<1x1x16x4x4xf32>
// CHECK:             memref.load %[[BIAS]][%[[BLOCK]], %{{.*}}] : memref<1x16xf32>
// CHECK:             memref.load %[[W]][%[[BLOCK]], %{{.*}}, %{{.*}}] : memref<1x9x16xf32>
// CHECK-NEXT:        math.fma
// CHECK-NEXT:        math.fma
// CHECK-COUNT-8:     math.fma
// CHECK:             arith.minimumf
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        %[[SWISH:.+]] = arith.mulf
// CHECK:             memref.store %[[SWISH]], %[[SUMS]]
// CHECK:             memref.load %[[SUMS]]
// CHECK-NEXT:        memref.store %{{.*}}, %[[OUT]][%[[N]], %[[BLOCK]], %{{.*}}, %{{.*}}] : memref<1x1x16x4xf32>
// CHECK:           krnl.yield
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return

// -----

// The same conv, stride 1, over a height and width known at run time only: the lanes where the
// output rows are at most 32 long (decided at run time), else the shifted rows one row at a
// time (the short rows' other kernel is not made). In lanes, the buffers of run-time size (the
// begin padding's rows clipped to the buffer's: an image with no outputs has none; a fill of
// the whole padding wrote past it), the pixels of a row transposed 16 at a time then one at a
// time, the outputs summed 8 at a time then one at a time.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x16x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x16x?x?xf32, ["", "", "h", "w"]> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<16x1x3x3xf32>} : () -> tensor<16x1x3x3xf32>
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 16 : i64, pads = [1, 1, 1, 1]} : (tensor<1x16x?x?xf32, ["", "", "h", "w"]>, tensor<16x1x3x3xf32>) -> tensor<1x16x?x?xf32, ["", "", "h", "w"]>
    func.return %y : tensor<1x16x?x?xf32, ["", "", "h", "w"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x16x?x?xf32>, %y: memref<1x16x?x?xf32>) {
// CHECK-DAG:     %[[MAX_ROW:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[SIXTEEN:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK:         memref.dim %x, %{{.+}} : memref<1x16x?x?xf32>
// CHECK-NEXT:    %[[W:.+]] = memref.dim %x, %{{.+}} : memref<1x16x?x?xf32>
// CHECK:         %[[SHORT:.+]] = arith.cmpi sle, %[[W]], %[[MAX_ROW]] : index
// CHECK-NEXT:    %[[LONG:.+]] = arith.xori %[[SHORT]], %{{.+}} : i1
// CHECK:         scf.if %[[SHORT]] {
// CHECK-NEXT:      arith.subi
// CHECK-NEXT:      arith.addi
// CHECK-NEXT:      %[[ROWS:.+]] = arith.maxsi
// CHECK:           %[[PADDED:.+]] = memref.alloc(%{{.+}}) : memref<1x1x?xf32>
// CHECK:           %[[SUMS:.+]] = memref.alloc(%{{.+}}) : memref<1x1x?xf32>
// CHECK:           krnl.iterate({{.*}}) bounds [0, 0] to [1, 1] {
// CHECK:             %[[TOP:.+]] = arith.minsi %{{.+}}, %[[ROWS]] : index
// CHECK:             %[[TOP_END:.+]] = arith.muli %[[TOP]], %{{.+}} : index
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[TOP_END]] step
// CHECK-NEXT:          memref.store %{{.+}}, %[[PADDED]]
// CHECK:             arith.remsi %{{.+}}, %[[SIXTEEN]] : index
// CHECK-NEXT:        %[[WHOLE:.+]] = arith.subi
// CHECK:             scf.for
// CHECK-NEXT:          scf.for %{{.+}} = %{{.+}} to %{{.+}} step
// CHECK-NEXT:            scf.for %{{.+}} = %{{.+}} to %[[SIXTEEN]] step
// CHECK-COUNT-16:          memref.store %{{.+}}, %[[PADDED]]
// CHECK:             arith.remsi %[[W]], %[[EIGHT]] : index
// CHECK:             math.fma
// CHECK-COUNT-8:     memref.store %{{.+}}, %[[SUMS]]
// CHECK-COUNT-9:     math.fma
// CHECK-NOT:         math.fma
// CHECK:             memref.store %{{.+}}, %[[SUMS]]
// CHECK:         scf.if %[[LONG]] {
// CHECK:           memref.alloc(%{{.+}}) : memref<1x16x?xf32>
// CHECK-NOT:     scf.if
