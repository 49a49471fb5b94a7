// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Conv with padding and bias, weights from an input (constant weights take
// the GEMM kernel, see conv-gemm.mlir): a krnl nest over
// (n, m, oh); each output row is set to the bias, then for each (c, kh, kw) one
// weight scales an input row into it. The kh range and the row range are
// clipped to what reads the input, so no loop has a branch. The output goes
// straight into %y.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
    %b = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %y = "onnx.Conv"(%x, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("conv0")
    func.return %y : tensor<1x4x8x8xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>) {
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C8:.+]] = arith.constant 8 : index
// CHECK:         %[[B:.+]] = krnl.global {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>} : memref<4xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         %[[N:.+]], %[[M:.+]], %[[OH:.+]] = krnl.define_loops 3
// CHECK-NEXT:    krnl.iterate(%[[N]], %[[M]], %[[OH]]) with (%[[N]], %[[M]], %[[OH]]) bounds [0, 0, 0] to [1, 4, 8] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[m:.+]]: index, %[[oh:.+]]: index):
// CHECK-NEXT:      %[[BIAS:.+]] = memref.load %[[B]][%[[m]]] : memref<4xf32>
// CHECK-NEXT:      scf.for %[[ow:.+]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT:        memref.store %[[BIAS]], %y[%[[n]], %[[m]], %[[oh]], %[[ow]]] : memref<1x4x8x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[H0:.+]] = arith.subi %[[oh]], %[[C1]] : index
// CHECK-NEXT:      %[[HB:.+]] = arith.subi %[[C0]], %[[H0]] : index
// CHECK-NEXT:      %[[HLO:.+]] = arith.maxsi %[[HB]], %[[C0]] : index
// CHECK-NEXT:      %[[HE:.+]] = arith.subi %[[C8]], %[[H0]] : index
// CHECK-NEXT:      %[[HE0:.+]] = arith.maxsi %[[HE]], %[[C0]] : index
// CHECK-NEXT:      %[[HHI:.+]] = arith.minsi %[[HE0]], %[[C3]] : index
// CHECK-NEXT:      scf.for %[[c:.+]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT:        scf.for %[[kh:.+]] = %[[HLO]] to %[[HHI]] step %[[C1]] {
// CHECK-NEXT:          scf.for %[[kw:.+]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT:            %[[IH:.+]] = arith.addi %[[H0]], %[[kh]] : index
// CHECK-NEXT:            %[[WT:.+]] = memref.load %w[%[[m]], %[[c]], %[[kh]], %[[kw]]] : memref<4x3x3x3xf32>
// CHECK-NEXT:            %[[SHIFT:.+]] = arith.subi %[[C1]], %[[kw]] : index
// CHECK-NEXT:            %[[S0:.+]] = arith.maxsi %[[SHIFT]], %[[C0]] : index
// CHECK-NEXT:            %[[REACH:.+]] = arith.addi %[[SHIFT]], %[[C8]] : index
// CHECK-NEXT:            %[[R0:.+]] = arith.maxsi %[[REACH]], %[[C0]] : index
// CHECK-NEXT:            %[[HI:.+]] = arith.minsi %[[R0]], %[[C8]] : index
// CHECK-NEXT:            scf.for %[[ow:.+]] = %[[S0]] to %[[HI]] step %[[C1]] {
// CHECK-NEXT:              %[[IW:.+]] = arith.subi %[[ow]], %[[SHIFT]] : index
// CHECK-NEXT:              %[[PIX:.+]] = memref.load %x[%[[n]], %[[c]], %[[IH]], %[[IW]]] : memref<1x3x8x8xf32>
// CHECK-NEXT:              %[[ACC:.+]] = memref.load %y[%[[n]], %[[m]], %[[oh]], %[[ow]]] : memref<1x4x8x8xf32>
// CHECK-NEXT:              %[[PROD:.+]] = arith.mulf %[[PIX]], %[[WT]] : f32
// CHECK-NEXT:              %[[SUM:.+]] = arith.addf %[[ACC]], %[[PROD]] : f32
// CHECK-NEXT:              memref.store %[[SUM]], %y[%[[n]], %[[m]], %[[oh]], %[[ow]]] : memref<1x4x8x8xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      krnl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  krnl.entry_point {func = @main_graph, input_names = ["x", "w"], output_names = ["y"]}

