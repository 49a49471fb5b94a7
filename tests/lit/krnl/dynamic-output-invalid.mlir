// RUN: not onnxc-opt %s --split-input-file 2>&1 | filecheck %s

// The output's dims other than `axis` are the source's: a static source dim
// stays static in the output.
func.func @main_graph(%x: memref<2x3xf32>, %y: memref<?x?xi64, "onnxc_tensor">) {
  %bound = memref.alloc() : memref<2x6xi64>
  %count = arith.constant 4 : index
  krnl.dynamic_output %bound[%count] into %y {axis = 1 : i64} : memref<2x6xi64>, memref<?x?xi64, "onnxc_tensor">
  func.return
}

// CHECK: krnl.dynamic_output: the output must have the source shape with a dynamic dim at axis

// -----

// ... and a run-time source dim stays run-time.
func.func @main_graph(%n: index, %y: memref<2x?xi64, "onnxc_tensor">) {
  %bound = memref.alloc(%n) : memref<?x6xi64>
  %count = arith.constant 4 : index
  krnl.dynamic_output %bound[%count] into %y {axis = 1 : i64} : memref<?x6xi64>, memref<2x?xi64, "onnxc_tensor">
  func.return
}

// CHECK: krnl.dynamic_output: the output must have the source shape with a dynamic dim at axis
