// RUN: pd-opt %s --pd-fold-slices-into-matmul --split-input-file | FileCheck %s

// Attention after pd-fold-transposes-into-matmul: Q, K and V sliced out of
// the fused projection [2, 8, 192] and split into 4 heads of 16. Every
// operand reads its third of one reshape [2, 8, 3, 4, 16] in place (the
// perms stay); the slices and their reshapes disappear.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[QKV:.*]]: tensor<2x8x192xf32>)
// CHECK-NEXT: %[[R:.*]] = pd.reshape %[[QKV]] : tensor<2x8x192xf32> -> tensor<2x8x3x4x16xf32>
// CHECK-NEXT: %[[S:.*]] = pd.batch_matmul %[[R]], %[[R]] {lhs_perm = array<i64: 0, 2, 1, 3>, lhs_select = array<i64: 2, 0>, rhs_perm = array<i64: 0, 2, 3, 1>, rhs_select = array<i64: 2, 1>} : tensor<2x8x3x4x16xf32>, tensor<2x8x3x4x16xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT: %[[O:.*]] = pd.batch_matmul %[[S]], %[[R]] {result_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 1, 3>, rhs_select = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<2x8x3x4x16xf32> -> tensor<2x8x4x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @attention(%qkv: tensor<2x8x192xf32>) -> tensor<2x8x4x16xf32> {
  %q = pd.slice %qkv {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x192xf32> -> tensor<2x8x64xf32>
  %k = pd.slice %qkv {starts = array<i64: 0, 0, 64>, steps = array<i64: 1, 1, 1>} : tensor<2x8x192xf32> -> tensor<2x8x64xf32>
  %v = pd.slice %qkv {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<2x8x192xf32> -> tensor<2x8x64xf32>
  %qh = pd.reshape %q : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %kh = pd.reshape %k : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %vh = pd.reshape %v : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %s = pd.batch_matmul %qh, %kh {lhs_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32> -> tensor<2x4x8x8xf32>
  %o = pd.batch_matmul %s, %vh {result_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x8xf32>, tensor<2x8x4x16xf32> -> tensor<2x8x4x16xf32>
  return %o : tensor<2x8x4x16xf32>
}

// -----

// A slice without a reshape after it (a rank-3 batch of matrices, parts
// along the batch axis), and a slice that something else also reads: the
// GEMM reads in place, the slice stays for its other user.
// CHECK-LABEL: func.func @whole_parts
// CHECK-SAME: (%[[X:.*]]: tensor<6x8x16xf32>, %[[Y:.*]]: tensor<2x16x8xf32>)
// CHECK-NEXT: %[[R:.*]] = pd.reshape %[[X]] : tensor<6x8x16xf32> -> tensor<3x2x8x16xf32>
// CHECK-NEXT: %[[A:.*]] = pd.slice %[[X]]
// CHECK-NEXT: %[[M:.*]] = pd.batch_matmul %[[R]], %[[Y]] {lhs_select = array<i64: 0, 1>} : tensor<3x2x8x16xf32>, tensor<2x16x8xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT: return %[[M]], %[[A]]
func.func @whole_parts(%x: tensor<6x8x16xf32>, %y: tensor<2x16x8xf32>) -> (tensor<2x8x8xf32>, tensor<2x8x16xf32>) {
  %a = pd.slice %x {starts = array<i64: 2, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<6x8x16xf32> -> tensor<2x8x16xf32>
  %m = pd.batch_matmul %a, %y : tensor<2x8x16xf32>, tensor<2x16x8xf32> -> tensor<2x8x8xf32>
  return %m, %a : tensor<2x8x8xf32>, tensor<2x8x16xf32>
}

// -----

// Not folded: a strided slice, a slice of two axes, a part that does not
// divide its axis (64 of 160), a start that is not a multiple of the part
// (32 of 64s), and a reshape that merges dims before the sliced axis.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-5: pd.slice
// CHECK-NOT: select
func.func @left_alone(%x: tensor<2x8x192xf32>, %z: tensor<2x8x160xf32>, %w: tensor<2x16x16xf32>) -> (tensor<2x8x8xf32>, tensor<2x4x4xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<16x4x4xf32>) {
  %a = pd.slice %x {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 3>} : tensor<2x8x192xf32> -> tensor<2x8x64xf32>
  %b = pd.slice %x {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x192xf32> -> tensor<2x4x64xf32>
  %c = pd.slice %z {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x160xf32> -> tensor<2x8x64xf32>
  %d = pd.slice %x {starts = array<i64: 0, 0, 32>, steps = array<i64: 1, 1, 1>} : tensor<2x8x192xf32> -> tensor<2x8x64xf32>
  %e = pd.slice %x {starts = array<i64: 0, 0, 64>, steps = array<i64: 1, 1, 1>} : tensor<2x8x192xf32> -> tensor<2x8x64xf32>
  %ma = pd.batch_matmul %a, %a {transpose_rhs} : tensor<2x8x64xf32>, tensor<2x8x64xf32> -> tensor<2x8x8xf32>
  %mb = pd.batch_matmul %b, %b {transpose_rhs} : tensor<2x4x64xf32>, tensor<2x4x64xf32> -> tensor<2x4x4xf32>
  %mc = pd.batch_matmul %c, %c {transpose_rhs} : tensor<2x8x64xf32>, tensor<2x8x64xf32> -> tensor<2x8x8xf32>
  %md = pd.batch_matmul %d, %d {transpose_rhs} : tensor<2x8x64xf32>, tensor<2x8x64xf32> -> tensor<2x8x8xf32>
  %er = pd.reshape %e : tensor<2x8x64xf32> -> tensor<16x4x16xf32>
  %me = pd.batch_matmul %er, %er {transpose_rhs} : tensor<16x4x16xf32>, tensor<16x4x16xf32> -> tensor<16x4x4xf32>
  return %ma, %mb, %mc, %md, %me : tensor<2x8x8xf32>, tensor<2x4x4xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<16x4x4xf32>
}

// -----

// After differentiation: the forward slice (op 1) folds into the forward
// matmul (op 3); the gradient op naming it now names op 3, so partitioning
// keeps it beside the matmul. The new reshape is a forward op with an id
// of its own (one past the largest).
// CHECK-LABEL: func.func @retag
// CHECK: %[[R:.*]] = pd.reshape %arg0 {pd.op_id = 4 : i64}
// CHECK: pd.batch_matmul %[[R]], %arg1 {lhs_select = array<i64: 2, 0>, pd.op_id = 3 : i64}
// CHECK: pd.concat %{{.*}}, %{{.*}} {axis = 2 : i64, pd.grad_of = 3 : i64}
func.func @retag(%qk: tensor<2x8x32xf32>, %k: tensor<2x16x8xf32>, %g: tensor<2x8x16xf32>) -> (tensor<2x8x8xf32>, tensor<2x8x32xf32>) {
  %q = pd.slice %qk {pd.op_id = 1 : i64, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x32xf32> -> tensor<2x8x16xf32>
  %s = pd.batch_matmul %q, %k {pd.op_id = 3 : i64} : tensor<2x8x16xf32>, tensor<2x16x8xf32> -> tensor<2x8x8xf32>
  %d = pd.concat %g, %g {axis = 2 : i64, pd.grad_of = 1 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x32xf32>
  return %s, %d : tensor<2x8x8xf32>, tensor<2x8x32xf32>
}