// -----

// No padding, stride 2, dilation 2: every window fits, so all ranges are
// constants; output column o reads input column o*2 + kw*2. Groups: the first
// input channel of the group is m / (M/group) * (C/group).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x2x2xf32>) -> tensor<1x6x4x4xf32> {
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {strides = [2, 2], dilations = [2, 2], group = 2} : (tensor<1x4x9x9xf32>, tensor<6x2x2x2xf32>) -> tensor<1x6x4x4xf32>
    func.return %y : tensor<1x6x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK:         ^bb0(%[[n:.+]]: index, %[[m:.+]]: index, %[[oh:.+]]: index):
// CHECK:           %[[G:.+]] = arith.divsi %[[m]], %[[C3]] : index
// CHECK-NEXT:      %[[FIRST:.+]] = arith.muli %[[G]], %[[C2]] : index
// CHECK-NEXT:      %[[H0:.+]] = arith.muli %[[oh]], %[[C2]] : index
// CHECK-NOT:       arith.maxsi
// CHECK-NEXT:      scf.for %[[c:.+]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK-NEXT:        scf.for %[[kh:.+]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK-NEXT:          scf.for %[[kw:.+]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK-NEXT:            %[[IC:.+]] = arith.addi %[[FIRST]], %[[c]] : index
// CHECK-NEXT:            %[[DH:.+]] = arith.muli %[[kh]], %[[C2]] : index
// CHECK-NEXT:            %[[IH:.+]] = arith.addi %[[H0]], %[[DH]] : index
// CHECK-NEXT:            memref.load %w[%[[m]], %[[c]], %[[kh]], %[[kw]]]
// CHECK-NEXT:            %[[DW:.+]] = arith.muli %[[kw]], %[[C2]] : index
// CHECK-NEXT:            %[[SHIFT:.+]] = arith.subi %[[C0]], %[[DW]] : index
// CHECK-NEXT:            scf.for %[[ow:.+]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT:              %[[W2:.+]] = arith.muli %[[ow]], %[[C2]] : index
// CHECK-NEXT:              %[[IW:.+]] = arith.subi %[[W2]], %[[SHIFT]] : index
// CHECK-NEXT:              memref.load %x[%[[n]], %[[IC]], %[[IH]], %[[IW]]]

// -----

// auto_pad SAME_LOWER puts the odd padding at the beginning: total 3 = 2 + 1.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x7x7xf32>, %w: tensor<1x2x4x4xf32>) -> tensor<1x1x7x7xf32> {
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {auto_pad = "SAME_LOWER"} : (tensor<1x2x7x7xf32>, tensor<1x2x4x4xf32>) -> tensor<1x1x7x7xf32>
    func.return %y : tensor<1x1x7x7xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[C2:.+]] = arith.constant 2 : index
// CHECK:         ^bb0(%{{.+}}: index, %{{.+}}: index, %[[oh:.+]]: index):
// CHECK:           arith.subi %[[oh]], %[[C2]] : index
// CHECK:             %[[SHIFT:.+]] = arith.subi %[[C2]], %[[kw:.+]] : index

// -----

// Depthwise 1x1, stride 1: shifted rows (windows.ShiftedRows) with no padding
// and no column to drop, so the planes are views of %x and %y as [1, 3, 16]:
// per (n, m), one unit-stride loop over the 16 points.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x3x4x4xf32>, %w: tensor<3x1x1x1xf32>) -> tensor<1x3x4x4xf32> {
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 3} : (tensor<1x3x4x4xf32>, tensor<3x1x1x1xf32>) -> tensor<1x3x4x4xf32>
    func.return %y : tensor<1x3x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK:         %[[X:.+]] = krnl.view %x[0 : i64] : memref<1x3x4x4xf32> to memref<1x3x16xf32>
