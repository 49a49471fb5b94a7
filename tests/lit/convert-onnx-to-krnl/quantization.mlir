// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// QuantizeLinear per axis (axis 1 by default): x / scale[j] in f32, then in f64
// rounded half to even, plus the zero point, clamped to [-128, 127] (NaN to
// the low end: `ogt` is false for it), truncated to i8.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<3xi8>) -> tensor<2x3xi8> {
    %y = "onnx.QuantizeLinear"(%x, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
    func.return %y : tensor<2x3xi8>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[LOW:.+]] = arith.constant -1.280000e+02 : f64
// CHECK-DAG:     %[[HIGH:.+]] = arith.constant 1.270000e+02 : f64
// CHECK:         krnl.iterate
// CHECK-NEXT:    ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %x[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:      %[[S:.+]] = memref.load %s[%[[J]]] : memref<3xf32>
// CHECK-NEXT:      %[[Q:.+]] = arith.divf %[[X]], %[[S]] : f32
// CHECK-NEXT:      %[[Z:.+]] = memref.load %z[%[[J]]] : memref<3xi8>
// CHECK-NEXT:      %[[WIDE:.+]] = arith.extf %[[Q]] : f32 to f64
// CHECK-NEXT:      %[[R:.+]] = math.roundeven %[[WIDE]] : f64
// CHECK-NEXT:      %[[ZF:.+]] = arith.sitofp %[[Z]] : i8 to f64
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[R]], %[[ZF]] : f64
// CHECK-NEXT:      %[[GT:.+]] = arith.cmpf ogt, %[[SUM]], %[[LOW]] : f64
// CHECK-NEXT:      %[[UP:.+]] = arith.select %[[GT]], %[[SUM]], %[[LOW]] : f64
// CHECK-NEXT:      %[[LT:.+]] = arith.cmpf olt, %[[UP]], %[[HIGH]] : f64
// CHECK-NEXT:      %[[C:.+]] = arith.select %[[LT]], %[[UP]], %[[HIGH]] : f64
// CHECK-NEXT:      %[[I32:.+]] = arith.fptosi %[[C]] : f64 to i32
// CHECK-NEXT:      %[[I8:.+]] = arith.trunci %[[I32]] : i32 to i8
// CHECK-NEXT:      memref.store %[[I8]], %y[%[[I]], %[[J]]] : memref<2x3xi8>

// -----

// DequantizeLinear in blocks of 2 along axis 1: the parameters are read at
// column j / 2; (x - zero point) in f32, times the f16 scale widened, rounded
// once to f16.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<2x4xui8>, %s: tensor<2x2xf16>, %z: tensor<2x2xui8>) -> tensor<2x4xf16> {
    %y = "onnx.DequantizeLinear"(%x, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x4xui8>, tensor<2x2xf16>, tensor<2x2xui8>) -> tensor<2x4xf16>
    func.return %y : tensor<2x4xf16>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK:           %[[XF:.+]] = arith.uitofp %{{.+}} : i8 to f32
// CHECK-NEXT:      %[[BLOCK:.+]] = arith.divsi %[[J]], %{{.+}} : index
// CHECK-NEXT:      %[[Z:.+]] = memref.load %z[%[[I]], %[[BLOCK]]] : memref<2x2xui8>
// CHECK:           %[[ZF:.+]] = arith.uitofp %{{.+}} : i8 to f32
// CHECK-NEXT:      %[[D:.+]] = arith.subf %[[XF]], %[[ZF]] : f32
// CHECK:           %[[S:.+]] = memref.load %s[%[[I]], %{{.+}}] : memref<2x2xf16>
// CHECK-NEXT:      %[[SF:.+]] = arith.extf %[[S]] : f16 to f32
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[D]], %[[SF]] : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT:      memref.store %[[Y]], %y[%[[I]], %[[J]]] : memref<2x4xf16>

// -----

