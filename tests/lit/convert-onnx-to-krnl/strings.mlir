// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// String elements are loaded as !onnx.string and read byte by byte. Equal: the
// same size, then every byte (the second input broadcast, loaded once).
// RegexFullMatch: one lookup per byte in the DFA's table of 256 columns, then
// whether the last state accepts (the DFA of a+b has 5 states: it is not
// minimized).
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<3x!onnx.string>, %y: tensor<1x!onnx.string>) -> (tensor<3xi1>, tensor<3xi1>) {
    %e = "onnx.Equal"(%x, %y) : (tensor<3x!onnx.string>, tensor<1x!onnx.string>) -> tensor<3xi1> loc("eq0")
    %m = "onnx.RegexFullMatch"(%x) {pattern = "a+b"} : (tensor<3x!onnx.string>) -> tensor<3xi1> loc("re0")
    func.return %e, %m : tensor<3xi1>, tensor<3xi1>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[Y:.+]] = memref.load %y[%{{.+}}] : memref<1x!onnx.string>
// CHECK:         krnl.iterate
// CHECK:           %[[X:.+]] = memref.load %x[%{{.+}}] : memref<3x!onnx.string>
// CHECK-NEXT:      %[[XN:.+]] = krnl.string_size %[[X]] : index
// CHECK-NEXT:      %[[YN:.+]] = krnl.string_size %[[Y]] : index
// CHECK-NEXT:      %[[SAME:.+]] = arith.cmpi eq, %[[XN]], %[[YN]] : index
// CHECK-NEXT:      %[[COMMON:.+]] = arith.minsi %[[XN]], %[[YN]] : index
// CHECK-NEXT:      %[[EQ:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[COMMON]] step %{{.+}} iter_args(%[[ALL:.+]] = %[[SAME]]) -> (i1) {
// CHECK-NEXT:        %[[A:.+]] = krnl.string_byte %[[X]][%[[I]]] : i8
// CHECK-NEXT:        arith.extui %[[A]] : i8 to i64
// CHECK-NEXT:        %[[B:.+]] = krnl.string_byte %[[Y]][%[[I]]] : i8
// CHECK:             arith.andi %[[ALL]], %{{.+}} : i1
// CHECK:           memref.store %[[EQ]], %e
// CHECK:         %[[TABLE:.+]] = krnl.global {value = #onnx.weight<"regex_transitions", tensor<5x256xi32>>} : memref<5x256xi32>
// CHECK:         %[[ACCEPT:.+]] = krnl.global {value = #onnx.weight<"regex_accepting", tensor<5xi8>>} : memref<5xi8>
// CHECK:         krnl.iterate
// CHECK:           %[[S:.+]] = memref.load %x
// CHECK:           %[[LAST:.+]] = scf.for {{.*}} iter_args(%[[STATE:.+]] = %{{.+}}) -> (index) {
// CHECK:             memref.load %[[TABLE]][%[[STATE]], %{{.+}}] : memref<5x256xi32>
// CHECK:           memref.load %[[ACCEPT]][%[[LAST]]] : memref<5xi8>