// CHECK-NEXT:    %[[Y:.+]] = krnl.view %y[0 : i64] : memref<1x3x4x4xf32> to memref<1x3x16xf32>
// CHECK:         ^bb0(%[[n:.+]]: index, %[[m:.+]]: index):
// CHECK-NEXT:      %[[WT:.+]] = memref.load %w[%[[m]], %[[C0:.+]], %[[C0]], %[[C0]]] : memref<3x1x1x1xf32>
// CHECK-NEXT:      scf.for %[[q:.+]] = %[[C0]] to %[[C16]] step %{{.+}} {
// CHECK-NEXT:        %[[PIX:.+]] = memref.load %[[X]][%[[n]], %[[m]], %[[q]]] : memref<1x3x16xf32>
// CHECK-NEXT:        %[[SUM:.+]] = math.fma %[[PIX]], %[[WT]], %{{.+}} : f32
// CHECK-NEXT:        memref.store %[[SUM]], %[[Y]][%[[n]], %[[m]], %[[q]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      krnl.yield

// -----

// Depthwise 3x3, pads 1, two output channels per input channel: the input is
// zero-padded into 6x6 planes (plus 15 zeros); outputs 2g and 2g + 1 of input channel g
// are computed together at q in [0, 32), the 3*6 + 4 = 22 real columns rounded up to a
// multiple of 16 (no scalar remainder), each the bias plus nine taps at q + ky*6 + kx,
// the two sharing each read, into wide rows whose first 4 columns of each 6 a last nest
// keeps in %y.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x4x4xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
    %y = "onnx.Conv"(%x, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {group = 2, pads = [1, 1, 1, 1]} : (tensor<1x2x4x4xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
    func.return %y : tensor<1x4x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C14:.+]] = arith.constant 14 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK:         %[[PLANES:.+]] = memref.alloc() : memref<1x2x51xf32>
// CHECK:         memref.store %{{.+}}, %[[PLANES]]
// CHECK:         memref.load %x
// CHECK:         memref.store %{{.+}}, %[[PLANES]]
// CHECK:         %[[WIDE:.+]] = memref.alloc() : memref<1x4x32xf32>
// CHECK:         ^bb0(%[[n:.+]]: index, %[[g:.+]]: index):
// CHECK-NEXT:      %[[M0:.+]] = arith.muli %[[g]], %[[C2]] : index
// CHECK-NEXT:      %[[M1:.+]] = arith.addi %[[M0]], %{{.+}} : index
// CHECK-COUNT-9:   memref.load %w[%[[M0]]
// CHECK-COUNT-9:   memref.load %w[%[[M1]]
// CHECK-NEXT:      memref.load %b[%[[M0]]] : memref<4xf32>
// CHECK-NEXT:      memref.load %b[%[[M1]]] : memref<4xf32>
// CHECK-NEXT:      scf.for %[[q:.+]] = %{{.+}} to %[[C32]] step %{{.+}} {
// CHECK:             %[[LAST:.+]] = arith.addi %[[q]], %[[C14]] : index
// CHECK-NEXT:        memref.load %[[PLANES]][%[[n]], %[[g]], %[[LAST]]] : memref<1x2x51xf32>
// CHECK:             memref.store %{{.+}}, %[[WIDE]][%[[n]], %[[M0]], %[[q]]] : memref<1x4x32xf32>
// CHECK-NEXT:        memref.store %{{.+}}, %[[WIDE]][%[[n]], %[[M1]], %[[q]]] : memref<1x4x32xf32>
// CHECK:         memref.load %[[WIDE]]
// CHECK-NEXT:    memref.store %{{.+}}, %y

// -----

// Depthwise 3x3 at stride 2, pads 1: the 8x8 padded image is split into four 4x4 phase
// planes (even/odd rows x even/odd columns, written by one nest), so that every tap reads
// at unit stride: tap (ky, kx) reads phase (ky % 2, kx % 2) at q + (ky / 2)*4 + kx / 2,
// the last one (2, 2) phase 0 at q + 5. Wide rows of 4, 3*4 - 1 = 11 columns, computed
// as 16 (zeros after the planes).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x6x6xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 2, pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x3x3xf32>
    func.return %y : tensor<1x2x3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C5:.+]] = arith.constant 5 : index
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK:         %[[PLANES:.+]] = memref.alloc() : memref<1x2x79xf32>
// CHECK-COUNT-4: memref.load %x
// CHECK:         %[[WIDE:.+]] = memref.alloc() : memref<1x2x16xf32>
// CHECK:         scf.for %[[q:.+]] = %{{.+}} to %[[C16]] step %{{.+}} {
// CHECK:             %[[LAST:.+]] = arith.addi %[[q]], %[[C5]] : index
// CHECK-NEXT:        memref.load %[[PLANES]][%{{.+}}, %{{.+}}, %[[LAST]]] : memref<1x2x79xf32>
// CHECK:             memref.store %{{.+}}, %[[WIDE]][%{{.+}}, %{{.+}}, %[[q]]] : memref<1x2x16xf32>
// CHECK:         memref.load %[[WIDE]]
// CHECK-NEXT:    memref.store %{{.+}}, %y

