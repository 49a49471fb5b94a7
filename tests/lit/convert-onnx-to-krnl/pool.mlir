// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// MaxPool 3x3 stride 2, pads 1 (windows reaching into the padding), separably, per output row:
// a row buffer of the padded width (9), its padding columns -inf once per plane; the image
// part cleared, then the maxima down the window's rows that lie in the image (a clipped range)
// along the row (unit stride); then each output the max of its three reads of the row.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
    %y = "onnx.MaxPool"(%x) <{resultSegmentSizes = array<i32: 1, 0>}> {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
    func.return %y : tensor<1x2x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x8x8xf32>, %y: memref<1x2x4x4xf32>) {
// CHECK:         %[[NEG_INF:.+]] = arith.constant 0xff800000 : f32
// CHECK:         %[[ROWS:.+]] = memref.alloc() : memref<1x2x9xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index):
// CHECK-NEXT:      memref.store %[[NEG_INF]], %[[ROWS]][%[[n]], %[[c]], %{{.+}}]
// CHECK:           scf.for %[[oy:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:        scf.for
// CHECK-NEXT:          arith.addi
// CHECK-NEXT:          memref.store %[[NEG_INF]], %[[ROWS]]
// CHECK:             %[[FIRST:.+]] = arith.maxsi
// CHECK-NEXT:        scf.for %[[ky:.+]] = %[[FIRST]] to %{{.+}} step %{{.+}} {
// CHECK-NEXT:          %[[IY:.+]] = arith.addi %{{.+}}, %[[ky]] : index
// CHECK-NEXT:          scf.for %[[ix:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:            %[[AT:.+]] = arith.addi %[[ix]], %{{.+}} : index
// CHECK-NEXT:            %[[OLD:.+]] = memref.load %[[ROWS]][%[[n]], %[[c]], %[[AT]]]
// CHECK-NEXT:            %[[V:.+]] = memref.load %x[%[[n]], %[[c]], %[[IY]], %[[ix]]]
// CHECK-NEXT:            %[[M:.+]] = arith.maximumf %[[OLD]], %[[V]] fastmath<nsz> : f32
// CHECK-NEXT:            memref.store %[[M]], %[[ROWS]][%[[n]], %[[c]], %[[AT]]]
// CHECK:             scf.for %[[ox:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-COUNT-3:       memref.load %[[ROWS]]
// CHECK-NEXT:          arith.maximumf
// CHECK-NEXT:          arith.maximumf
// CHECK-NEXT:          memref.store %{{.+}}, %y[%[[n]], %[[c]], %[[oy]], %[[ox]]] : memref<1x2x4x4xf32>
// CHECK-NOT:       memref.alloc
// CHECK-NOT:       arith.divf

// -----

// MaxPool 3x3, stride 1, pads 1 over a small plane (4x5) goes flat (pooling._flat_max_pool): each
// pass a unit-stride loop over the plane of 20 (x and y viewed flat), no loop per row. Down the
// rows: the own row copied, the row above (from element 5 on, 5 back) and below (up to 15, 5
// on); along them: the own column copied, the left (from 1, 1 back) and right neighbours (up
// to 19), wrapping around the rows' ends; then the first and last column of each row again
// over their two taps in the plane.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x4x5xf32>) -> tensor<1x2x4x5xf32> {
    %y = "onnx.MaxPool"(%x) <{resultSegmentSizes = array<i32: 1, 0>}> {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x2x4x5xf32>) -> tensor<1x2x4x5xf32>
    func.return %y : tensor<1x2x4x5xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x4x5xf32>, %y: memref<1x2x4x5xf32>) {
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C20:.+]] = arith.constant 20 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C5:.+]] = arith.constant 5 : index
// CHECK-DAG:     %[[C15:.+]] = arith.constant 15 : index
// CHECK-DAG:     %[[C19:.+]] = arith.constant 19 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK:         %[[ROWS:.+]] = memref.alloc() : memref<1x2x20xf32>
// CHECK-NEXT:    %[[X:.+]] = krnl.view %x[0 : i64] : memref<1x2x4x5xf32> to memref<1x2x20xf32>
// CHECK-NEXT:    %[[Y:.+]] = krnl.view %y[0 : i64] : memref<1x2x4x5xf32> to memref<1x2x20xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[C20]] step %[[C1]] {
// CHECK-NEXT:        memref.load %[[X]]
// CHECK-NEXT:        memref.store %{{.+}}, %[[ROWS]]
// CHECK:           scf.for %{{.+}} = %[[C5]] to %[[C20]] step %[[C1]] {
// CHECK:             arith.maximumf
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[C15]] step %[[C1]] {
// CHECK:             arith.maximumf
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[C20]] step %[[C1]] {
// CHECK-NEXT:        memref.load %[[ROWS]]
// CHECK-NEXT:        memref.store %{{.+}}, %[[Y]]
// CHECK:           scf.for %{{.+}} = %[[C1]] to %[[C20]] step %[[C1]] {
// CHECK:             arith.maximumf
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[C19]] step %[[C1]] {
// CHECK:             arith.maximumf
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-COUNT-2:     memref.load %[[ROWS]]
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        memref.store %{{.+}}, %[[Y]]
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK:             arith.maximumf
// CHECK-NEXT:        memref.store %{{.+}}, %[[Y]]
// CHECK:           krnl.yield

// -----

// AveragePool excluding padding: sums along the row as MaxPool, then a pass
// along the row divides by the number of points each clipped window holds
// (row range of the output row times the column range of each column).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
    %y = "onnx.AveragePool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
    func.return %y : tensor<1x1x3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         ^bb0(
// CHECK:           %[[HLO:.+]] = arith.maxsi
// CHECK:           %[[HHI:.+]] = arith.minsi
// CHECK:           scf.for
// CHECK:             arith.addf
// CHECK:           scf.for %[[ow:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:        %[[SUM:.+]] = memref.load %y
// CHECK:             %[[WLO:.+]] = arith.maxsi
// CHECK:             %[[WHI:.+]] = arith.minsi
// CHECK-NEXT:        %[[HN:.+]] = arith.subi %[[HHI]], %[[HLO]] : index
// CHECK-NEXT:        %[[WN:.+]] = arith.subi %[[WHI]], %[[WLO]] : index
// CHECK-NEXT:        %[[N:.+]] = arith.muli %[[HN]], %[[WN]] : index
// CHECK-NEXT:        %[[N64:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT:        %[[NF:.+]] = arith.sitofp %[[N64]] : i64 to f32
// CHECK-NEXT:        %[[AVG:.+]] = arith.divf %[[SUM]], %[[NF]] : f32
// CHECK-NEXT:        memref.store %[[AVG]], %y[{{.*}}, %[[ow]]]

// -----

// count_include_pad with windows inside input + padding: a constant divisor.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
    %y = "onnx.AveragePool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = 1} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
    func.return %y : tensor<1x1x3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[NINE:.+]] = arith.constant 9.000000e+00 : f32
// CHECK:               arith.addf
// CHECK:           %[[SUM:.+]] = memref.load %y
// CHECK:           %[[AVG:.+]] = arith.divf %[[SUM]], %[[NINE]] : f32
// CHECK-NEXT:      memref.store %[[AVG]], %y

// -----

// Global pools: each plane one row of H*W elements (krnl.view), its sum reassociable so that
// LLVM vectorizes along the row.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32> {
    %y = "onnx.GlobalAveragePool"(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
    func.return %y : tensor<2x3x1x1xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C20:.+]] = arith.constant 20 : index
