// RUN: onnxc-opt %s -p convert-krnl-to-loops --split-input-file --verify-diagnostics | filecheck %s

// Schedules that the verifiers reject before any lowering.

%i = krnl.define_loops 1
krnl.iterate(%i) with (%i) bounds [0] to [4] {
^bb0(%iv: index):
  krnl.yield
}
krnl.iterate(%i) with (%i) bounds [0] to [4] {
^bb0(%iv: index):
  krnl.yield
}
// CHECK: krnl.iterate: a loop is used by more than one krnl.iterate

// -----

%i = krnl.define_loops 1
%io, %ii = krnl.block %i 4
krnl.iterate(%i) with (%i) bounds [0] to [16] {
^bb0(%iv: index):
  krnl.yield
}
// CHECK: krnl.iterate: optimized loop 0 is blocked; iterate the loops krnl.block made of it

// -----

%i = krnl.define_loops 1
%io, %ii = krnl.block %i 4
krnl.iterate(%io) with (%i) bounds [0] to [16] {
^bb0(%iv: index):
  krnl.yield
}
// CHECK: krnl.iterate: the optimized loops must be exactly the leaves of the original loops' blocks

// -----

%i = krnl.define_loops 1
%io, %ii = krnl.block %i 4
krnl.permute(%io, %ii) [1, 0]
krnl.iterate(%io, %ii) with (%i) bounds [0] to [16] {
^bb0(%iv: index):
  krnl.yield
}
// CHECK: krnl.iterate: the inner loop of a block must be nested inside its outer loop

// -----

%i = krnl.define_loops 1
%io, %ii = krnl.block %i 4
%io2, %ii2 = krnl.block %i 8
// CHECK: krnl.block: a loop can be blocked only once

// -----

%i = krnl.define_loops 1
%io, %ii = krnl.block %i 0
// CHECK: krnl.block: tile size must be positive

// -----

%i, %j = krnl.define_loops 2
krnl.permute(%i, %j) [1, 0]
krnl.permute(%i, %j) [0, 1]
// CHECK: krnl.permute: a loop can be permuted by only one krnl.permute

// -----

%i, %j = krnl.define_loops 2
krnl.permute(%i, %j) [1, 1]
// CHECK: krnl.permute: map must be a permutation of the loops

// -----

%i = krnl.define_loops 1
%j = krnl.define_loops 1
krnl.permute(%i, %j) [1, 0]
krnl.iterate(%i) with (%i) bounds [0] to [4] {
^bb0(%iv: index):
  krnl.yield
}
krnl.iterate(%j) with (%j) bounds [0] to [4] {
^bb0(%jv: index):
  krnl.yield
}
// CHECK: krnl.permute: lists loops that its krnl.iterate does not iterate

// -----

%i = krnl.define_loops 1
%io, %ii = krnl.block %i 4
krnl.iterate(%ii) with (%ii) bounds [0] to [4] {
^bb0(%iv: index):
  krnl.yield
}
// CHECK: krnl.iterate: original loops must come from krnl.define_loops

// -----

%i = krnl.define_loops 1
krnl.iterate(%i) with (%i) bounds [0] to [4, 5] {
^bb0(%iv: index):
  krnl.yield
}
// CHECK: krnl.iterate: one lower and upper bound per original loop

// -----

%i = krnl.define_loops 1
krnl.iterate(%i) with (%i) bounds [0] to [4] {
^bb0(%iv: index):
  %c = arith.constant 0 : index
}
// CHECK: Operation arith.constant terminates block in single-block region but is not a terminator

// -----

func.func @f() {
  krnl.yield
}
// CHECK: 'krnl.yield' expects parent op 'krnl.iterate'
