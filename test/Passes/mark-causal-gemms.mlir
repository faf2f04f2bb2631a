// RUN: pd-opt %s --pd-mark-causal-gemms=min-result-rows=1 --split-input-file | FileCheck %s
// RUN: pd-opt %s --pd-mark-causal-gemms --split-input-file | FileCheck %s --check-prefix=DEFAULT

// Causal attention forward and backward as pd-autodiff and the fold passes
// leave it (Q, K, V, dO as [B, H, T, D]): the scores and dP GEMMs compute
// only their lower triangles, the GEMMs that multiply P or dS from the
// left skip the blocks above the diagonal, those that multiply P^T or
// dS^T the blocks below, and the softmax gradient reads dP's lower
// triangle. Every reader of P and of dS skips the blocks above the
// diagonal, so the softmax and its gradient write each row only to the
// end of its diagonal block.
// CHECK-LABEL: func.func @attention
// CHECK: %[[S:.*]] = pd.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs, triangle = #pd.triangle<result_lower>}
// CHECK: %[[P:.*]] = pd.masked_softmax %[[S]], %{{.*}} {diagonal_blocks, scale = 2.500000e-01 : f32}
// CHECK: pd.batch_matmul %[[P]], %{{.*}} {triangle = #pd.triangle<lhs_lower>}
// CHECK: %[[DP:.*]] = pd.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs, triangle = #pd.triangle<result_lower>}
// CHECK: %[[DS:.*]] = pd.masked_softmax_grad %[[DP]], %[[P]] {causal, diagonal_blocks, scale = 2.500000e-01 : f32}
// CHECK: pd.batch_matmul %[[P]], %{{.*}} {transpose_lhs, triangle = #pd.triangle<lhs_upper>}
// CHECK: pd.batch_matmul %[[DS]], %{{.*}} {triangle = #pd.triangle<lhs_lower>}
// CHECK: pd.batch_matmul %[[DS]], %{{.*}} {transpose_lhs, triangle = #pd.triangle<lhs_upper>}

// By default [4, 4] scores are too small for the scores and dP GEMMs to
// gain from skipping blocks (min-result-rows = 64): they stay dense, the
// rest is marked as above.
// DEFAULT-LABEL: func.func @attention
// DEFAULT: %[[S:.*]] = pd.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs} :
// DEFAULT: %[[P:.*]] = pd.masked_softmax %[[S]], %{{.*}} {diagonal_blocks, scale = 2.500000e-01 : f32}
// DEFAULT: pd.batch_matmul %[[P]], %{{.*}} {triangle = #pd.triangle<lhs_lower>}
// DEFAULT: %[[DP:.*]] = pd.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs} :
// DEFAULT: pd.masked_softmax_grad %[[DP]], %[[P]] {causal, diagonal_blocks, scale = 2.500000e-01 : f32}
func.func @attention(%q: tensor<2x3x4x16xf32>, %k: tensor<2x3x4x16xf32>, %v: tensor<2x3x4x16xf32>, %do: tensor<2x3x4x16xf32>) -> (tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>) {
  %mask = pd.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %s = pd.batch_matmul %q, %k {transpose_rhs} : tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x4xf32>
  %p = pd.masked_softmax %s, %mask {scale = 2.500000e-01 : f32} : tensor<2x3x4x4xf32>, tensor<4x4xi1>
  %o = pd.batch_matmul %p, %v : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %dp = pd.batch_matmul %do, %v {transpose_rhs} : tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x4xf32>
  %ds = pd.masked_softmax_grad %dp, %p {scale = 2.500000e-01 : f32} : tensor<2x3x4x4xf32>
  %dv = pd.batch_matmul %p, %do {transpose_lhs} : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %dq = pd.batch_matmul %ds, %k : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %dk = pd.batch_matmul %ds, %q {transpose_lhs} : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  return %o, %dv, %dq, %dk : tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>
}

// -----

