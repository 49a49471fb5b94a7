// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// QuantizeLinear per axis (axis 1 by default): x / scale[j] in f32, then (in f32:
// exact for an 8-bit target) rounded half to even, plus the zero point, clamped to [-128, 127] (NaN to
// the low end: `ogt` is false for it), truncated to i8.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<3xi8>) -> tensor<2x3xi8> {
    %y = "onnx.QuantizeLinear"(%x, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
    func.return %y : tensor<2x3xi8>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[LOW:.+]] = arith.constant -1.280000e+02 : f32
// CHECK-DAG:     %[[HIGH:.+]] = arith.constant 1.270000e+02 : f32
// CHECK:         krnl.iterate
// CHECK-NEXT:    ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %x[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:      %[[S:.+]] = memref.load %s[%[[J]]] : memref<3xf32>
// CHECK-NEXT:      %[[Z:.+]] = memref.load %z[%[[J]]] : memref<3xi8>
// CHECK-NEXT:      %[[Q:.+]] = arith.divf %[[X]], %[[S]] : f32
// CHECK-NEXT:      %[[R:.+]] = math.roundeven %[[Q]] : f32
// CHECK-NEXT:      %[[ZF:.+]] = arith.sitofp %[[Z]] : i8 to f32
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[R]], %[[ZF]] : f32
// CHECK-NEXT:      %[[GT:.+]] = arith.cmpf ogt, %[[SUM]], %[[LOW]] : f32
// CHECK-NEXT:      %[[UP:.+]] = arith.select %[[GT]], %[[SUM]], %[[LOW]] : f32
// CHECK-NEXT:      %[[LT:.+]] = arith.cmpf olt, %[[UP]], %[[HIGH]] : f32
// CHECK-NEXT:      %[[C:.+]] = arith.select %[[LT]], %[[UP]], %[[HIGH]] : f32
// CHECK-NEXT:      %[[I32:.+]] = arith.fptosi %[[C]] : f32 to i32
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

// (Blocked parameters are first expanded to x's shape, each by a nest of its own; the
// element-wise nest of DequantizeLinear, fusable with its neighbours, reads them.)
// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[SCALES:.+]] = memref.alloc() : memref<2x4xf16>
// CHECK:         ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:      %[[SBLOCK:.+]] = arith.divsi %[[J]], %{{.+}} : index
// CHECK-NEXT:      %[[S:.+]] = memref.load %s[%[[I]], %[[SBLOCK]]] : memref<2x2xf16>
// CHECK-NEXT:      memref.store %[[S]], %[[SCALES]][%[[I]], %[[J]]] : memref<2x4xf16>
// CHECK:         %[[ZEROS:.+]] = memref.alloc() : memref<2x4xui8>
// CHECK:         ^bb0(%[[I2:.+]]: index, %[[J2:.+]]: index):
// CHECK-NEXT:      %[[BLOCK:.+]] = arith.divsi %[[J2]], %{{.+}} : index
// CHECK-NEXT:      %[[Z:.+]] = memref.load %z[%[[I2]], %[[BLOCK]]] : memref<2x2xui8>
// CHECK-NEXT:      memref.store %[[Z]], %[[ZEROS]][%[[I2]], %[[J2]]] : memref<2x4xui8>
// CHECK:         krnl.iterate
// CHECK:           %[[XF:.+]] = arith.uitofp %{{.+}} : i8 to f32
// CHECK:           %[[ZF:.+]] = arith.uitofp %{{.+}} : i8 to f32
// CHECK-NEXT:      %[[D:.+]] = arith.subf %[[XF]], %[[ZF]] : f32
// CHECK-NEXT:      %[[SF:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[D]], %[[SF]] : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT:      memref.store %[[Y]], %{{.+}} : memref<8xf16>

// -----

// MatMulInteger with a zero point per row of A and per column of B: A less its
// zero points in an int16 copy (8-bit differences fit); constant B less its
// zero points, transposed, made at compile time (a weight). Each output is a
// dot product along rows of both (contiguous: LLVM vectorizes the reduction),
// widened to int32.
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
// CHECK:         %[[BT:.+]] = krnl.global {value = #onnx.weight<"mmi_1_transposed", tensor<2x3xi16>>} : memref<2x3xi16>
// CHECK:         krnl.iterate
// CHECK-NEXT:    ^bb0(%[[ROW:.+]]: index, %[[COLUMN:.+]]: index):
// CHECK-NEXT:      %[[SUM:.+]] = scf.for %[[KK:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (i32) {
// CHECK-NEXT:        %[[L:.+]] = memref.load %[[A]][%[[ROW]], %[[KK]]] : memref<4x3xi16>
// CHECK-NEXT:        %[[L32:.+]] = arith.extsi %[[L]] : i16 to i32
// CHECK-NEXT:        %[[R:.+]] = memref.load %[[BT]][%[[COLUMN]], %[[KK]]] : memref<2x3xi16>
// CHECK-NEXT:        %[[R32:.+]] = arith.extsi %[[R]] : i16 to i32
// CHECK-NEXT:        %[[P:.+]] = arith.muli %[[L32]], %[[R32]] : i32
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addi %[[ACC]], %[[P]] : i32
// CHECK-NEXT:        scf.yield %[[NEXT]] : i32
// CHECK:           memref.store %[[SUM]], %y[%[[ROW]], %[[COLUMN]]] : memref<4x2xi32>

