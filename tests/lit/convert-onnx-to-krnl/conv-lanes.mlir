// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// A 3x3 conv of 32 channels, stride 1, pads 1, over a 7x7 image: its shifted rows would compute
// 6*9 + 7 = 61 columns for 49 pixels, so the product is transposed instead
// (passes/onnx_to_krnl/conv_lanes.py): M = 49 pixels, each a row of the zero-padded 9x9 image
// read in place (`a_layout window`), N = 16 output channels, in the vector lanes, from the
// weights transposed into compile-time column panels [ceil(16/16), 32*3*3, 16]; C is %y itself,
// stored transposed (`transposed_c`: C[m, n] at n*49 + m), with the bias per channel and the
// Relu's clamp. No nest is left after.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x32x7x7xf32>) -> tensor<1x16x7x7xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<16x32x3x3xf32>} : () -> tensor<16x32x3x3xf32>
    %b = "onnx.Constant"() {value = dense<2.0> : tensor<16xf32>} : () -> tensor<16xf32>
    %c = "onnx.Conv"(%x, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {pads = [1, 1, 1, 1]} : (tensor<1x32x7x7xf32>, tensor<16x32x3x3xf32>, tensor<16xf32>) -> tensor<1x16x7x7xf32>
    %y = "onnx.Relu"(%c) : (tensor<1x16x7x7xf32>) -> tensor<1x16x7x7xf32>
    func.return %y : tensor<1x16x7x7xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x32x7x7xf32>, %y: memref<1x16x7x7xf32>) {
// CHECK:         %[[B:.+]] = krnl.global {value = #onnx.weight<"{{.*}}lanes", tensor<1x288x16xf32>>} : memref<1x288x16xf32>
// CHECK-NEXT:    %[[BIAS:.+]] = krnl.global {value = #onnx.weight<"{{.*}}bias", tensor<16xf32>>} : memref<16xf32>
// CHECK-NEXT:    %[[PADDED:.+]] = memref.alloc() : memref<1x32x81xf32>
// CHECK:         krnl.iterate
// CHECK:           memref.store %{{.*}}, %[[PADDED]]
// CHECK:         krnl.matmul %[[PADDED]], %[[B]] into %y bias %[[BIAS]]
// CHECK-SAME:      sizes = [49 : i64, 16 : i64, 288 : i64]
// CHECK-SAME:      a_layout = #krnl<a_layout window>
// CHECK-SAME:      b_access = #krnl<b_access panels>
// CHECK-SAME:      conv = #krnl.conv<channels = 32, height = 9, width = 9, output = [7, 7], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [0, 0]>, ldc = 49 : i64
// CHECK-SAME:      transposed_c
// CHECK-SAME:      clip = [0.000000e+00 : f64, 0x7ff0000000000000 : f64]} :
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return

// -----

// Stride 2, 32 -> 16 channels, 14x14 to 7x7: the same product over the image padded to 16x16
// (one plane per channel, no phase planes), its pixels read at the conv's stride (the geometry's
// `stride`), where the other path would pack im2col block by block.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x32x14x14xf32>) -> tensor<1x16x7x7xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<16x32x3x3xf32>} : () -> tensor<16x32x3x3xf32>
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x32x14x14xf32>, tensor<16x32x3x3xf32>) -> tensor<1x16x7x7xf32>
    func.return %y : tensor<1x16x7x7xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x32x14x14xf32>, %y: memref<1x16x7x7xf32>) {
// CHECK:         %[[B:.+]] = krnl.global {value = #onnx.weight<"{{.*}}lanes", tensor<1x288x16xf32>>} : memref<1x288x16xf32>
// CHECK-NEXT:    %[[BIAS:.+]] = krnl.global {value = #onnx.weight<"{{.*}}bias", tensor<16xf32>>} : memref<16xf32>
// CHECK-NEXT:    %[[PADDED:.+]] = memref.alloc() : memref<1x32x256xf32>
// CHECK:         krnl.matmul %[[PADDED]], %[[B]] into %y bias %[[BIAS]]
// CHECK-SAME:      sizes = [49 : i64, 16 : i64, 288 : i64]
// CHECK-SAME:      a_layout = #krnl<a_layout window>
// CHECK-SAME:      conv = #krnl.conv<channels = 32, height = 16, width = 16, output = [7, 7], kernel = [3, 3], stride = [2, 2], dilation = [1, 1], padding = [0, 0]>, ldc = 49 : i64
// CHECK-SAME:      transposed_c
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return
