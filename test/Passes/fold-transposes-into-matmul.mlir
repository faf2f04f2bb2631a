// RUN: pd-opt %s --pd-fold-transposes-into-matmul --split-input-file | FileCheck %s

// Attention's forward: Q and V split into heads (0, 2, 1, 3), K^T as
// (0, 2, 3, 1), the heads merged back with (0, 2, 1, 3). Every transpose
// folds; the merge becomes result_perm.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x4x16xf32>, %[[K:.*]]: tensor<2x8x4x16xf32>, %[[V:.*]]: tensor<2x8x4x16xf32>)
// CHECK-NEXT: %[[S:.*]] = pd.batch_matmul %[[Q]], %[[K]] {lhs_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT: %[[O:.*]] = pd.batch_matmul %[[S]], %[[V]] {result_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x8xf32>, tensor<2x8x4x16xf32> -> tensor<2x8x4x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @attention(%q: tensor<2x8x4x16xf32>, %k: tensor<2x8x4x16xf32>, %v: tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32> {
  %qh = pd.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %kt = pd.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32> -> tensor<2x4x16x8xf32>
  %vh = pd.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %s = pd.batch_matmul %qh, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %o = pd.batch_matmul %s, %vh : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %m = pd.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  return %m : tensor<2x8x4x16xf32>
}

// -----

