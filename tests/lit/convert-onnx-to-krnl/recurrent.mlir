// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// RNN forward over 2 steps, batch 1, hidden 4, with sequence_lens; only Y_h read.
// Wb + Rb summed once, R transposed once (a copy nest, R being no constant), and
// one krnl.matmul computes X·Wᵀ for every step; then one time loop: for the rows
// with t < len, the accumulator starts as the projected row plus the biases, one
// krnl.matmul adds H·Rᵀ (all rows), and tanh gives the new state of the running
// rows; Y_h is its copy. Lengths are clamped to the sequence's.
builtin.module attributes {onnx.opset = 14 : i64} {
  func.func @main_graph(%x: tensor<2x1x2xf32>, %w: tensor<1x4x2xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x8xf32>, %len: tensor<1xi32>) -> tensor<1x1x4xf32> {
    %y_h = "onnx.RNN"(%x, %w, %r, %b, %len) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, resultSegmentSizes = array<i32: 0, 1>}> {direction = "forward", hidden_size = 4 : i64, layout = 0 : i64} : (tensor<2x1x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<1x8xf32>, tensor<1xi32>) -> tensor<1x1x4xf32>
    func.return %y_h : tensor<1x1x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<2x1x2xf32>, %w: memref<1x4x2xf32>, %r: memref<1x4x4xf32>, %b: memref<1x8xf32>, %len: memref<1xi32>, %y_h: memref<1x1x4xf32>) {
// CHECK:         %[[PROJ:.+]] = memref.alloc() : memref<1x2x1x4xf32>
// CHECK:         %[[GB:.+]] = memref.alloc() : memref<1x4xf32>
// CHECK:         ^bb0(%[[BD:.+]]: index, %[[COL:.+]]: index):
// CHECK-NEXT:      %[[RCOL:.+]] = arith.addi %[[COL]], %{{.+}} : index
// CHECK-NEXT:      %[[RB:.+]] = memref.load %b[%[[BD]], %[[RCOL]]] : memref<1x8xf32>
// CHECK-NEXT:      %[[WB:.+]] = memref.load %b[%[[BD]], %[[COL]]] : memref<1x8xf32>
// CHECK-NEXT:      %[[BIAS:.+]] = arith.addf %[[WB]], %[[RB]] : f32
// CHECK-NEXT:      memref.store %[[BIAS]], %[[GB]][%[[BD]], %[[COL]]] : memref<1x4xf32>
// CHECK:         %[[H:.+]] = memref.alloc() : memref<1x1x4xf32>
// CHECK:         %[[ACC:.+]] = memref.alloc() : memref<1x4xf32>
// CHECK:         %[[RT:.+]] = memref.alloc() : memref<1x4x4xf32>
// CHECK:         ^bb0(%[[D:.+]]: index, %[[K:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:      %[[RV:.+]] = memref.load %r[%[[D]], %[[J]], %[[K]]] : memref<1x4x4xf32>
// CHECK-NEXT:      memref.store %[[RV]], %[[RT]][%[[D]], %[[K]], %[[J]]] : memref<1x4x4xf32>
// CHECK:         %[[WT:.+]] = memref.alloc() : memref<1x2x4xf32>
// CHECK:         krnl.matmul %x, %[[WT]] into %[[PROJ]] {sizes = [2 : i64, 4 : i64, 2 : i64], {{.*}} a_strides = [2 : i64, 1 : i64], b_access = #krnl<b_access rows>, ldb = 4 : i64, {{.*}} batch = [0 : i64, 0 : i64, 0 : i64], clip
// CHECK-NEXT:    scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:      %[[LEN32:.+]] = memref.load %len[%{{.+}}] : memref<1xi32>
// CHECK-NEXT:      %[[LENI:.+]] = arith.index_cast %[[LEN32]] : i32 to index
// CHECK-NEXT:      %[[LEN:.+]] = arith.minsi %[[LENI]], %{{.+}} : index
// CHECK-NEXT:      %[[ACTIVE:.+]] = arith.cmpi slt, %[[T]], %[[LEN]] : index
// CHECK-NEXT:      scf.if %[[ACTIVE]] {
// CHECK-NEXT:        scf.for %[[C:.+]] = {{.*}} {
// CHECK-NEXT:          %[[P:.+]] = memref.load %[[PROJ]][%{{.+}}, %[[T]], %{{.+}}, %[[C]]] : memref<1x2x1x4xf32>
// CHECK-NEXT:          %[[PB:.+]] = memref.load %[[GB]][%{{.+}}, %[[C]]] : memref<1x4xf32>
// CHECK-NEXT:          %[[PS:.+]] = arith.addf %[[P]], %[[PB]] : f32
// CHECK-NEXT:          memref.store %[[PS]], %[[ACC]][%{{.+}}, %[[C]]] : memref<1x4xf32>
// CHECK:           krnl.matmul %[[H]], %[[RT]] into %[[ACC]] {sizes = [1 : i64, 4 : i64, 4 : i64], {{.*}} ldb = 4 : i64, ldc = 4 : i64, batch = [0 : i64, 0 : i64, 0 : i64], accumulate, clip
// CHECK:           scf.if
// CHECK-NEXT:        scf.for %[[G:.+]] = {{.*}} {
// CHECK-NEXT:          %[[PRE:.+]] = memref.load %[[ACC]][%{{.+}}, %[[G]]] : memref<1x4xf32>
// CHECK-NEXT:          %[[NEW:.+]] = math.tanh %[[PRE]] : f32
// CHECK-NEXT:          memref.store %[[NEW]], %[[H]][%{{.+}}, %{{.+}}, %[[G]]] : memref<1x1x4xf32>
// CHECK:           %[[FINAL:.+]] = memref.load %[[H]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x1x4xf32>
// CHECK-NEXT:      memref.store %[[FINAL]], %y_h[%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x1x4xf32>

// -----

// GRU in reverse with linear_before_reset, clip 0.5, 3 steps, no bias: the step
// reads the projection at time 2 - t; the accumulator starts as the projection for
// z and r and at 0 for h (Rbh would go there), one krnl.matmul adds H·Rᵀ to all 12
// columns; the candidate is tanh(clip(x_h + r * acc_h)), clip = min(max(x, -0.5), 0.5).
builtin.module attributes {onnx.opset = 14 : i64} {
  func.func @main_graph(%x: tensor<3x1x2xf32>, %w: tensor<1x12x2xf32>, %r: tensor<1x12x4xf32>) -> tensor<3x1x1x4xf32> {
    %y = "onnx.GRU"(%x, %w, %r) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0>}> {direction = "reverse", hidden_size = 4 : i64, linear_before_reset = 1 : i64, clip = 0.5 : f32} : (tensor<3x1x2xf32>, tensor<1x12x2xf32>, tensor<1x12x4xf32>) -> tensor<3x1x1x4xf32>
    func.return %y : tensor<3x1x1x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[LO:.+]] = arith.constant -5.000000e-01 : f32
// CHECK-DAG:     %[[HI:.+]] = arith.constant 5.000000e-01 : f32
// CHECK:         %[[H:.+]] = memref.alloc() : memref<1x1x4xf32>
// CHECK:         %[[ACC:.+]] = memref.alloc() : memref<1x12xf32>
// CHECK:         krnl.matmul %x
// CHECK-NEXT:    scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:      %[[TIME:.+]] = arith.subi %[[C2]], %[[T]] : index
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        %[[ZR:.+]] = memref.load %{{.+}}[%{{.+}}, %[[TIME]], %{{.+}}, %{{.+}}] : memref<1x3x1x12xf32>
// CHECK-NEXT:        memref.store %[[ZR]], %[[ACC]]
// CHECK:           scf.for
// CHECK-NEXT:        arith.addi
// CHECK-NEXT:        memref.store %[[ZERO]], %[[ACC]]
// CHECK:           krnl.matmul %[[H]], %{{.+}} into %[[ACC]] {sizes = [1 : i64, 12 : i64, 4 : i64]
// CHECK-NEXT:      %[[TIME2:.+]] = arith.subi %[[C2]], %[[T]] : index
// CHECK-NEXT:      scf.for %[[J:.+]] = {{.*}} {
// CHECK:             math.exp
// CHECK:             %[[RH:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:        %[[MIX:.+]] = arith.addf %{{.+}}, %[[RH]] : f32
// CHECK-NEXT:        %[[UP:.+]] = arith.maximumf %[[MIX]], %[[LO]] : f32
// CHECK-NEXT:        %[[CL:.+]] = arith.minimumf %[[UP]], %[[HI]] : f32
// CHECK-NEXT:        %[[CAND:.+]] = math.tanh %[[CL]] : f32
// CHECK:             memref.store %{{.+}}, %y[%[[TIME2]], %{{.+}}, %{{.+}}, %[[J]]] : memref<3x1x1x4xf32>