// -----

// MatMulInteger of runtime operands: both less their zero points (int16),
// then the MatMul nest accumulating in int32.
builtin.module attributes {onnx.opset = 10 : i64} {
  func.func @main_graph(%a: tensor<4x3xui8>, %b: tensor<3x2xi8>, %za: tensor<ui8>, %zb: tensor<2xi8>) -> tensor<4x2xi32> {
    %y = "onnx.MatMulInteger"(%a, %b, %za, %zb) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (tensor<4x3xui8>, tensor<3x2xi8>, tensor<ui8>, tensor<2xi8>) -> tensor<4x2xi32>
    func.return %y : tensor<4x2xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4x3xi16>
// CHECK:         %[[B:.+]] = memref.alloc() : memref<3x2xi16>
// CHECK:         ^bb0(%{{.+}}: index, %[[N:.+]]: index):
// CHECK:           memref.load %zb[%[[N]]] : memref<2xi8>
// CHECK:         krnl.block
// CHECK:         krnl.iterate
// CHECK:           %[[L:.+]] = memref.load %[[A]]
// CHECK-NEXT:      arith.extsi %[[L]] : i16 to i32
// CHECK-NEXT:      %[[R:.+]] = memref.load %[[B]]
// CHECK-NEXT:      arith.extsi %[[R]] : i16 to i32
// CHECK-NEXT:      arith.muli
// CHECK-NEXT:      memref.load %y
// CHECK-NEXT:      arith.addi

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

// -----

// To float8: x / scale converted as Cast does (here without saturation; the
// float8 zero point is zero and not added); to int4: rounded, plus the zero
// point (sign-extended from its byte), clamped to [-8, 7].
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i4>) -> (tensor<4xf8E4M3FN>, tensor<4xi4>) {
    %zf = "onnx.Constant"() {value = dense<0.0> : tensor<f8E4M3FN>} : () -> tensor<f8E4M3FN>
    %y = "onnx.QuantizeLinear"(%x, %s, %zf) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {saturate = 0 : i64} : (tensor<4xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN>
    %q = "onnx.QuantizeLinear"(%x, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<4xf32>, tensor<f32>, tensor<i4>) -> tensor<4xi4>
    func.return %y, %q : tensor<4xf8E4M3FN>, tensor<4xi4>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[LOW:.+]] = arith.constant -8.000000e+00 : f32
// CHECK-DAG:     %[[HIGH:.+]] = arith.constant 7.000000e+00 : f32
// CHECK:         krnl.iterate
// CHECK:           %[[Q:.+]] = arith.divf
// CHECK-NOT:       math.roundeven
// CHECK:           %[[BITS:.+]] = arith.bitcast %[[Q]] : f32 to i32
// CHECK-NOT:       math.roundeven
// CHECK:           %[[F8:.+]] = builtin.unrealized_conversion_cast %{{.+}} : i8 to f8E4M3FN
// CHECK-NEXT:      memref.store %[[F8]], %y
// CHECK:         krnl.iterate
// CHECK:           math.roundeven
// CHECK:           builtin.unrealized_conversion_cast %{{.+}} : i4 to i8
// CHECK:           arith.sitofp %{{.+}} : i8 to f32
// CHECK:           arith.select %{{.+}}, %{{.+}}, %[[LOW]] : f32
// CHECK:           arith.select %{{.+}}, %{{.+}}, %[[HIGH]] : f32
// CHECK:           memref.store %{{.+}}, %q

// -----

// Per-tensor QuantizeLinear (one scale, one zero point) loops over 1-D views of x and y,
// so that it vectorizes along all of their elements.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<1x4x3x3xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<1x4x3x3xui8> {
    %y = "onnx.QuantizeLinear"(%x, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x4x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x3x3xui8>
    func.return %y : tensor<1x4x3x3xui8>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[X:.+]] = krnl.view %x[0 : i64] : memref<1x4x3x3xf32> to memref<36xf32>
// CHECK-NEXT:    %[[Y:.+]] = krnl.view %y[0 : i64] : memref<1x4x3x3xui8> to memref<36xui8>
// CHECK:         krnl.iterate
// CHECK-NEXT:    ^bb0(%[[I:.+]]: index):
// CHECK-NEXT:      memref.load %[[X]][%[[I]]] : memref<36xf32>
// CHECK:           memref.store %{{.+}}, %[[Y]][%[[I]]] : memref<36xui8>
