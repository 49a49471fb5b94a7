// RUN: not onnxc-opt %s 2>&1 | filecheck %s

// Only the dim at `axis` may be dynamic in the output.
func.func @main_graph(%x: memref<2x3xf32>, %y: memref<?x?xi64, "onnxc_tensor">) {
  %bound = memref.alloc() : memref<2x6xi64>
  %count = arith.constant 4 : index
  krnl.dynamic_output %bound[%count] into %y {axis = 1 : i64} : memref<2x6xi64>, memref<?x?xi64, "onnxc_tensor">
  func.return
}

// CHECK: krnl.dynamic_output: the output must have the static source shape with a dynamic dim at axis
