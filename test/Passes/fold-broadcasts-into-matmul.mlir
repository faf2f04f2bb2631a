// RUN: pd-opt %s --pd-fold-broadcasts-into-matmul --split-input-file | FileCheck %s

// Grouped-query attention as Hugging Face's repeat_kv exports it (K and V
// [B, 2, T, D] copied to 4 heads), differentiated: the scores read K
// through K^T, P V reads V; backward dP = dO V^T and dQ = dS K read the
// copies, and dK^T = Q^T dS, dV = P^T dO are summed over each group. Every
// GEMM reads K and V themselves (rhs_groups) and dK, dV are the GEMMs'
// group sums (result_groups); no copy or sum is left. The K^T transpose
// moves onto K (pd-fold-transposes-into-matmul folds it): one transpose
// for both GEMMs that read it, a forward op with a fresh pd.op_id.
// CHECK-LABEL: func.func @grouped_query_attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x2x8x16xf32>, %[[V:.*]]: tensor<2x2x8x16xf32>, %[[DO:.*]]: tensor<2x4x8x16xf32>, %[[P:.*]]: tensor<2x4x8x8xf32>, %[[DS:.*]]: tensor<2x4x8x8xf32>)
// CHECK-NOT: pd.broadcast_to
// CHECK-NOT: pd.sum_to
// CHECK-DAG: %[[KT:.*]] = pd.transpose %[[K]] {pd.op_id = 9 : i64, perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x8x16xf32> -> tensor<2x2x16x8xf32>
// CHECK-DAG: %[[S:.*]] = pd.batch_matmul %[[Q]], %[[KT]] {pd.op_id = 4 : i64, rhs_groups = 2 : i64} : tensor<2x4x8x16xf32>, tensor<2x2x16x8xf32> -> tensor<2x4x8x8xf32>
// CHECK-DAG: %[[O:.*]] = pd.batch_matmul %[[P]], %[[V]] {pd.op_id = 8 : i64, rhs_groups = 2 : i64} : tensor<2x4x8x8xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-DAG: %[[DP:.*]] = pd.batch_matmul %[[DO]], %[[V]] {pd.grad_of = 8 : i64, rhs_groups = 2 : i64, transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x8xf32>
// CHECK-DAG: %[[DQ:.*]] = pd.batch_matmul %[[DS]], %[[KT]] {pd.grad_of = 4 : i64, rhs_groups = 2 : i64, transpose_rhs} : tensor<2x4x8x8xf32>, tensor<2x2x16x8xf32> -> tensor<2x4x8x16xf32>
// CHECK-DAG: %[[DKT:.*]] = pd.batch_matmul %[[Q]], %[[DS]] {pd.grad_of = 4 : i64, result_groups = 2 : i64, transpose_lhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32> -> tensor<2x2x16x8xf32>
// CHECK-DAG: %[[DK:.*]] = pd.transpose %[[DKT]] {pd.grad_of = 9 : i64, perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x16x8xf32> -> tensor<2x2x8x16xf32>
// CHECK-DAG: %[[DV:.*]] = pd.batch_matmul %[[P]], %[[DO]] {pd.grad_of = 8 : i64, result_groups = 2 : i64, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x2x8x16xf32>
// CHECK: return %[[S]], %[[O]], %[[DP]], %[[DQ]], %[[DK]], %[[DV]]
func.func @grouped_query_attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %do: tensor<2x4x8x16xf32>, %p: tensor<2x4x8x8xf32>, %ds: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) {
  %k5 = pd.reshape %k {pd.op_id = 0 : i64} : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %kb = pd.broadcast_to %k5 {pd.op_id = 1 : i64} : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %kr = pd.reshape %kb {pd.op_id = 2 : i64} : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %kt = pd.transpose %kr {pd.op_id = 3 : i64, perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = pd.batch_matmul %q, %kt {pd.op_id = 4 : i64} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %v5 = pd.reshape %v {pd.op_id = 5 : i64} : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %vb = pd.broadcast_to %v5 {pd.op_id = 6 : i64} : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %vr = pd.reshape %vb {pd.op_id = 7 : i64} : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %o = pd.batch_matmul %p, %vr {pd.op_id = 8 : i64} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %dp = pd.batch_matmul %do, %vr {pd.grad_of = 8 : i64, transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %dq = pd.batch_matmul %ds, %kt {pd.grad_of = 4 : i64, transpose_rhs} : tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x16xf32>
  %dkt = pd.batch_matmul %q, %ds {pd.grad_of = 4 : i64, transpose_lhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x16x8xf32>
  %dkr = pd.transpose %dkt {pd.grad_of = 3 : i64, perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x16x8xf32> -> tensor<2x4x8x16xf32>
  %dk6 = pd.reshape %dkr {pd.grad_of = 2 : i64} : tensor<2x4x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %dk5 = pd.sum_to %dk6 {pd.grad_of = 1 : i64} : tensor<2x2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %dk = pd.reshape %dk5 {pd.grad_of = 0 : i64} : tensor<2x2x1x8x16xf32> -> tensor<2x2x8x16xf32>
  %dvr = pd.batch_matmul %p, %do {pd.grad_of = 8 : i64, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %dv6 = pd.reshape %dvr {pd.grad_of = 7 : i64} : tensor<2x4x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %dv5 = pd.sum_to %dv6 {pd.grad_of = 6 : i64} : tensor<2x2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %dv = pd.reshape %dv5 {pd.grad_of = 5 : i64} : tensor<2x2x1x8x16xf32> -> tensor<2x2x8x16xf32>
  return %s, %o, %dp, %dq, %dk, %dv : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}

// -----

// The gradient ops that named the absorbed copies (here the sums' readers,
// which stay as they read another sum) name the GEMM that absorbed them.
// CHECK-LABEL: func.func @retagged
// CHECK: pd.batch_matmul %{{.*}}, %{{.*}} {pd.op_id = 4 : i64, rhs_groups = 2 : i64, transpose_rhs}
// CHECK: pd.neg %{{.*}} {pd.grad_of = 4 : i64}
func.func @retagged(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %g: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %k5 = pd.reshape %k {pd.op_id = 0 : i64} : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %kb = pd.broadcast_to %k5 {pd.op_id = 1 : i64} : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %kr = pd.reshape %kb {pd.op_id = 2 : i64} : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %s = pd.batch_matmul %q, %kr {pd.op_id = 4 : i64, transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %n = pd.neg %g {pd.grad_of = 1 : i64} : tensor<2x4x8x8xf32>
  return %s, %n : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}

// -----

// Left alone: a broadcast of another dim than the groups (the batch), a
// copy read as a whole too (the reshape's other reader keeps the copy,
// the GEMM still reads K), a sum of the groups of a GEMM read elsewhere
// too, and a sum over another dim.
// CHECK-LABEL: func.func @left_alone
// CHECK: %[[B:.*]] = pd.broadcast_to %{{.*}} : tensor<1x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
// CHECK: pd.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs}
// CHECK: pd.batch_matmul %{{.*}}, %{{.*}} {rhs_groups = 2 : i64, transpose_rhs}
// CHECK: pd.sum_to
// CHECK: pd.sum_to
func.func @left_alone(%q: tensor<2x4x8x16xf32>, %k1: tensor<1x2x1x8x16xf32>, %k: tensor<2x2x8x16xf32>, %ds: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x2x1x8x16xf32>, tensor<2x4x8x16xf32>, tensor<1x2x2x8x16xf32>) {
  %kb = pd.broadcast_to %k1 : tensor<1x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %kr = pd.reshape %kb : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %s = pd.batch_matmul %q, %kr {transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %k5 = pd.reshape %k : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %kb2 = pd.broadcast_to %k5 : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %kr2 = pd.reshape %kb2 : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %s2 = pd.batch_matmul %q, %kr2 {transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %d = pd.batch_matmul %ds, %q : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %d6 = pd.reshape %d : tensor<2x4x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %d5 = pd.sum_to %d6 : tensor<2x2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %e = pd.batch_matmul %ds, %q : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %e6 = pd.reshape %e : tensor<2x4x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %e5 = pd.sum_to %e6 : tensor<2x2x2x8x16xf32> -> tensor<1x2x2x8x16xf32>
  return %s, %s2, %kr2, %d5, %d, %e5 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x2x1x8x16xf32>, tensor<2x4x8x16xf32>, tensor<1x2x2x8x16xf32>
}
