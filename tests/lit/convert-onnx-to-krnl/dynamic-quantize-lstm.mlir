// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// DynamicQuantizeLSTM of int8 weights (zero point 0): W and R packed at compile time as
// krnl.qmatmul's B, with their column sums and scales. X is quantized to uint8 over its
// range (min and max, and 0), packed in row tiles and multiplied by W into int32 for every
// step at once; the sums less zero point * column sums, times x scale * w scale, are the
// projection. Per step the hidden state is quantized the same way and its product with R
// is added to the gate accumulator before the float gate math.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x1x3xf32>) -> tensor<2x1x1x2xf32> {
    %w = "onnx.Constant"() {value = dense<[[[1, -2, 3, 4, -5, 6, 7, 8], [0, 1, 2, 3, 4, 5, 6, 7], [-7, -6, -5, -4, -3, -2, -1, 0]]]> : tensor<1x3x8xi8>} : () -> tensor<1x3x8xi8>
    %r = "onnx.Constant"() {value = dense<[[[2, 0, -2, 1, 3, -1, 5, 4], [1, 1, 1, 1, -1, -1, -1, -1]]]> : tensor<1x2x8xi8>} : () -> tensor<1x2x8xi8>
    %scale = "onnx.Constant"() {value = dense<0.01> : tensor<1xf32>} : () -> tensor<1xf32>
    %zero = "onnx.Constant"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
    %y = "onnx.DynamicQuantizeLSTM"(%x, %w, %r, %scale, %zero, %scale, %zero) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>}> {direction = "forward", hidden_size = 2 : i64} : (tensor<2x1x3xf32>, tensor<1x3x8xi8>, tensor<1x2x8xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<2x1x1x2xf32>
    func.return %y : tensor<2x1x1x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[ACC:.+]] = memref.alloc() : memref<1x8xf32>
// CHECK-NEXT:    %[[W:.+]] = krnl.global {value = #onnx.weight<"dynamic_quantize_lstm_w_panels_0", tensor<1x1x64x4xi8>>}
// CHECK-NEXT:    %[[WSUMS:.+]] = krnl.global {value = #onnx.weight<"dynamic_quantize_lstm_w_sums", tensor<1x8xi32>>}
// CHECK-NEXT:    %[[WSCALES:.+]] = krnl.global {value = #onnx.weight<"dynamic_quantize_lstm_w_scales", tensor<1x8xf32>>}
// CHECK-NEXT:    %[[R:.+]] = krnl.global {value = #onnx.weight<"dynamic_quantize_lstm_r_panels_0", tensor<1x1x64x4xi8>>}
// CHECK-NEXT:    %[[RSUMS:.+]] = krnl.global {value = #onnx.weight<"dynamic_quantize_lstm_r_sums", tensor<1x8xi32>>}
// CHECK-NEXT:    %[[RSCALES:.+]] = krnl.global {value = #onnx.weight<"dynamic_quantize_lstm_r_scales", tensor<1x8xf32>>}
// CHECK-NEXT:    %[[NONE:.+]] = krnl.global {value = #onnx.weight<"dynamic_quantize_lstm_no_offsets", tensor<64xi32>>}
// CHECK-NEXT:    %[[XA:.+]] = memref.alloc() : memref<1x1x12x4xui8>
// CHECK-NEXT:    %[[XC:.+]] = memref.alloc() : memref<2x8xi32>
// CHECK-NEXT:    %[[HA:.+]] = memref.alloc() : memref<1x1x12x4xui8>
// CHECK-NEXT:    %[[HC:.+]] = memref.alloc() : memref<1x8xi32>
// CHECK:         arith.minimumf
// CHECK:         arith.maximumf
// CHECK:         %[[XSCALE:.+]] = arith.divf
// CHECK:         math.roundeven
// CHECK:         memref.store %{{.+}}, %[[XA]]
// CHECK:         krnl.qmatmul %[[XA]], %[[W]] into %[[XC]] offsets %[[NONE]] {sizes = [2 : i64, 8 : i64, 1 : i64], {{.*}} per_column, b_blocked}
// CHECK:           memref.load %[[WSUMS]]
// CHECK:           arith.subi
// CHECK:           %[[WSCALE:.+]] = memref.load %[[WSCALES]]
// CHECK-NEXT:      arith.mulf %[[XSCALE]], %[[WSCALE]] : f32
// CHECK:         scf.for
// CHECK:           arith.minimumf
// CHECK:           arith.maximumf
// CHECK:           memref.store %{{.+}}, %[[HA]]
// CHECK:         krnl.qmatmul %[[HA]], %[[R]] into %[[HC]] offsets %[[NONE]] {sizes = [1 : i64, 8 : i64, 1 : i64], {{.*}} per_column, b_blocked}
// CHECK:           memref.load %[[RSUMS]]
// CHECK:           memref.load %[[RSCALES]]
// CHECK:           %[[SUM:.+]] = memref.load %[[ACC]]
// CHECK-NEXT:      arith.addf %[[SUM]], %{{.+}} : f32
// CHECK:           math.exp
// CHECK:           math.tanh

// -----

// A sequence of run-time length: the input projection goes in chunks of 96 rows, then of
// 12, then single rows, each size a krnl.qmatmul of its own (their geometry is static).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<?x1x3xf32, ["seq", "", ""]>) -> tensor<1x1x2xf32> {
    %w = "onnx.Constant"() {value = dense<1> : tensor<1x3x8xi8>} : () -> tensor<1x3x8xi8>
    %r = "onnx.Constant"() {value = dense<-1> : tensor<1x2x8xi8>} : () -> tensor<1x2x8xi8>
    %scale = "onnx.Constant"() {value = dense<0.01> : tensor<1x8xf32>} : () -> tensor<1x8xf32>
    %zero = "onnx.Constant"() {value = dense<0> : tensor<1x8xi8>} : () -> tensor<1x8xi8>
    %h = "onnx.DynamicQuantizeLSTM"(%x, %w, %r, %scale, %zero, %scale, %zero) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 0, 1, 0>}> {hidden_size = 2 : i64} : (tensor<?x1x3xf32, ["seq", "", ""]>, tensor<1x3x8xi8>, tensor<1x2x8xi8>, tensor<1x8xf32>, tensor<1x8xi8>, tensor<1x8xf32>, tensor<1x8xi8>) -> tensor<1x1x2xf32>
    func.return %h : tensor<1x1x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     memref.alloc() : memref<8x1x12x4xui8>
// CHECK-DAG:     memref.alloc() : memref<96x8xi32>
// CHECK:         krnl.qmatmul {{.+}} {sizes = [96 : i64, 8 : i64, 1 : i64]
// CHECK:         krnl.qmatmul {{.+}} {sizes = [12 : i64, 8 : i64, 1 : i64]
// CHECK:         krnl.qmatmul {{.+}} {sizes = [1 : i64, 8 : i64, 1 : i64]
// CHECK:         scf.for
// CHECK:           krnl.qmatmul {{.+}} {sizes = [1 : i64, 8 : i64, 1 : i64]
