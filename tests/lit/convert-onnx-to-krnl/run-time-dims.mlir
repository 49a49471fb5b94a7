// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// Symbolic dims become ? dims: the graph arguments' dims are read at entry
// (memref.dim; the entry point checks the output's against "batch*seq"), a
// result is allocated with them, loops are bounded by them (each element-wise
// nest one loop over its elements, a view of each buffer), and a Reshape is a
// view sized by its type's dims.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<?x?x8xf32, ["batch", "seq", ""]>) -> tensor<?x8xf32, ["batch*seq", ""]> {
    %r = "onnx.Relu"(%x) : (tensor<?x?x8xf32, ["batch", "seq", ""]>) -> tensor<?x?x8xf32, ["batch", "seq", ""]>
    %shape = "onnx.Constant"() {value = dense<[-1, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
    %y = "onnx.Reshape"(%r, %shape) : (tensor<?x?x8xf32, ["batch", "seq", ""]>, tensor<2xi64>) -> tensor<?x8xf32, ["batch*seq", ""]>
    %z = "onnx.Sigmoid"(%y) : (tensor<?x8xf32, ["batch*seq", ""]>) -> tensor<?x8xf32, ["batch*seq", ""]>
    func.return %z : tensor<?x8xf32, ["batch*seq", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x?x8xf32>, %z: memref<?x8xf32>) {
// CHECK:         %[[BATCH:.+]] = memref.dim %x, %{{.+}} : memref<?x?x8xf32>
// CHECK-NEXT:    %[[SEQ:.+]] = memref.dim %x, %{{.+}} : memref<?x?x8xf32>
// CHECK-NEXT:    %[[ROWS:.+]] = memref.dim %z, %{{.+}} : memref<?x8xf32>
// CHECK-NEXT:    %r = memref.alloc(%[[BATCH]], %[[SEQ]]) : memref<?x?x8xf32>
// CHECK:         %[[RV:.+]] = krnl.view %r[0 : i64] (%[[N:[0-9]+]]) : memref<?x?x8xf32> to memref<?xf32>
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0] to [%[[N]]] {
// CHECK:         %[[VIEW:.+]] = krnl.view %r[0 : i64] (%[[ROWS]]) : memref<?x?x8xf32> to memref<?x8xf32>
// CHECK:         %[[FLAT:.+]] = krnl.view %[[VIEW]][0 : i64] (%{{.+}}) : memref<?x8xf32> to memref<?xf32>
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0] to [%{{.+}}] {
// CHECK:           memref.load %[[FLAT]]
// CHECK:       krnl.entry_point {{.*}}dims = {{\[}}["batch", "seq", ""], ["batch*seq", ""]]}
