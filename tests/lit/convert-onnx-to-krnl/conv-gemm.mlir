// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Conv with constant weights, then BatchNormalization with constant statistics,
// then Relu: one krnl.matmul. The weights (BN scale folded in) are packed at
// compile time into 12-row panels [ceil(4/12), 3*3*3, 12]; the bias (BN shift
// folded in) is a compile-time weight too; the Relu is the clamp [0, inf] of
// the kernel's store. No nest is left for BN or Relu. Stride 1: the kernel
// reads the zero-padded image (10x10: one nest zeroes its border and copies x in) in place
// (`b_access window`, a `conv` geometry of stride 1 and no padding left to
// do), computing rows of its width: N = 7*10 + 8 = 78 columns, of
// which a last nest keeps the first 8 of each row in %y.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
    %b = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %s = "onnx.Constant"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
    %mean = "onnx.Constant"() {value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
    %var = "onnx.Constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
    %c = "onnx.Conv"(%x, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    %n = "onnx.BatchNormalization"(%c, %s, %b, %mean, %var) <{resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    %y = "onnx.Relu"(%n) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    func.return %y : tensor<1x4x8x8xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x3x8x8xf32>, %y: memref<1x4x8x8xf32>) {
// CHECK:         %[[A:.+]] = krnl.global {value = #onnx.weight<"{{.*}}panels", tensor<1x27x12xf32>>} : memref<1x27x12xf32>
// CHECK-NEXT:    %[[BIAS:.+]] = krnl.global {value = #onnx.weight<"{{.*}}bias", tensor<4xf32>>} : memref<4xf32>
// CHECK-NEXT:    %[[PADDED:.+]] = memref.alloc() : memref<1x3x100xf32>
// CHECK:         krnl.iterate
// CHECK:           memref.store %{{.*}}, %[[PADDED]]
// CHECK-NOT:     krnl.iterate
// CHECK:           %[[X:.+]] = memref.load %x
// CHECK:           memref.store %[[X]], %[[PADDED]]
// CHECK:         %[[WIDE:.+]] = memref.alloc() : memref<1x4x78xf32>
// CHECK-NEXT:    krnl.matmul %[[A]], %[[PADDED]] into %[[WIDE]] bias %[[BIAS]]
// CHECK-SAME:      sizes = [4 : i64, 78 : i64, 27 : i64], tile = [12 : i64, 27 : i64, 512 : i64], a_layout = #krnl<a_layout panels>
// CHECK-SAME:      b_access = #krnl<b_access window>
// CHECK-SAME:      conv = #krnl.conv<channels = 3, height = 10, width = 10, output = [8, 8], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [0, 0]>, ldc = 78 : i64
// CHECK-SAME:      clip = [0.000000e+00 : f64, 0x7ff0000000000000 : f64]} :
// CHECK:         krnl.iterate
// CHECK:           %[[KEPT:.+]] = memref.load %[[WIDE]]
// CHECK-NEXT:      memref.store %[[KEPT]], %y
// CHECK-NOT:     arith.maximumf
// CHECK:         func.return

// -----

// 1x1, stride 1, no padding: B is the image itself as a [C, H*W] matrix
// (`b_access rows`, ldb = H*W, no geometry), packed block by block at run time
// (`pack`). A
// following Clip with constant bounds is the kernel's clamp; no bias input
// means a zero bias.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4x5xf32>) -> tensor<2x2x4x5xf32> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x3x1x1xf32>} : () -> tensor<2x3x1x1xf32>
    %lo = "onnx.Constant"() {value = dense<-1.0> : tensor<f32>} : () -> tensor<f32>
    %hi = "onnx.Constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<2x3x4x5xf32>, tensor<2x3x1x1xf32>) -> tensor<2x2x4x5xf32>
    %y = "onnx.Clip"(%c, %lo, %hi) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2x2x4x5xf32>, tensor<f32>, tensor<f32>) -> tensor<2x2x4x5xf32>
    func.return %y : tensor<2x2x4x5xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.matmul
// CHECK-SAME:      sizes = [2 : i64, 20 : i64, 3 : i64]
// CHECK-SAME:      b_access = #krnl<b_access rows>, ldb = 20 : i64, ldc = 20 : i64
// CHECK-SAME:      batch = [0 : i64, 0 : i64, 0 : i64, 0 : i64, 60 : i64, 40 : i64]
// CHECK-SAME:      clip = [-1.000000e+00 : f64, 6.000000e+00 : f64], pack} :
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return

// -----

// A Conv whose result has a second user keeps its Relu separate.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x3x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x3x1x1xf32>} : () -> tensor<2x3x1x1xf32>
    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
    %y = "onnx.Relu"(%c) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    func.return %c, %y : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.matmul
// CHECK-SAME:      clip = [0xfff0000000000000 : f64, 0x7ff0000000000000 : f64]
// CHECK:         krnl.iterate
// CHECK:           arith.maximumf

// -----

// group = 2 with 8 output channels per group: one krnl.matmul of two products,
// the groups' panels one after the other (A offset 18*12 = 216 floats) and their
// biases too (bias offset 8), each reading its group's input channels of the
// padded image (B offset 2*8*8 = 128 floats) and writing its output channels
// (C offset 8 rows of 5*8 + 6 = 46 columns = 368).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x4x6x6xf32>) -> tensor<1x16x6x6xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<16x2x3x3xf32>} : () -> tensor<16x2x3x3xf32>
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {pads = [1, 1, 1, 1], group = 2} : (tensor<1x4x6x6xf32>, tensor<16x2x3x3xf32>) -> tensor<1x16x6x6xf32>
    func.return %y : tensor<1x16x6x6xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x4x6x6xf32>, %y: memref<1x16x6x6xf32>) {
// CHECK:         %[[A:.+]] = krnl.global {value = #onnx.weight<"{{.*}}panels", tensor<2x18x12xf32>>}
// CHECK-NEXT:    %[[B:.+]] = krnl.global {value = #onnx.weight<"{{.*}}bias", tensor<16xf32>>}
// CHECK:         krnl.matmul %[[A]], %[[PADDED:.+]] into %[[WIDE:.+]] bias %[[B]]
// CHECK-SAME:      sizes = [8 : i64, 46 : i64, 18 : i64]
// CHECK-SAME:      conv = #krnl.conv<channels = 2, height = 8, width = 8, output = [6, 6], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [0, 0]>
// CHECK-SAME:      batch = [0 : i64, 0 : i64, 0 : i64, 216 : i64, 128 : i64, 368 : i64], bias_offsets = [0 : i64, 8 : i64]
// CHECK-NOT:     krnl.matmul
// CHECK:         func.return

// -----

// Stride 2: no window access; B is the im2col matrix of the image itself,
// packed at run time, its geometry named (padding 1 before the first row
// and column): N = 3*3 output positions, K = 2*3*3.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x5x5xf32>) -> tensor<1x4x3x3xf32> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<4x2x3x3xf32>} : () -> tensor<4x2x3x3xf32>
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
    func.return %y : tensor<1x4x3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x5x5xf32>, %y: memref<1x4x3x3xf32>) {
// CHECK:         krnl.matmul %{{.+}}, %x into %y bias %{{.+}} {sizes = [4 : i64, 9 : i64, 18 : i64]
// CHECK-SAME:      b_access = #krnl<b_access im2col>, ldb = 0 : i64
// CHECK-SAME:      conv = #krnl.conv<channels = 2, height = 5, width = 5, output = [3, 3], kernel = [3, 3], stride = [2, 2], dilation = [1, 1], padding = [1, 1]>
// CHECK-SAME:      pack} :
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return

// -----

// A 1x1 conv, then SiLU as torch exports it (x * Sigmoid(x)), then a Clip: the
// kernel's store computes both (`activation silu`, then the clamp); neither the
// Sigmoid, the Mul nor the Clip leaves a nest. B is the image itself [C, H*W].
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<16x8x1x1xf32>} : () -> tensor<16x8x1x1xf32>
    %lo = "onnx.Constant"() {value = dense<-1.0> : tensor<f32>} : () -> tensor<f32>
    %hi = "onnx.Constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
    %s = "onnx.Sigmoid"(%c) : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
    %m = "onnx.Mul"(%c, %s) : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
    %y = "onnx.Clip"(%m, %lo, %hi) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x16x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x16x4x4xf32>
    func.return %y : tensor<1x16x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x8x4x4xf32>, %y: memref<1x16x4x4xf32>) {
// CHECK:         krnl.matmul %{{.+}}, %x into %y bias %{{.+}} {sizes = [16 : i64, 16 : i64, 8 : i64]
// CHECK-SAME:      b_access = #krnl<b_access rows>, ldb = 16 : i64
// CHECK-SAME:      activation = #krnl<activation silu>, clip = [-1.000000e+00 : f64, 6.000000e+00 : f64]
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return

// -----

// HardSwish after a conv: `activation hard_swish` in the kernel's store, no nest.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<16x8x1x1xf32>} : () -> tensor<16x8x1x1xf32>
    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
    %y = "onnx.HardSwish"(%c) : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
    func.return %y : tensor<1x16x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x8x4x4xf32>, %y: memref<1x16x4x4xf32>) {
// CHECK:         krnl.matmul %{{.+}}, %x into %y bias %{{.+}} {sizes = [16 : i64, 16 : i64, 8 : i64]
// CHECK-SAME:      activation = #krnl<activation hard_swish>, clip = [0xfff0000000000000 : f64, 0x7ff0000000000000 : f64]
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return
