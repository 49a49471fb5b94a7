// RUN: not onnxc-opt %s 2>&1 | filecheck %s

// A grown buffer's rows (dim 0) are known at run time only (krnl.free checks the same).
func.func @main_graph(%n: index) {
  %b = krnl.grow %n : memref<4x2xf32>
  func.return
}

// CHECK: krnl.grow: a grown buffer has a dynamic dim 0 and static other dims, not memref<4x2xf32>