// The GPT's layout after pd-fold-slices-into-matmul: Q and K read in
// place from the QKV projection [B, T, 3, H, D], O written as [B, T, H, D]
// through result_perm. The perms move batch dims only on the P side, so
// the marks apply.
// CHECK-LABEL: func.func @in_place_heads
// CHECK: pd.batch_matmul {{.*}}triangle = #pd.triangle<result_lower>
// CHECK: pd.batch_matmul {{.*}}result_perm = array<i64: 0, 2, 1, 3>{{.*}}triangle = #pd.triangle<lhs_lower>
func.func @in_place_heads(%qkv: tensor<2x4x3x2x8xf32>) -> tensor<2x4x2x8xf32> {
  %mask = pd.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %s = pd.batch_matmul %qkv, %qkv {lhs_perm = array<i64: 0, 2, 1, 3>, lhs_select = array<i64: 2, 0>, rhs_perm = array<i64: 0, 2, 3, 1>, rhs_select = array<i64: 2, 1>} : tensor<2x4x3x2x8xf32>, tensor<2x4x3x2x8xf32> -> tensor<2x2x4x4xf32>
  %p = pd.masked_softmax %s, %mask {scale = 1.250000e-01 : f32} : tensor<2x2x4x4xf32>, tensor<4x4xi1>
  %o = pd.batch_matmul %p, %qkv {result_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 1, 3>, rhs_select = array<i64: 2, 2>} : tensor<2x2x4x4xf32>, tensor<2x4x3x2x8xf32> -> tensor<2x4x2x8xf32>
  return %o : tensor<2x4x2x8xf32>
}

// -----

// A sliding window (Mistral's band: row 3 drops column 0) lies inside the
// causal mask and keeps every diagonal element: P is as lower triangular,
// and the GEMMs and the softmax gradient are marked as under the causal
// mask.
// CHECK-LABEL: func.func @sliding_window
// CHECK: %[[S:.*]] = pd.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs, triangle = #pd.triangle<result_lower>}
// CHECK: %[[P:.*]] = pd.masked_softmax %[[S]], %{{.*}} {diagonal_blocks}
// CHECK: pd.batch_matmul %[[P]], %{{.*}} {triangle = #pd.triangle<lhs_lower>}
// CHECK: pd.masked_softmax_grad %{{.*}}, %[[P]] {causal}
func.func @sliding_window(%q: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %dp: tensor<2x4x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %window = pd.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [false, true, true, true]]> : tensor<4x4xi1>
  %s = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p = pd.masked_softmax %s, %window {scale = 1.000000e+00 : f32} : tensor<2x4x4xf32>, tensor<4x4xi1>
  %o = pd.batch_matmul %p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %ds = pd.masked_softmax_grad %dp, %p {scale = 1.000000e+00 : f32} : tensor<2x4x4xf32>
  return %o, %ds : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// Left dense: a mask that keeps an element above the diagonal, one that
