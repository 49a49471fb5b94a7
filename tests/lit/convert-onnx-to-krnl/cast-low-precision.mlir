// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// The low-precision types are storage only (one element per byte): Cast converts
// them with integer code on their bits through f32 or i8, BitCast reinterprets.
// f32 -> f8E5M2 without saturation: round to nearest even (add half - 1 + lsb,
// shift), overflow to infinity (124), NaN to the quiet NaN (126), sign on top.
builtin.module attributes {onnx.opset = 26 : i64} {
  func.func @main_graph(%f: tensor<4xf32>, %q: tensor<4xi4>, %e: tensor<4xf8E4M3FN>) -> (tensor<4xf8E5M2>, tensor<4xi8>, tensor<4xf32>, tensor<4xi8>, tensor<4xf8E8M0FNU>) {
    %a = "onnx.Cast"(%f) {to = 19 : i64, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E5M2>
    %i = "onnx.Cast"(%q) {to = 3 : i64} : (tensor<4xi4>) -> tensor<4xi8>
    %g = "onnx.Cast"(%e) {to = 1 : i64} : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
    %b = "onnx.BitCast"(%e) {to = 3 : i64} : (tensor<4xf8E4M3FN>) -> tensor<4xi8>
    %p = "onnx.Cast"(%f) {to = 24 : i64, round_mode = "down"} : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
    func.return %a, %i, %g, %b, %p : tensor<4xf8E5M2>, tensor<4xi8>, tensor<4xf32>, tensor<4xi8>, tensor<4xf8E8M0FNU>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME:      %f: memref<4xf32>, %q: memref<4xi4>, %e: memref<4xf8E4M3FN>, %a: memref<4xf8E5M2>
// CHECK-DAG:       %[[C123:.+]] = arith.constant 123 : i32
// CHECK-DAG:       %[[INF:.+]] = arith.constant 124 : i32
// CHECK-DAG:       %[[NAN:.+]] = arith.constant 126 : i32
// CHECK-DAG:       %[[C4:.+]] = arith.constant 4 : i8
// CHECK-DAG:       %[[QNAN:.+]] = arith.constant 2143289344 : i32

// CHECK:           %[[X:.+]] = memref.load %f
// CHECK-NEXT:      %[[BITS:.+]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:           %[[ISNAN:.+]] = arith.cmpi ugt, %{{.+}}, %{{.+}} : i32
// CHECK:           %[[OVER:.+]] = arith.cmpi ugt, %[[CODE:.+]], %[[C123]] : i32
// CHECK-NEXT:      %[[SAT:.+]] = arith.select %[[OVER]], %[[INF]], %[[CODE]] : i32
// CHECK-NEXT:      %[[FIN:.+]] = arith.select %[[ISNAN]], %[[NAN]], %[[SAT]] : i32
// CHECK:           %[[BYTE:.+]] = arith.trunci %{{.+}} : i32 to i8
// CHECK-NEXT:      %[[F8:.+]] = builtin.unrealized_conversion_cast %[[BYTE]] : i8 to f8E5M2
// CHECK-NEXT:      memref.store %[[F8]], %a

// int4 -> int8: sign-extend the low 4 bits of the byte.
// CHECK:           %[[Q:.+]] = memref.load %q
// CHECK-NEXT:      %[[QB:.+]] = builtin.unrealized_conversion_cast %[[Q]] : i4 to i8
// CHECK-NEXT:      %[[UP:.+]] = arith.shli %[[QB]], %[[C4]] : i8
// CHECK-NEXT:      %[[SX:.+]] = arith.shrsi %[[UP]], %[[C4]] : i8
// CHECK-NEXT:      memref.store %[[SX]], %i

// f8E4M3FN -> f32: exact; S.1111.111 is NaN (keeping its sign).
// CHECK:           %[[E:.+]] = memref.load %e
// CHECK-NEXT:      %[[EB:.+]] = builtin.unrealized_conversion_cast %[[E]] : f8E4M3FN to i8
// CHECK-NEXT:      %[[E32:.+]] = arith.extui %[[EB]] : i8 to i32
// CHECK:           %[[SIGNED_NAN:.+]] = arith.ori %[[QNAN]], %[[SIGN:.+]] : i32
// CHECK-NEXT:      %[[ISNAN:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : i32
// CHECK-NEXT:      %[[R:.+]] = arith.select %[[ISNAN]], %[[SIGNED_NAN]], %{{.+}} : i32
// CHECK-NEXT:      %[[G:.+]] = arith.bitcast %[[R]] : i32 to f32
// CHECK-NEXT:      memref.store %[[G]], %g

// BitCast: the same byte.
// CHECK:           %[[E:.+]] = memref.load %e
// CHECK-NEXT:      %[[EB:.+]] = builtin.unrealized_conversion_cast %[[E]] : f8E4M3FN to i8
// CHECK-NEXT:      memref.store %[[EB]], %b

// f32 -> e8m0 rounding down: the exponent field, NaN and infinity to 0xFF.
// CHECK:           %[[X:.+]] = memref.load %f
// CHECK-NEXT:      %[[BITS:.+]] = arith.bitcast %[[X]] : f32 to i32
// CHECK-NEXT:      %[[SH:.+]] = arith.shrui %[[BITS]], %{{.+}} : i32
// CHECK-NEXT:      %[[EXP:.+]] = arith.andi %[[SH]], %{{.+}} : i32
// CHECK-NEXT:      %[[SPECIAL:.+]] = arith.cmpi eq, %[[EXP]], %{{.+}} : i32
// CHECK-NEXT:      %[[OUT:.+]] = arith.select %[[SPECIAL]], %{{.+}}, %[[EXP]] : i32
// CHECK-NEXT:      %[[BYTE:.+]] = arith.trunci %[[OUT]] : i32 to i8
// CHECK-NEXT:      %[[P:.+]] = builtin.unrealized_conversion_cast %[[BYTE]] : i8 to f8E8M0FNU
// CHECK-NEXT:      memref.store %[[P]], %p