// -----

// float16: the sums accumulate in a float32 buffer (inputs extended as loaded), which one
// elementwise nest rounds into the output at the end.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x6xf16>, %w: tensor<2x1x3xf16>) -> tensor<1x2x4xf16> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 2 : i64} : (tensor<1x2x6xf16>, tensor<2x1x3xf16>) -> tensor<1x2x4xf16> loc("conv16")
    func.return %y : tensor<1x2x4xf16>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x6xf16>, %w: memref<2x1x3xf16>, %y: memref<1x2x4xf16>) {
// CHECK:         %[[ACC:.+]] = memref.alloc() : memref<1x2x4xf32>
// CHECK:         %[[W:.+]] = memref.load %w[{{.*}}] : memref<2x1x3xf16>
// CHECK-NEXT:    %[[WF:.+]] = arith.extf %[[W]] : f16 to f32
// CHECK:         %[[X:.+]] = memref.load %x[{{.*}}] : memref<1x2x6xf16>
// CHECK-NEXT:    %[[XF:.+]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:    %[[P:.+]] = memref.load %[[ACC]][{{.*}}] : memref<1x2x4xf32>
// CHECK-NEXT:    %[[M:.+]] = arith.mulf %[[XF]], %[[WF]] : f32
// CHECK-NEXT:    %[[S:.+]] = arith.addf %[[P]], %[[M]] : f32
// CHECK-NEXT:    memref.store %[[S]], %[[ACC]][{{.*}}] : memref<1x2x4xf32>
// CHECK:         %[[V:.+]] = memref.load %[[ACC]][{{.*}}] : memref<1x2x4xf32>
// CHECK-NEXT:    %[[R:.+]] = arith.truncf %[[V]] : f32 to f16
// CHECK-NEXT:    memref.store %[[R]], %y[{{.*}}] : memref<1x2x4xf16>

// -----

// Grouped 3x3 (ResNeXt-style), two groups of 4 input and 4 output channels, pads 1:
// the shifted-rows path of depthwise convs. Per (n, group g), outputs 4g .. 4g + 3
// are computed together, each summing 4 x 9 taps of input channels 4g .. 4g + 3
// in registers, each read shared by the four sums.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x8x5x5xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32> {
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 2, pads = [1, 1, 1, 1]} : (tensor<1x8x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32>
    func.return %y : tensor<1x8x5x5xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK:         %[[PLANES:.+]] = memref.alloc() : memref<1x8x64xf32>
// CHECK:         memref.alloc() : memref<1x8x48xf32>
// CHECK:         ^bb0(%[[n:[0-9]+]]: index, %[[g:[0-9]+]]: index):
// CHECK-NEXT:      %[[M0:.+]] = arith.muli %[[g]], %[[C4]] : index
// CHECK-COUNT-3:   arith.addi %[[M0]]
// CHECK-NEXT:      %[[I0:.+]] = arith.muli %[[g]], %[[C4]] : index
// CHECK-COUNT-3:   arith.addi %[[I0]]
// CHECK-COUNT-144: memref.load %w
// CHECK:           scf.for %[[q:.+]] = {{.+}} {
// CHECK-NEXT:        memref.load %[[PLANES]][%[[n]], %[[I0]], %[[q]]] : memref<1x8x64xf32>
// CHECK-COUNT-4:     math.fma
// CHECK-COUNT-35:    memref.load %[[PLANES]]
// CHECK-COUNT-4:     memref.store %{{.+}}, %{{.+}}[%[[n]], %{{.+}}, %[[q]]] : memref<1x8x48xf32>

// -----

// Depthwise 3x3 at stride 2, pads 1, output rows of 20: read straight from x, no phase planes.
// The outputs split into runs whose windows read the same taps: row 0 (its top taps fall in the
// padding) and rows 1..19, column 0 and columns 1..19; four regions, each summing its taps by
// fused multiply-adds, the inside one along the row at stride 2.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x40x40xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x20x20xf32> {
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 2 : i64, strides = [2, 2], pads = [1, 1, 1, 1], kernel_shape = [3, 3]} : (tensor<1x2x40x40xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x20x20xf32>
    func.return %y : tensor<1x2x20x20xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x40x40xf32>, %w: memref<2x1x3x3xf32>, %y: memref<1x2x20x20xf32>) {
// CHECK-NOT:     memref.alloc
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK-COUNT-4:   math.fma
// CHECK:           memref.store %{{.+}}, %y[%{{.+}}, %{{.+}}, %[[C0:.+]], %[[C0]]]
// CHECK:           scf.for
// CHECK-COUNT-6:     math.fma
// CHECK:           scf.for
// CHECK-COUNT-6:     math.fma
// CHECK:           scf.for %[[OY:.+]] = %[[LOW:.+]] to %[[HIGH:.+]] step
// CHECK-NEXT:        scf.for %[[OX:.+]] = %[[LOW]] to %[[HIGH]] step
// CHECK-COUNT-9:       math.fma
// CHECK:               memref.store %{{.+}}, %y[%{{.+}}, %{{.+}}, %[[OY]], %[[OX]]]
// CHECK-NOT:     krnl.iterate

// -----

// Depthwise 5x5 (more than 9 taps), pads 2, over 9x12: padded rows of 16 columns, computed
// 4 output rows at a time (ROW_BLOCK) in 16-column runs, the last block starting at row 5
// (min(4 * block, 9 - 4)). The 8 plane rows under a block are each loaded once, 5 taps a
// row: 40 loads for the 4 x 25 fused multiply-adds, then 4 stores a row of 16 apart into
// the wide rows of 8 x 16 + 16 columns (the planes: 13 x 16 plus 21 zeros of slack).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x9x12xf32>, %w: tensor<2x1x5x5xf32>) -> tensor<1x2x9x12xf32> {
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 2, pads = [2, 2, 2, 2]} : (tensor<1x2x9x12xf32>, tensor<2x1x5x5xf32>) -> tensor<1x2x9x12xf32>
    func.return %y : tensor<1x2x9x12xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C5:.+]] = arith.constant 5 : index
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK:         %[[PLANES:.+]] = memref.alloc() : memref<1x2x229xf32>
// CHECK:         %[[WIDE:.+]] = memref.alloc() : memref<1x2x144xf32>
// CHECK:         ^bb0(%[[n:[0-9]+]]: index, %[[g:[0-9]+]]: index):
// CHECK-COUNT-25:  memref.load %w
// CHECK-NEXT:      scf.for %[[B:.+]] = %{{.+}} to %[[C3]] step
// CHECK-NEXT:        scf.for %[[Q:.+]] = %{{.+}} to %[[C16]] step
// CHECK-NEXT:          %[[R4:.+]] = arith.muli %[[B]], %[[C4]] : index
// CHECK-NEXT:          %[[R:.+]] = arith.minsi %[[R4]], %[[C5]] : index
// CHECK-NEXT:          %[[RW:.+]] = arith.muli %[[R]], %[[C16]] : index
// CHECK-NEXT:          %[[FIRST:.+]] = arith.addi %[[RW]], %[[Q]] : index
// CHECK-NEXT:          %[[V:.+]] = memref.load %[[PLANES]][%[[n]], %[[g]], %[[FIRST]]] : memref<1x2x229xf32>
// CHECK-NEXT:          math.fma %[[V]]
// CHECK-NOT:           memref.load %[[PLANES]][%[[n]], %[[g]], %[[FIRST]]]
// CHECK-COUNT-39:      memref.load %[[PLANES]]
// CHECK-NOT:           memref.load %[[PLANES]]
// CHECK:               memref.store %{{.+}}, %[[WIDE]][%[[n]], %[[g]], %[[FIRST]]] : memref<1x2x144xf32>
// CHECK-COUNT-3:       memref.store %{{.+}}, %[[WIDE]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