// drops a diagonal element (its row could keep nothing), and no mask at
// all.
// CHECK-LABEL: func.func @not_causal
// CHECK-NOT: triangle
// CHECK-NOT: causal
func.func @not_causal(%q: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %above = pd.constant dense<[[true, true, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %s = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p = pd.masked_softmax %s, %above {scale = 1.000000e+00 : f32} : tensor<2x4x4xf32>, tensor<4x4xi1>
  %o = pd.batch_matmul %p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %nodiag = pd.constant dense<[[true, false, false, false], [true, false, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %s1 = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p1 = pd.masked_softmax %s1, %nodiag {scale = 1.000000e+00 : f32} : tensor<2x4x4xf32>, tensor<4x4xi1>
  %o1 = pd.batch_matmul %p1, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %s2 = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p2 = pd.masked_softmax %s2 {scale = 1.000000e+00 : f32} : tensor<2x4x4xf32>
  %o2 = pd.batch_matmul %p2, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %o, %o1, %o2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// Left dense under a causal mask: scores something else also reads (the
// GEMM must write them whole), P read as the rhs, and P read through a
// perm that swaps its matrix dims.
// CHECK-LABEL: func.func @other_readers
// CHECK-NOT: triangle
// CHECK-NOT: diagonal_blocks
func.func @other_readers(%q: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>, %w: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x8x4xf32>, tensor<2x4x4xf32>) {
  %mask = pd.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %s = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p = pd.masked_softmax %s, %mask {scale = 1.000000e+00 : f32} : tensor<2x4x4xf32>, tensor<4x4xi1>
  %vp = pd.batch_matmul %v, %p : tensor<2x8x4xf32>, tensor<2x4x4xf32> -> tensor<2x8x4xf32>
  %pt = pd.batch_matmul %p, %w {lhs_perm = array<i64: 0, 2, 1>} : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  return %s, %vp, %pt : tensor<2x4x4xf32>, tensor<2x8x4xf32>, tensor<2x4x4xf32>
}

// -----

// Scaled dot product attention as torch exports it (transformers' GPT-2):
// P's NaNs replaced by zeros before P V. The where keeps P lower
// triangular, so P V and P^T dO through it are marked; a where that puts
// something else than zero, or that broadcasts P to another shape, stops
// the marks.
// The NaN test reads all of P: the softmax writes whole rows.
// CHECK-LABEL: func.func @nan_guard
// CHECK: %[[P:.*]] = pd.masked_softmax %{{.*}}, %{{.*}} :
// CHECK: %[[G:.*]] = pd.where %{{.*}}, %{{.*}}, %[[P]]
// CHECK: pd.batch_matmul %[[G]], %{{.*}} {triangle = #pd.triangle<lhs_lower>}
// CHECK: pd.batch_matmul %[[G]], %{{.*}} {transpose_lhs, triangle = #pd.triangle<lhs_upper>}
// CHECK: %[[H:.*]] = pd.where %{{.*}}, %[[P]], %{{.*}}
// CHECK: pd.batch_matmul %[[H]], %{{.*}} :
// CHECK: %[[B:.*]] = pd.where %{{.*}}, %{{.*}}, %[[P]]
// CHECK: pd.batch_matmul %[[B]], %{{.*}} :
func.func @nan_guard(%q: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %do: tensor<2x4x8xf32>, %vb: tensor<3x2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3x2x4x8xf32>) {
  %mask = pd.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %zero = pd.constant dense<0.000000e+00> : tensor<1xf32>
  %one = pd.constant dense<1.000000e+00> : tensor<1xf32>
  %s = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p = pd.masked_softmax %s, %mask {scale = 1.000000e+00 : f32} : tensor<2x4x4xf32>, tensor<4x4xi1>
  %eq = pd.compare %p, %p {predicate = "eq"} : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xi1>
  %nan = pd.not %eq : tensor<2x4x4xi1>
  %g = pd.where %nan, %zero, %p : tensor<2x4x4xi1>, tensor<1xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %o = pd.batch_matmul %g, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %dv = pd.batch_matmul %g, %do {transpose_lhs} : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %h = pd.where %nan, %p, %one : tensor<2x4x4xi1>, tensor<2x4x4xf32>, tensor<1xf32> -> tensor<2x4x4xf32>
  %o2 = pd.batch_matmul %h, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %bigcond = pd.constant dense<true> : tensor<3x2x4x4xi1>
  %b = pd.where %bigcond, %zero, %p : tensor<3x2x4x4xi1>, tensor<1xf32>, tensor<2x4x4xf32> -> tensor<3x2x4x4xf32>
  %o3 = pd.batch_matmul %b, %vb : tensor<3x2x4x4xf32>, tensor<3x2x4x8xf32> -> tensor<3x2x4x8xf32>
  return %o, %dv, %o2, %o3 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3x2x4x8xf32>
}

// -----

// P also returned, and dS also read by an elementwise op: both read the
// elements past the diagonal blocks, so neither kernel gets
// diagonal_blocks, though every GEMM is marked.
// CHECK-LABEL: func.func @tails_read
// CHECK: pd.masked_softmax %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f32}
// CHECK: pd.masked_softmax_grad %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f32}
// CHECK-NOT: diagonal_blocks
func.func @tails_read(%q: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %mask = pd.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %s = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p = pd.masked_softmax %s, %mask {scale = 2.500000e-01 : f32} : tensor<2x4x4xf32>, tensor<4x4xi1>
  %o = pd.batch_matmul %p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %dp = pd.batch_matmul %do, %v {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %ds = pd.masked_softmax_grad %dp, %p {scale = 2.500000e-01 : f32} : tensor<2x4x4xf32>
  %dq = pd.batch_matmul %ds, %q : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %sq = pd.mul %ds, %ds : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  return %p, %o, %dq, %sq : tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>
}
