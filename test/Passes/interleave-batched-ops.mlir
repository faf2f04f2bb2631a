// RUN: pd-opt %s --pd-interleave-batched-ops --split-input-file | FileCheck %s

// Causal attention's forward and backward over 2 x 3 (batch, head)
// entries, as the allocator leaves them: a run of strided batched GEMMs
// and softmaxes, views and constants between them, is one group. The add
// ends it; the lone GEMM after the add is no group.
// CHECK-LABEL: func.func @attention
// CHECK:      pd.interleave_begin
// CHECK-NEXT: %[[S:.*]] = pd.batch_matmul
// CHECK-NEXT: pd.constant
// CHECK-NEXT: %[[P:.*]] = pd.masked_softmax %[[S]]
// CHECK-NEXT: pd.batch_matmul %[[P]]
// CHECK-NEXT: %[[DP:.*]] = pd.batch_matmul
// CHECK-NEXT: %[[DS:.*]] = pd.masked_softmax_grad %[[DP]], %[[P]]
// CHECK-NEXT: pd.batch_matmul %[[P]]
// CHECK-NEXT: pd.reshape {{.*}} {pd.view}
// CHECK-NEXT: pd.batch_matmul %[[DS]]
// CHECK-NEXT: pd.interleave_end
// CHECK-NEXT: pd.add
// CHECK-NEXT: pd.batch_matmul %[[DS]]
// CHECK-NEXT: return
func.func @attention(%q: tensor<2x3x4x16xf32>, %k: tensor<2x3x4x16xf32>, %v: tensor<2x3x4x16xf32>, %do: tensor<2x3x4x16xf32>) -> (tensor<2x3x4x16xf32>, tensor<6x4x16xf32>, tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>) {
  %s = pd.batch_matmul %q, %k {transpose_rhs, triangle = #pd.triangle<result_lower>} : tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x4xf32>
  %mask = pd.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %p = pd.masked_softmax %s, %mask {diagonal_blocks, scale = 2.500000e-01 : f32} : tensor<2x3x4x4xf32>, tensor<4x4xi1>
  %o = pd.batch_matmul %p, %v {triangle = #pd.triangle<lhs_lower>} : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %dp = pd.batch_matmul %do, %v {transpose_rhs, triangle = #pd.triangle<result_lower>} : tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x4xf32>
  %ds = pd.masked_softmax_grad %dp, %p {causal, diagonal_blocks, scale = 2.500000e-01 : f32} : tensor<2x3x4x4xf32>
  %dv = pd.batch_matmul %p, %do {transpose_lhs, triangle = #pd.triangle<lhs_upper>} : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %dv2 = pd.reshape %dv {pd.view} : tensor<2x3x4x16xf32> -> tensor<6x4x16xf32>
  %dq = pd.batch_matmul %ds, %k {triangle = #pd.triangle<lhs_lower>} : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %sum = pd.add %dq, %dq : tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %dk = pd.batch_matmul %ds, %q {transpose_lhs, triangle = #pd.triangle<lhs_upper>} : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  return %o, %dv2, %sum, %dk : tensor<2x3x4x16xf32>, tensor<6x4x16xf32>, tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>
}

// -----

// Runs that make no group: a plain batched GEMM (pdrt_batch_matmul, which
// runs where it stands), a reshape the allocator made a copy (no pd.view),
// GEMMs over different entries (6 and 2), a softmax whose rows do not
// divide into the GEMM's entries, a single kernel.
// CHECK-LABEL: func.func @no_groups
// CHECK-NOT: pd.interleave
func.func @no_groups(%a: tensor<2x3x4x4xf32>, %b: tensor<2x3x4x16xf32>, %c: tensor<2x4x4xf32>, %m: tensor<4x4xi1>, %w: tensor<1x3x4xf32>, %m3: tensor<3x4xi1>) -> (tensor<2x3x4x16xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<1x3x4xf32>) {
  %plain = pd.batch_matmul %a, %b : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %p = pd.masked_softmax %a, %m {scale = 1.0 : f32} : tensor<2x3x4x4xf32>, tensor<4x4xi1>
  %copy = pd.reshape %p : tensor<2x3x4x4xf32> -> tensor<6x4x4xf32>
  %x = pd.batch_matmul %a, %b {triangle = #pd.triangle<lhs_lower>} : tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x16xf32>
  %y = pd.batch_matmul %c, %c {transpose_rhs, triangle = #pd.triangle<result_lower>} : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %z = pd.add %y, %y : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %u = pd.batch_matmul %c, %c {transpose_rhs, triangle = #pd.triangle<result_lower>} : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %v = pd.masked_softmax %w, %m3 {scale = 1.0 : f32} : tensor<1x3x4xf32>, tensor<3x4xi1>
  return %plain, %p, %x, %z, %u, %v : tensor<2x3x4x16xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x16xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<1x3x4xf32>
}

// -----

// A profiling stage's marks (pdc --profile) do not break a run: the
// runtime times each recorded call on the mark passed before it.
// CHECK-LABEL: func.func @profiled
// CHECK:      pd.profile_mark 3
// CHECK-NEXT: pd.interleave_begin
// CHECK-NEXT: pd.batch_matmul
// CHECK-NEXT: pd.profile_mark 4
// CHECK-NEXT: pd.masked_softmax
// CHECK-NEXT: pd.interleave_end
// CHECK-NEXT: pd.profile_mark -1
func.func @profiled(%q: tensor<2x3x4x16xf32>, %k: tensor<2x3x4x16xf32>, %m: tensor<4x4xi1>) -> tensor<2x3x4x4xf32> {
  pd.profile_mark 3
  %s = pd.batch_matmul %q, %k {transpose_rhs, triangle = #pd.triangle<result_lower>} : tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32> -> tensor<2x3x4x4xf32>
  pd.profile_mark 4
  %p = pd.masked_softmax %s, %m {scale = 2.500000e-01 : f32} : tensor<2x3x4x4xf32>, tensor<4x4xi1>
  pd.profile_mark -1
  return %p : tensor<2x3x4x4xf32>
}