// The backward of K^T: dK^T = Q^T dS is [B, H, D, T]; transposed back to
// [B, T, H, D] its rows (D) would be innermost, so the product is swapped
// to dS^T Q = dK, whose columns are. A transpose that feeds no matmul
// stays.
// CHECK-LABEL: func.func @swapped
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[DS:.*]]: tensor<2x4x8x8xf32>)
// CHECK-NEXT: %[[DK:.*]] = pd.batch_matmul %[[DS]], %[[Q]] {result_perm = array<i64: 0, 2, 1, 3>, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
// CHECK-NEXT: %[[T:.*]] = pd.transpose %[[DS]]
// CHECK-NEXT: return %[[DK]], %[[T]]
func.func @swapped(%q: tensor<2x4x8x16xf32>, %ds: tensor<2x4x8x8xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x4x8x8xf32>) {
  %dkt = pd.batch_matmul %q, %ds {transpose_lhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x16x8xf32>
  %dk = pd.transpose %dkt {perm = array<i64: 0, 3, 1, 2>} : tensor<2x4x16x8xf32> -> tensor<2x8x4x16xf32>
  %t = pd.transpose %ds {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  return %dk, %t : tensor<2x8x4x16xf32>, tensor<2x4x8x8xf32>
}

// -----

// Not folded: a transpose that moves a batch dim innermost (no GEMM reads
// it), and a result read twice.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: pd.transpose
// CHECK-NOT: perm = array<i64: 1, 2, 3, 0>}
func.func @left_alone(%x: tensor<4x8x16x2xf32>, %y: tensor<2x4x16x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x8x4x8xf32>) {
  %xt = pd.transpose %x {perm = array<i64: 3, 0, 1, 2>} : tensor<4x8x16x2xf32> -> tensor<2x4x8x16xf32>
  %s = pd.batch_matmul %xt, %y : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %m = pd.transpose %s {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  return %s, %m : tensor<2x4x8x8xf32>, tensor<2x8x4x8xf32>
}

// -----

// After differentiation: the forward transpose (op 1) folds away; its
// gradient op that stays (a transpose of a matmul read twice) now names
// the matmul that absorbed it (op 2), so partitioning keeps it there.
// CHECK-LABEL: func.func @retag
// CHECK: pd.batch_matmul %arg0, %arg1 {lhs_perm = array<i64: 0, 2, 1, 3>, pd.op_id = 2 : i64}
// CHECK: pd.transpose %{{.*}} {pd.grad_of = 2 : i64, perm = array<i64: 0, 2, 1, 3>}
func.func @retag(%q: tensor<2x8x4x16xf32>, %k: tensor<2x4x16x8xf32>, %g: tensor<2x4x8x16xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x8x4x16xf32>, tensor<2x4x8x16xf32>) {
  %qh = pd.transpose %q {pd.op_id = 1 : i64, perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %s = pd.batch_matmul %qh, %k {pd.op_id = 2 : i64} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %dq = pd.batch_matmul %s, %g {pd.grad_of = 2 : i64, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %dqt = pd.transpose %dq {pd.grad_of = 1 : i64, perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  return %s, %dqt, %dq : tensor<2x4x8x8xf32>, tensor<2x8x4x16xf32>, tensor<2x4x8x16xf32>
}

// -----

// torch's dynamo export transposes K^T as [B H, T, D]: a reshape merging
// batch and heads, a 3-D transpose, a reshape splitting them again. That
// is the 4-D transpose (0, 1, 3, 2), which composes with the head
// transpose before it and folds into the GEMM; so does the backward's
// transpose of a product between such reshapes (computed as the swapped
// product, whose result needs no perm then). A
// transpose that moves the merged dim, or reshapes that do not split it
// back, stay.
// CHECK-LABEL: func.func @dynamo_key
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x8x4x16xf32>, %[[D:.*]]: tensor<2x4x8x8xf32>, %[[X:.*]]: tensor<2x4x8x16xf32>)
// CHECK-NEXT: %[[S:.*]] = pd.batch_matmul %[[Q]], %[[K]] {rhs_perm = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT: %[[G:.*]] = pd.batch_matmul %[[Q]], %[[D]] {transpose_lhs} :
// CHECK-NEXT: %[[M:.*]] = pd.reshape %[[X]] : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
// CHECK-NEXT: %[[T:.*]] = pd.transpose %[[M]] {perm = array<i64: 1, 0, 2>}
// CHECK-NEXT: %[[B:.*]] = pd.reshape %[[T]] : tensor<8x8x16xf32> -> tensor<8x2x4x16xf32>
// CHECK-NEXT: return %[[S]], %[[G]], %[[B]]
func.func @dynamo_key(%q: tensor<2x4x8x16xf32>, %k: tensor<2x8x4x16xf32>, %d: tensor<2x4x8x8xf32>, %x: tensor<2x4x8x16xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32>, tensor<8x2x4x16xf32>) {
  %kh = pd.transpose %k {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %k3 = pd.reshape %kh : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
  %kt3 = pd.transpose %k3 {perm = array<i64: 0, 2, 1>} : tensor<8x8x16xf32> -> tensor<8x16x8xf32>
  %kt = pd.reshape %kt3 : tensor<8x16x8xf32> -> tensor<2x4x16x8xf32>
  %s = pd.batch_matmul %q, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %g = pd.batch_matmul %d, %q {transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %g3 = pd.reshape %g : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
  %gt3 = pd.transpose %g3 {perm = array<i64: 0, 2, 1>} : tensor<8x8x16xf32> -> tensor<8x16x8xf32>
  %gt = pd.reshape %gt3 : tensor<8x16x8xf32> -> tensor<2x4x16x8xf32>
  %x3 = pd.reshape %x : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
  %xt3 = pd.transpose %x3 {perm = array<i64: 1, 0, 2>} : tensor<8x8x16xf32> -> tensor<8x8x16xf32>
  %xt = pd.reshape %xt3 : tensor<8x8x16xf32> -> tensor<8x2x4x16xf32>
  return %s, %gt, %xt : tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32>, tensor<8x2x4x16xf32>
}

// -----

// A transpose of a product that already has a result_perm composes with
// it: here back to the GEMM's own layout (no perm).
// CHECK-LABEL: func.func @composed_result
// CHECK-NEXT: %[[P:.*]] = pd.batch_matmul %arg0, %arg1 : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT: return %[[P]]
func.func @composed_result(%a: tensor<2x4x8x16xf32>, %b: tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32> {
  %m = pd.batch_matmul %a, %b {result_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x8x4x8xf32>
  %t = pd.transpose %m {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  return %t : tensor<2x4x8x8xf32>
}