// CHECK-DAG:     %[[TWENTY:.+]] = arith.constant 2.000000e+01 : f32
// CHECK-DAG:     %[[ROWS:.+]] = krnl.view %x[0 : i64] : memref<2x3x4x5xf32> to memref<2x3x20xf32>
// CHECK-DAG:     %[[OUT:.+]] = krnl.view %y[0 : i64] : memref<2x3x1x1xf32> to memref<2x3xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [2, 3] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index):
// CHECK-NEXT:      %[[SUM:.+]] = scf.for %[[i:.+]] = %[[C0]] to %[[C20]] step %[[C1]]
// CHECK-NEXT:        %[[V:.+]] = memref.load %[[ROWS]][%[[n]], %[[c]], %[[i]]]
// CHECK-NEXT:        arith.addf %{{.+}}, %[[V]] fastmath<reassoc> : f32
// CHECK:           %[[MEAN:.+]] = arith.divf %[[SUM]], %[[TWENTY]] : f32
// CHECK-NEXT:      memref.store %[[MEAN]], %[[OUT]][%[[n]], %[[c]]]

// -----

builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32> {
    %y = "onnx.GlobalMaxPool"(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
    func.return %y : tensor<2x3x1x1xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         arith.constant 0xff800000 : f32
// CHECK:         scf.for
// CHECK-NOT:       scf.for
// CHECK:             arith.maximumf
// CHECK-NOT:     arith.divf

// -----

// LpPool with p = 2: the window's sum of squares, then its square root.
builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @main_graph(%x: tensor<1x1x4xf32>) -> tensor<1x1x3xf32> {
    %y = "onnx.LpPool"(%x) {kernel_shape = [2], p = 2 : i64} : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
    func.return %y : tensor<1x1x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x1x4xf32>, %y: memref<1x1x3xf32>) {
// CHECK:         krnl.iterate
// CHECK:             %[[V:.+]] = memref.load %x
// CHECK-NEXT:        %[[SQ:.+]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT:        %[[OLD:.+]] = memref.load %y
// CHECK-NEXT:        arith.addf %[[OLD]], %[[SQ]] : f32
// CHECK:           %[[SUM:.+]] = memref.load %y
// CHECK-NEXT:      %[[R:.+]] = math.sqrt %[[SUM]] : f32
// CHECK-NEXT:      memref.store %[[R]], %y

// -----

// MaxPool's Indices (storage_order 1): a second pass over the window finds the
// first element equal to the maximum; its offset is the (n, c) plane's plus w * H + h.
builtin.module attributes {onnx.opset = 12 : i64} {
  func.func @main_graph(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
    %y, %i = "onnx.MaxPool"(%x) <{resultSegmentSizes = array<i32: 1, 1>}> {kernel_shape = [2 : i64, 2 : i64], strides = [2 : i64, 2 : i64], storage_order = 1 : i64} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
    func.return %y, %i : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[H:.+]] = arith.constant 4 : index
// CHECK:         ^bb0(%[[n:.+]]: index, %[[c:.+]]: index, %[[oh:.+]]: index, %[[ow:.+]]: index):
// CHECK:           %[[MAX:.+]] = scf.for
// CHECK:           memref.store %[[MAX]], %y[
// CHECK:           %[[IDX:.+]] = scf.for {{.*}} -> (i64) {
// CHECK:             scf.for {{.*}} -> (i64) {
// CHECK-NEXT:          %[[h:.+]] = arith.addi
// CHECK-NEXT:          %[[w:.+]] = arith.addi
// CHECK-NEXT:          %[[V:.+]] = memref.load %x[%[[n]], %[[c]], %[[h]], %[[w]]]
// CHECK-NEXT:          %[[EQ:.+]] = arith.cmpf oeq, %[[V]], %[[MAX]] : f32
// CHECK-NEXT:          %[[FIRST:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : i64
// CHECK-NEXT:          %[[HIT:.+]] = arith.andi %[[EQ]], %[[FIRST]] : i1
// CHECK-NEXT:          %[[WH:.+]] = arith.muli %[[w]], %[[H]] : index
// CHECK-NEXT:          %{{.+}} = arith.addi %[[WH]], %[[h]] : index
// CHECK:               arith.select %[[HIT]]
// CHECK:           memref.store %[[IDX]], %i[%[[n]], %[[c]], %[[oh]], %[[ow]]] : memref<1x2x2x2xi64>
