// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// Cast: float -> signed int truncates (fptosi), float -> bool is "!= 0",
// bool -> float is 0 or 1 (uitofp), unsigned -> wider signed zero-extends.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%f: tensor<4xf32>, %p: tensor<4xi1>, %u: tensor<4xui8>) -> (tensor<4xi8>, tensor<4xi1>, tensor<4xf64>, tensor<4xi32>) {
    %i = "onnx.Cast"(%f) {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
    %b = "onnx.Cast"(%f) {to = 9 : i64} : (tensor<4xf32>) -> tensor<4xi1>
    %d = "onnx.Cast"(%p) {to = 11 : i64} : (tensor<4xi1>) -> tensor<4xf64>
    %w = "onnx.Cast"(%u) {to = 6 : i64} : (tensor<4xui8>) -> tensor<4xi32>
    func.return %i, %b, %d, %w : tensor<4xi8>, tensor<4xi1>, tensor<4xf64>, tensor<4xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:           %[[F:.+]] = memref.load %f
// CHECK-NEXT:      %[[I:.+]] = arith.fptosi %[[F]] : f32 to i8
// CHECK-NEXT:      memref.store %[[I]], %i
// CHECK:           %[[F:.+]] = memref.load %f
// CHECK-NEXT:      %[[B:.+]] = arith.cmpf une, %[[F]], %{{.+}} : f32
// CHECK-NEXT:      memref.store %[[B]], %b
// CHECK:           %[[P:.+]] = memref.load %p
// CHECK-NEXT:      %[[D:.+]] = arith.uitofp %[[P]] : i1 to f64
// CHECK-NEXT:      memref.store %[[D]], %d
// CHECK:           %[[U:.+]] = memref.load %u
// CHECK-NEXT:      %[[S:.+]] = builtin.unrealized_conversion_cast %[[U]] : ui8 to i8
// CHECK-NEXT:      %[[W:.+]] = arith.extui %[[S]] : i8 to i32
// CHECK-NEXT:      memref.store %[[W]], %w
