// RUN: pd-opt %s --pd-fuse-elementwise-chains --split-input-file | FileCheck %s

// Llama's SiLU gate, x * sigmoid(x) * up: three ops, one pass. Registers:
// x = 0, up = 1; sigmoid(x) -> 2 (unary kind 6), x * r2 -> 3 (binary mul
// = 2), r3 * up -> 4. The root's op id stays; the absorbed ops' gradient
// names it.
// CHECK-LABEL: func.func @silu_gate
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[U:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = pd.fused_elementwise %[[X]], %[[U]] {pd.op_id = 3 : i64, periods = array<i64: 32, 32>, program = array<i64: 1, 6, 2, 0, 0, 0, 2, 3, 0, 2, 0, 2, 4, 3, 1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[G:.*]] = pd.scale %[[Y]], 2.000000e+00 {pd.grad_of = 3 : i64}
// CHECK-NEXT: return %[[Y]], %[[G]]
func.func @silu_gate(%x: tensor<4x8xf32>, %u: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = pd.sigmoid %x {pd.op_id = 1 : i64} : tensor<4x8xf32>
  %g = pd.mul %x, %s {pd.op_id = 2 : i64} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = pd.mul %g, %u {pd.op_id = 3 : i64} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %d = pd.scale %y, 2.0 {pd.grad_of = 2 : i64} : tensor<4x8xf32>
  return %y, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Broadcast inputs (a bias over the rows: period 8; a scalar parameter:
// period 1), a scalar constant as an immediate (0.5 = bits 1056964608),
// scale and relu.
// CHECK-LABEL: func.func @broadcasts
// CHECK-NEXT: %[[Y:.*]] = pd.fused_elementwise %arg0, %arg1, %arg2 {periods = array<i64: 32, 8, 1>, program = array<i64: 0, 0, 3, 0, 1, 2, 0, 4, 1056964608, 0, 0, 2, 5, 3, 4, 0, 1, 6, 5, 2, 2, 0, 7, 1073741824, 0, 0, 2, 8, 6, 7, 3, 0, 9, 8, 0>} : (tensor<4x8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @broadcasts(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  %half = pd.constant dense<5.000000e-01> : tensor<f32>
  %a = pd.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %m = pd.mul %a, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %d = pd.sub %m, %s : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xf32>
  %c = pd.scale %d, 2.0 : tensor<4x8xf32>
  %r = pd.relu %c : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Not fused: an intermediate read twice (it ends the tree: two trees of
// one op each stay as they are), a forward op under a gradient op, a
// broadcast that is not over trailing dims.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: pd.fused_elementwise
func.func @left_alone(%x: tensor<4x8xf32>, %col: tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = pd.exp %x : tensor<4x8xf32>
  %t = pd.mul %e, %e : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %f = pd.neg %x {pd.op_id = 1 : i64} : tensor<4x8xf32>
  %g = pd.exp %f {pd.grad_of = 1 : i64} : tensor<4x8xf32>
  %k = pd.add %x, %col : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %l = pd.tanh %k : tensor<4x8xf32>
  return %t, %g, %l : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Five inputs exceed the kernel's four: the largest subtree with four
// fuses and the root stays.
// CHECK-LABEL: func.func @five_inputs
// CHECK-NEXT: %[[F:.*]] = pd.fused_elementwise %arg0, %arg1, %arg2, %arg3
// CHECK-NEXT: %[[R:.*]] = pd.mul %[[F]], %arg4
// CHECK-NEXT: return %[[R]]
func.func @five_inputs(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>, %d: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s1 = pd.add %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s2 = pd.add %c, %d : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s3 = pd.mul %s1, %s2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s4 = pd.mul %s3, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %s4 : tensor<4x8xf32>
}
