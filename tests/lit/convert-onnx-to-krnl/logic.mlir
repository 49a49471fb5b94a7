// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Unsigned integers are computed by arith on the signless type of their width,
// with the unsigned forms of compare and divide; the casts between ui32 and i32
// only rename the bits. Comparisons give bool; And/Or/Xor are the integer ops on i1.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<2x3xui32>, %b: tensor<3xui32>, %p: tensor<2x3xi1>, %q: tensor<2x3xi1>) -> (tensor<2x3xi1>, tensor<2x3xui32>, tensor<2x3xi1>) {
    %lt = "onnx.Less"(%a, %b) : (tensor<2x3xui32>, tensor<3xui32>) -> tensor<2x3xi1>
    %d = "onnx.Div"(%a, %b) : (tensor<2x3xui32>, tensor<3xui32>) -> tensor<2x3xui32>
    %x = "onnx.Xor"(%p, %q) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
    func.return %lt, %d, %x : tensor<2x3xi1>, tensor<2x3xui32>, tensor<2x3xi1>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:           %[[A:.+]] = memref.load %a
// CHECK-NEXT:      %[[B:.+]] = memref.load %b
// CHECK-NEXT:      %[[SA:.+]] = builtin.unrealized_conversion_cast %[[A]] : ui32 to i32
// CHECK-NEXT:      %[[SB:.+]] = builtin.unrealized_conversion_cast %[[B]] : ui32 to i32
// CHECK-NEXT:      %[[LT:.+]] = arith.cmpi ult, %[[SA]], %[[SB]] : i32
// CHECK-NEXT:      memref.store %[[LT]], %lt
// CHECK:           %[[Q:.+]] = arith.divui %{{.+}}, %{{.+}} : i32
// CHECK-NEXT:      %[[UQ:.+]] = builtin.unrealized_conversion_cast %[[Q]] : i32 to ui32
// CHECK-NEXT:      memref.store %[[UQ]], %d
// CHECK:           %[[X:.+]] = arith.xori %{{.+}}, %{{.+}} : i1
// CHECK-NEXT:      memref.store %[[X]], %{{.+}} : memref<6xi1>

// -----

// Mod with fmod=0 on integers takes the divisor's sign: the remainder (with the
// dividend's sign) is moved by the divisor where the signs differ. Where selects.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<4xi32>, %b: tensor<4xi32>, %c: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi32>) {
    %m = "onnx.Mod"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %w = "onnx.Where"(%c, %a, %b) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    func.return %m, %w : tensor<4xi32>, tensor<4xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:           %[[R:.+]] = arith.remsi %[[X:.+]], %[[Y:.+]] : i32
// CHECK-NEXT:      %[[RN:.+]] = arith.cmpi slt, %[[R]], %{{.+}} : i32
// CHECK-NEXT:      %[[YN:.+]] = arith.cmpi slt, %[[Y]], %{{.+}} : i32
// CHECK-NEXT:      %[[DIFF:.+]] = arith.xori %[[RN]], %[[YN]] : i1
// CHECK-NEXT:      %[[NZ:.+]] = arith.cmpi ne, %[[R]], %{{.+}} : i32
// CHECK-NEXT:      %[[ADJ:.+]] = arith.andi %[[DIFF]], %[[NZ]] : i1
// CHECK-NEXT:      %[[S:.+]] = arith.addi %[[R]], %[[Y]] : i32
// CHECK-NEXT:      %[[M:.+]] = arith.select %[[ADJ]], %[[S]], %[[R]] : i32
// CHECK-NEXT:      memref.store %[[M]], %m
// CHECK:           %[[C:.+]] = memref.load %c
// CHECK-NEXT:      %[[WA:.+]] = memref.load %a
// CHECK-NEXT:      %[[WB:.+]] = memref.load %b
// CHECK-NEXT:      %[[W:.+]] = arith.select %[[C]], %[[WA]], %[[WB]] : i32
// CHECK-NEXT:      memref.store %[[W]], %w
