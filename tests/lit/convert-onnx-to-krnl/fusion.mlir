// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// A chain of element-wise ops whose intermediates have one user each is one
// nest: no buffer for %m or %a, every operand loaded at its broadcast index
// (the scalar %s once, before the loops; %c per row), the chain computed in
// registers, only the last result stored.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>, %c: tensor<3x1xf32>, %s: tensor<f32>) -> tensor<2x3x4xf32> attributes {onnx.input_names = ["x", "c", "s"], onnx.output_names = ["y"]} {
    %m = "onnx.Mul"(%x, %s) : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
    %a = "onnx.Add"(%m, %c) : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    %y = "onnx.Relu"(%a) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    func.return %y : tensor<2x3x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<2x3x4xf32>, %c: memref<3x1xf32>, %s: memref<f32>, %y: memref<2x3x4xf32>) {
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT:     memref.alloc
// CHECK:         %[[S:.+]] = memref.load %s[] : memref<f32>
// CHECK-NEXT:    krnl.define_loops 3
// CHECK-NEXT:    krnl.iterate({{.*}}) bounds [0, 0, 0] to [2, 3, 4] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %x[%[[i]], %[[j]], %[[k]]] : memref<2x3x4xf32>
// CHECK-NEXT:      %[[M:.+]] = arith.mulf %[[X]], %[[S]] : f32
// CHECK-NEXT:      %[[C:.+]] = memref.load %c[%[[j]], %[[C0]]] : memref<3x1xf32>
// CHECK-NEXT:      %[[A:.+]] = arith.addf %[[M]], %[[C]] : f32
// CHECK-NEXT:      %[[R:.+]] = arith.maximumf %[[A]], %[[ZERO]] : f32
// CHECK-NEXT:      memref.store %[[R]], %y[%[[i]], %[[j]], %[[k]]] : memref<2x3x4xf32>
// CHECK-NEXT:      krnl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// A tree (the tanh form of GELU's last steps): both operands of the last Mul
// are computed in its nest, and %x, read by two of its ops, is loaded once.
// Every operand reads both dims alike: one loop over views of 32 elements.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
    %half = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %one = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %t = "onnx.Tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %p = "onnx.Add"(%t, %one) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %h = "onnx.Mul"(%x, %half) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %y = "onnx.Mul"(%h, %p) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    func.return %y : tensor<4x8xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
// CHECK-NOT:     memref.alloc
// CHECK:         %[[XV:.+]] = krnl.view %x[0 : i64] : memref<4x8xf32> to memref<32xf32>
// CHECK-NEXT:    %[[YV:.+]] = krnl.view %y[0 : i64] : memref<4x8xf32> to memref<32xf32>
// CHECK-NEXT:    %[[HALF:.+]] = memref.load %{{.+}}[] : memref<f32>
// CHECK-NEXT:    %[[ONE:.+]] = memref.load %{{.+}}[] : memref<f32>
// CHECK-NEXT:    krnl.define_loops 1
// CHECK-NEXT:    krnl.iterate
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %[[XV]][%[[i]]] : memref<32xf32>
// CHECK-NEXT:      %[[H:.+]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK-NEXT:      %[[T:.+]] = math.tanh %[[X]] : f32
// CHECK-NEXT:      %[[P:.+]] = arith.addf %[[T]], %[[ONE]] : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK-NEXT:      memref.store %[[Y]], %[[YV]][%[[i]]] : memref<32xf32>
// CHECK-NEXT:      krnl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// %n is a graph output and is read by two ops: it is stored (into its output
// argument), and Exp and Sqrt read it in nests of their own. Relu, read only
// by Neg, is computed in Neg's nest.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %r = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %n = "onnx.Neg"(%r) : (tensor<4xf32>) -> tensor<4xf32>
    %e = "onnx.Exp"(%n) : (tensor<4xf32>) -> tensor<4xf32>
    %q = "onnx.Sqrt"(%n) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %e, %n, %q : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<4xf32>, %e: memref<4xf32>, %n: memref<4xf32>, %q: memref<4xf32>) {
// CHECK:           %[[X:.+]] = memref.load %x
// CHECK-NEXT:      %[[R:.+]] = arith.maximumf %[[X]], %{{.+}} : f32
// CHECK-NEXT:      %[[N:.+]] = arith.negf %[[R]] : f32
// CHECK-NEXT:      memref.store %[[N]], %n
// CHECK:           %[[N:.+]] = memref.load %n
// CHECK-NEXT:      math.exp %[[N]] : f32
// CHECK:           %[[N:.+]] = memref.load %n
// CHECK-NEXT:      math.sqrt %[[N]] : f32

// -----

// BatchNormalization with constant statistics, then Relu: the factor
// scale / sqrt(var + epsilon) is a weight made at compile time; one nest, its
// height and width merged (the per-channel weights read neither).
builtin.module attributes {onnx.opset = 15 : i64} {
  func.func @main_graph(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %s = "onnx.Constant"() {value = dense<[4.0, 9.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %b = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %mean = "onnx.Constant"() {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
    %var = "onnx.Constant"() {value = dense<3.0> : tensor<2xf32>} : () -> tensor<2xf32>
    %n = "onnx.BatchNormalization"(%x, %s, %b, %mean, %var) <{resultSegmentSizes = array<i32: 1, 0, 0>}> {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
    %y = "onnx.Relu"(%n) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    func.return %y : tensor<1x2x3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x3x3xf32>, %y: memref<1x2x3x3xf32>) {
// CHECK-DAG:     %[[B:.+]] = krnl.global {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-DAG:     %[[MEAN:.+]] = krnl.global {value = dense<5.000000e-01> : tensor<2xf32>}
// CHECK:         %[[F:.+]] = krnl.global {value = #onnx.weight<"batch_norm_factor", tensor<2xf32>>} : memref<2xf32>
// CHECK-NEXT:    %[[XV:.+]] = krnl.view %x[0 : i64] : memref<1x2x3x3xf32> to memref<1x2x9xf32>
// CHECK-NEXT:    %[[YV:.+]] = krnl.view %y[0 : i64] : memref<1x2x3x3xf32> to memref<1x2x9xf32>
// CHECK-NEXT:    krnl.define_loops 3
// CHECK-NEXT:    krnl.iterate
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index, %[[hw:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %[[XV]][%[[n]], %[[c]], %[[hw]]]
// CHECK-NEXT:      %[[M:.+]] = memref.load %[[MEAN]][%[[c]]]
// CHECK-NEXT:      %[[FC:.+]] = memref.load %[[F]][%[[c]]]
// CHECK-NEXT:      %[[BC:.+]] = memref.load %[[B]][%[[c]]]
// CHECK-NEXT:      %[[D:.+]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[D]], %[[FC]] : f32
// CHECK-NEXT:      %[[Q:.+]] = arith.addf %[[P]], %[[BC]] : f32
// CHECK-NEXT:      %[[R:.+]] = arith.maximumf %[[Q]], %{{.+}} : f32
// CHECK-NEXT:      memref.store %[[R]], %[[YV]][%[[n]], %[[c]], %[[hw]]]
// CHECK-NEXT:      krnl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Element types may change along the chain: a bool from Greater and an i32
// from Cast feed Where in its nest.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x4xf32>, %z: tensor<2x4xi32>) -> tensor<2x4xi32> {
    %zero = "onnx.Constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %g = "onnx.Greater"(%x, %zero) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xi1>
    %i = "onnx.Cast"(%x) {to = 6 : i64} : (tensor<2x4xf32>) -> tensor<2x4xi32>
    %y = "onnx.Where"(%g, %i, %z) : (tensor<2x4xi1>, tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    func.return %y : tensor<2x4xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-NOT:       memref.alloc
// CHECK:           %[[ZV:.+]] = krnl.view %z
// CHECK-NEXT:      %[[XV:.+]] = krnl.view %x
// CHECK-NEXT:      %[[YV:.+]] = krnl.view %y
// CHECK:           %[[X:.+]] = memref.load %[[XV]]
// CHECK-NEXT:      %[[G:.+]] = arith.cmpf ogt, %[[X]], %{{.+}} : f32
// CHECK-NEXT:      %[[I:.+]] = arith.fptosi %[[X]] : f32 to i32
// CHECK-NEXT:      %[[Z:.+]] = memref.load %[[ZV]]
// CHECK-NEXT:      %[[Y:.+]] = arith.select %[[G]], %[[I]], %[[Z]] : i32
// CHECK-NEXT:      memref.store %[[Y]], %[[YV]]
// CHECK-NEXT:      krnl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// A Conv's kernel fuses no Mul: the Conv is a krnl.matmul into %c, then the
// Mul by a per-channel constant and the Relu are one nest reading %c.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x3x4x4xf32>) -> tensor<1x4x4x4xf32> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<4x3x1x1xf32>} : () -> tensor<4x3x1x1xf32>
    %k = "onnx.Constant"() {value = dense<2.0> : tensor<4x1x1xf32>} : () -> tensor<4x1x1xf32>
    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
    %m = "onnx.Mul"(%c, %k) : (tensor<1x4x4x4xf32>, tensor<4x1x1xf32>) -> tensor<1x4x4x4xf32>
    %y = "onnx.Relu"(%m) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    func.return %y : tensor<1x4x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %c = memref.alloc() : memref<1x4x4x4xf32>
// CHECK:         krnl.matmul {{.*}} into %c
// CHECK-SAME:      clip = [0xfff0000000000000 : f64, 0x7ff0000000000000 : f64]
// CHECK-NEXT:    %[[CV:.+]] = krnl.view %c[0 : i64] : memref<1x4x4x4xf32> to memref<1x4x16xf32>
// CHECK:         krnl.define_loops 3
// CHECK:           %[[C:.+]] = memref.load %[[CV]]
// CHECK-NEXT:      %[[K:.+]] = memref.load
// CHECK-NEXT:      %[[M:.+]] = arith.mulf %[[C]], %[[K]] : f32
// CHECK-NEXT:      %[[R:.+]] = arith.maximumf %[[M]], %{{.+}} : f32
// CHECK-NEXT:      memref.store %[[R]], %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x4x16xf32>
// CHECK-NEXT:      krnl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// An op whose result is smaller than its user's (broadcast) is not computed in
// the user's nest, where it would be computed again for every element.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x4xf32>, %v: tensor<2x1xf32>) -> tensor<2x4xf32> {
    %s = "onnx.Sqrt"(%v) : (tensor<2x1xf32>) -> tensor<2x1xf32>
    %y = "onnx.Div"(%x, %s) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
    func.return %y : tensor<2x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %s = memref.alloc() : memref<2x1xf32>
// CHECK:         %[[SV:.+]] = krnl.view %s[0 : i64] : memref<2x1xf32> to memref<2xf32>
// CHECK:           math.sqrt
// CHECK-NEXT:      memref.store {{.*}}, %[[SV]]
// CHECK:           memref.load %s
// CHECK-NEXT:      arith.divf
