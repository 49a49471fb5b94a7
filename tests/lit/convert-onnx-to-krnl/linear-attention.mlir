// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// LinearAttention, linear rule, two query heads sharing one KV head: a zeroed
// f32 state, then per (batch, KV head) a sequential loop over the tokens that
// adds k_t (x) v_t to the state and lets each query head of the group read
// scale * q_t^T S into its slice of the packed output.
builtin.module attributes {onnx.opset = 27 : i64} {
  func.func @main_graph(%q: tensor<1x3x4xf32>, %k: tensor<1x3x2xf32>, %v: tensor<1x3x2xf32>) -> tensor<1x3x4xf32> {
    %y, %s = "onnx.LinearAttention"(%q, %k, %v) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>}> {update_rule = "linear", q_num_heads = 2 : i64, kv_num_heads = 1 : i64} : (tensor<1x3x4xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> (tensor<1x3x4xf32>, tensor<1x1x2x2xf32>)
    func.return %y : tensor<1x3x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[S:.+]] = memref.alloc() : memref<1x1x2x2xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 1] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[h:.+]]: index):
// CHECK-NEXT:      scf.for %[[t:[^ ]+]] =
// CHECK-NEXT:        scf.for %[[d:[^ ]+]] =
// CHECK-NEXT:          scf.for %[[m:[^ ]+]] =
// CHECK:                 %[[V:.+]] = memref.load %v[%[[n]], %[[t]], %{{.+}}] : memref<1x3x2xf32>
// CHECK:                 %[[K:.+]] = memref.load %k[%[[n]], %[[t]], %{{.+}}] : memref<1x3x2xf32>
// CHECK-NEXT:            %[[KV:.+]] = arith.mulf %[[K]], %[[V]] : f32
// CHECK-NEXT:            %[[OLD:.+]] = memref.load %[[S]][%[[n]], %[[h]], %[[d]], %[[m]]]
// CHECK-NEXT:            %[[NEW:.+]] = arith.addf %[[OLD]], %[[KV]] : f32
// CHECK-NEXT:            memref.store %[[NEW]], %[[S]][%[[n]], %[[h]], %[[d]], %[[m]]]
// CHECK:             scf.for %[[member:[^ ]+]] =
// CHECK:               %[[READ:.+]] = scf.for {{.*}} -> (f32) {
// CHECK:                 memref.load %q[%[[n]], %[[t]], %{{.+}}] : memref<1x3x4xf32>
// CHECK:               %[[O:.+]] = arith.mulf %{{.+}}, %[[READ]] : f32
// CHECK:               memref.store %[[O]], %y[%[[n]], %[[t]], %{{.+}}] : memref<1x3x4xf32>