// MatMulInteger with a zero point per row of A and per column of B: A less its
// zero points in an int16 copy (8-bit differences fit), constant B less its
// zero points made at compile time (a weight); then the MatMul nest widening
// both to int32 and accumulating into %y.
builtin.module attributes {onnx.opset = 10 : i64} {
  func.func @main_graph(%a: tensor<4x3xui8>, %za: tensor<4xui8>) -> tensor<4x2xi32> {
    %b = "onnx.Constant"() {value = dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi8>} : () -> tensor<3x2xi8>
    %zb = "onnx.Constant"() {value = dense<[1, -2]> : tensor<2xi8>} : () -> tensor<2xi8>
    %y = "onnx.MatMulInteger"(%a, %b, %za, %zb) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (tensor<4x3xui8>, tensor<3x2xi8>, tensor<4xui8>, tensor<2xi8>) -> tensor<4x2xi32> loc("mmi")
    func.return %y : tensor<4x2xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4x3xi16>
// CHECK:         ^bb0(%[[I:.+]]: index, %[[K:.+]]: index):
// CHECK:           %[[ZA:.+]] = memref.load %za[%[[I]]] : memref<4xui8>
// CHECK:           %[[D:.+]] = arith.subi %{{.+}}, %{{.+}} : i32
// CHECK-NEXT:      %[[D16:.+]] = arith.trunci %[[D]] : i32 to i16
// CHECK-NEXT:      memref.store %[[D16]], %[[A]][%[[I]], %[[K]]] : memref<4x3xi16>
// CHECK:         %[[B:.+]] = krnl.global {value = #onnx.weight<"mmi_1_less_zero_point", tensor<3x2xi16>>} : memref<3x2xi16>
// CHECK:         krnl.iterate
// CHECK:         krnl.iterate
// CHECK:           %[[L:.+]] = memref.load %[[A]][%{{.+}}, %{{.+}}] : memref<4x3xi16>
// CHECK-NEXT:      %[[L32:.+]] = arith.extsi %[[L]] : i16 to i32
// CHECK-NEXT:      %[[R:.+]] = memref.load %[[B]][%{{.+}}, %{{.+}}] : memref<3x2xi16>
// CHECK-NEXT:      %[[R32:.+]] = arith.extsi %[[R]] : i16 to i32
// CHECK-NEXT:      %[[P:.+]] = arith.muli %[[L32]], %[[R32]] : i32
// CHECK-NEXT:      %[[ACC:.+]] = memref.load %y
// CHECK-NEXT:      arith.addi %[[ACC]], %[[P]] : i32

// -----

// QLinearConv: the int32 sums of a direct convolution of the operands less
// their zero points (the weights' per output channel) go to a scratch buffer,
// then are requantized:
// sum * (x_scale * w_scale[m] / y_scale) + y_zero_point in f64, rounded half to
// even and clamped to [0, 255].
builtin.module attributes {onnx.opset = 10 : i64} {
  func.func @main_graph(%x: tensor<1x1x3x3xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %w: tensor<2x1x1x1xui8>, %ws: tensor<2xf32>, %wz: tensor<2xui8>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<1x2x3x3xui8> {
    %y = "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0>}> : (tensor<1x1x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<2x1x1x1xui8>, tensor<2xf32>, tensor<2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x3xui8>
    func.return %y : tensor<1x2x3x3xui8>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[X:.+]] = memref.alloc() : memref<1x1x3x3xi16>
// CHECK:           memref.load %xz[] : memref<ui8>
// CHECK:         %[[W:.+]] = memref.alloc() : memref<2x1x1x1xi16>
// CHECK:         ^bb0(%[[M:.+]]: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index):
// CHECK:           memref.load %wz[%[[M]]] : memref<2xui8>
// CHECK:         %[[SUMS:.+]] = memref.alloc() : memref<1x2x3x3xi32>
// CHECK:         scf.for
// CHECK:           memref.load %[[W]]
// CHECK:           memref.load %[[X]]
// CHECK-NEXT:      arith.extsi %{{.+}} : i16 to i32
// CHECK-NEXT:      memref.load %[[SUMS]]
// CHECK-NEXT:      arith.muli
// CHECK:           memref.store %{{.+}}, %[[SUMS]]
// CHECK:         ^bb0(%{{.+}}: index, %[[M:.+]]: index, %{{.+}}: index, %{{.+}}: index):
// CHECK-NEXT:      %[[XS:.+]] = memref.load %xs[] : memref<f32>
// CHECK-NEXT:      %[[WS:.+]] = memref.load %ws[%[[M]]] : memref<2xf32>
// CHECK-NEXT:      %[[PRODUCT:.+]] = arith.mulf %[[XS]], %[[WS]] : f32
// CHECK-NEXT:      %[[YS:.+]] = memref.load %ys[] : memref<f32>
// CHECK-NEXT:      %[[MULTIPLIER:.+]] = arith.divf %[[PRODUCT]], %[[YS]] : f32
// CHECK-NEXT:      %[[SUM:.+]] = memref.load %[[SUMS]]
// CHECK-NEXT:      %[[SUMF:.+]] = arith.sitofp %[[SUM]] : i32 to f64
// CHECK-NEXT:      %[[MF:.+]] = arith.extf %[[MULTIPLIER]] : f32 to f64
// CHECK-NEXT:      %[[V:.+]] = arith.mulf %[[SUMF]], %[[MF]] : f64
// CHECK-NEXT:      %[[YZ:.+]] = memref.load %yz[] : memref<ui8>
// CHECK:           %[[Z:.+]] = arith.uitofp %{{.+}} : i8 to f64
// CHECK-NEXT:      %[[VZ:.+]] = arith.addf %[[V]], %[[Z]] : f64
// CHECK-NEXT:      math.roundeven %[[VZ]] : f64
// CHECK:           arith.fptosi %{{.+}} : f64 to i32
