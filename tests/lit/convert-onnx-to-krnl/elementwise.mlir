// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Add with numpy broadcasting: a unit dim that is stretched is read at index 0,
// missing leading dims are not read at all. Intermediates (here, read by two
// ops, so not fused) are memref.alloc in the function's block; the graph
// output is written in place. Dims every operand reads alike are merged: the
// Relu is one loop over views of 24 elements.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) -> tensor<2x3x4xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["out"]} {
    %sum = "onnx.Add"(%a, %b) : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    %out = "onnx.Relu"(%sum) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %unused = "onnx.Neg"(%sum) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    func.return %out : tensor<2x3x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%a: memref<2x1x4xf32>, %b: memref<3x1xf32>, %out: memref<2x3x4xf32>) {
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %sum = memref.alloc() : memref<2x3x4xf32>
// CHECK-NEXT:    %[[L0:.+]], %[[L1:.+]], %[[L2:.+]] = krnl.define_loops 3
// CHECK-NEXT:    krnl.iterate(%[[L0]], %[[L1]], %[[L2]]) with (%[[L0]], %[[L1]], %[[L2]]) bounds [0, 0, 0] to [2, 3, 4] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %a[%[[i]], %[[C0]], %[[k]]] : memref<2x1x4xf32>
// CHECK-NEXT:      %[[Y:.+]] = memref.load %b[%[[j]], %[[C0]]] : memref<3x1xf32>
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      memref.store %[[S]], %sum[%[[i]], %[[j]], %[[k]]] : memref<2x3x4xf32>
// CHECK-NEXT:      krnl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.+]] = krnl.view %sum[0 : i64] : memref<2x3x4xf32> to memref<24xf32>
// CHECK-NEXT:    %[[OUT:.+]] = krnl.view %out[0 : i64] : memref<2x3x4xf32> to memref<24xf32>
// CHECK:         krnl.iterate
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index):
// CHECK-NEXT:      %[[V:.+]] = memref.load %[[SUM]][%[[i]]] : memref<24xf32>
// CHECK-NEXT:      %[[R:.+]] = arith.maximumf %[[V]], %[[ZERO]] : f32
// CHECK-NEXT:      memref.store %[[R]], %[[OUT]][%[[i]]] : memref<24xf32>
// CHECK:         func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  krnl.entry_point {func = @main_graph, input_names = ["a", "b"], output_names = ["out"]}

// -----

// Variadic Sum/Max/Min fold the binary op; integers use the integer ops.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %c: tensor<2x1xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
    %s = "onnx.Sum"(%a, %b, %c) <{operandSegmentSizes = array<i32: 3>}> : (tensor<2x3xi32>, tensor<3xi32>, tensor<2x1xi32>) -> tensor<2x3xi32>
    %m = "onnx.Max"(%a, %b) <{operandSegmentSizes = array<i32: 2>}> : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
    func.return %s, %m : tensor<2x3xi32>, tensor<2x3xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:           %[[A:.+]] = memref.load %a
// CHECK-NEXT:      %[[B:.+]] = memref.load %b
// CHECK-NEXT:      %[[C:.+]] = memref.load %c
// CHECK-NEXT:      %[[AB:.+]] = arith.addi %[[A]], %[[B]] : i32
// CHECK-NEXT:      %[[ABC:.+]] = arith.addi %[[AB]], %[[C]] : i32
// CHECK-NEXT:      memref.store %[[ABC]], %s
// CHECK:           arith.maxsi %{{.+}}, %{{.+}} : i32

// -----

// Unary math and activations.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %s = "onnx.Sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %l = "onnx.LeakyRelu"(%x) {alpha = 0.25 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    %t = "onnx.Tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %q = "onnx.Sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %s, %l, %t, %q : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ALPHA:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[X:.+]] = memref.load %x
// CHECK-NEXT:      %[[NX:.+]] = arith.negf %[[X]] : f32
// CHECK-NEXT:      %[[E:.+]] = math.exp %[[NX]] : f32
// CHECK-NEXT:      %[[D:.+]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:      %[[S:.+]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NEXT:      memref.store %[[S]], %s
// CHECK:           %[[X:.+]] = memref.load %x
// CHECK-NEXT:      %[[AX:.+]] = arith.mulf %[[X]], %[[ALPHA]] : f32
// CHECK-NEXT:      %[[NEG:.+]] = arith.cmpf olt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[L:.+]] = arith.select %[[NEG]], %[[AX]], %[[X]] : f32
// CHECK-NEXT:      memref.store %[[L]], %l
// CHECK:           math.tanh
// CHECK:           math.sqrt

// -----

// Clip (opset 11+): the scalar bounds are loaded once, outside the loop.
// Pow with an integer exponent converts it to the base's type.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<4xf32>, %lo: tensor<f32>, %e: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>) {
    %c = "onnx.Clip"(%x, %lo) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %p = "onnx.Pow"(%x, %e) : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
    func.return %c, %p : tensor<4xf32>, tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[LO:.+]] = memref.load %lo[] : memref<f32>
// CHECK-NEXT:    krnl.define_loops 1
// CHECK-NEXT:    krnl.iterate
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %x[%[[i]]]
// CHECK-NEXT:      %[[C:.+]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK-NEXT:      memref.store %[[C]], %c[%[[i]]]
// CHECK:           %[[X:.+]] = memref.load %x
// CHECK-NEXT:      %[[E:.+]] = memref.load %e
// CHECK-NEXT:      %[[EF:.+]] = arith.sitofp %[[E]] : i64 to f32
// CHECK-NEXT:      %[[P:.+]] = math.powf %[[X]], %[[EF]] : f32
// CHECK-NEXT:      memref.store %[[P]], %p

// -----

// Clip before opset 11 takes attributes (defaults: the float range).
builtin.module attributes {onnx.opset = 6 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c = "onnx.Clip"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> {min = -1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    func.return %c : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[LO:.+]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG:     %[[HI:.+]] = arith.constant 3.40282347e+38 : f32
// CHECK:           %[[A:.+]] = arith.maximumf %{{.+}}, %[[LO]] : f32
// CHECK-NEXT:      %[[B:.+]] = arith.minimumf %[[A]], %[[HI]] : f32

// -----

// Activations with attributes (Elu's alpha) and Gelu (exact: erf). float16 is
// computed in f32 and rounded once.
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>) {
    %e = "onnx.Elu"(%x) {alpha = 0.5 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    %g = "onnx.Gelu"(%h) : (tensor<4xf16>) -> tensor<4xf16>
    func.return %e, %g : tensor<4xf32>, tensor<4xf16>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:           %[[X:.+]] = memref.load %x
// CHECK-NEXT:      %[[EX:.+]] = math.exp %[[X]] : f32
// CHECK-NEXT:      %[[EM1:.+]] = arith.subf %[[EX]], %{{.+}} : f32
// CHECK-NEXT:      %[[NEG:.+]] = arith.mulf %{{.+}}, %[[EM1]] : f32
// CHECK-NEXT:      %[[LT:.+]] = arith.cmpf olt, %[[X]], %{{.+}} : f32
// CHECK-NEXT:      %[[E:.+]] = arith.select %[[LT]], %[[NEG]], %[[X]] : f32
// CHECK-NEXT:      memref.store %[[E]], %e
// CHECK:           %[[H:.+]] = memref.load %h
// CHECK-NEXT:      %[[HW:.+]] = arith.extf %[[H]] : f16 to f32
// CHECK:           math.erf %{{.+}} : f32
// CHECK:           %[[G:.+]] = arith.truncf %{{.+}} : f32 to f16
// CHECK-NEXT:      memref.store %[[G]], %g
