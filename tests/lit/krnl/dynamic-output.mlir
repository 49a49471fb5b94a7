// RUN: onnxc-opt %s | onnxc-opt | filecheck %s
// RUN: onnxc-opt %s --print-op-generic | onnxc-opt | filecheck %s

// krnl.dynamic_output round-trips; its output has the source's shape but a
// dynamic dim at `axis`.
func.func @main_graph(%x: memref<2x3xf32>, %y: memref<2x?xi64, "onnxc_tensor">) {
  %bound = memref.alloc() : memref<2x6xi64>
  %count = arith.constant 4 : index
  krnl.dynamic_output %bound[%count] into %y {axis = 1 : i64} : memref<2x6xi64>, memref<2x?xi64, "onnxc_tensor">
  func.return
}

// CHECK: krnl.dynamic_output %bound[%count] into %y {axis = 1 : i64} : memref<2x6xi64>, memref<2x?xi64, "onnxc_tensor">

// A source with run-time dims: the output's dims other than `axis` are `?`
// where the source's are (their sizes are read from the source).
func.func @run_time_source(%n: index, %y: memref<?x?x3xi64, "onnxc_tensor">) {
  %scratch = memref.alloc(%n, %n) : memref<?x?x3xi64>
  %rows = arith.constant 4 : index
  krnl.dynamic_output %scratch[%rows] into %y {axis = 1 : i64} : memref<?x?x3xi64>, memref<?x?x3xi64, "onnxc_tensor">
  func.return
}

// CHECK: krnl.dynamic_output %scratch[%rows] into %y {axis = 1 : i64} : memref<?x?x3xi64>, memref<?x?x3xi64, "onnxc_tensor">
