// RUN: pd-opt %s --pd-fuse-cross-entropy-gradient --split-input-file | FileCheck %s

// The objective is the mean cross-entropy: its seeded gradient comes with
// the loss, which keeps its op id; the seed goes; the head's gradient reads
// the fused op's second result.
// CHECK-LABEL: func.func @lm_head
// CHECK-SAME: (%[[H:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<10x8xf32>, %[[Y:.*]]: tensor<4xi64>)
// CHECK-NEXT: %[[Z:.*]] = pd.matmul %[[H]], %[[W]] {pd.op_id = 0 : i64, transpose_rhs}
// CHECK-NEXT: %[[L:.*]], %[[DZ:.*]] = pd.softmax_cross_entropy_with_grad %[[Z]], %[[Y]] {ignore_index = 3 : i64, pd.op_id = 1 : i64} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>, tensor<4x10xf32>
// CHECK-NOT: pd.grad_seed
// CHECK-NOT: softmax_cross_entropy_grad
// CHECK-NEXT: %[[DW:.*]] = pd.matmul %[[DZ]], %[[H]] {pd.grad_of = 0 : i64, transpose_lhs}
// CHECK-NEXT: return %[[L]], %[[DW]]
func.func @lm_head(%h: tensor<4x8xf32>, %w: tensor<10x8xf32>, %y: tensor<4xi64>) -> (tensor<f32>, tensor<10x8xf32>) {
  %z = pd.matmul %h, %w {pd.op_id = 0 : i64, transpose_rhs} : tensor<4x8xf32>, tensor<10x8xf32> -> tensor<4x10xf32>
  %l = pd.softmax_cross_entropy %z, %y {ignore_index = 3 : i64, pd.op_id = 1 : i64} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %s = pd.grad_seed {pd.grad_of = 1 : i64} : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %s, %z, %y {ignore_index = 3 : i64, pd.grad_of = 1 : i64} : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  %dw = pd.matmul %dz, %h {pd.grad_of = 0 : i64, transpose_lhs} : tensor<4x10xf32>, tensor<4x8xf32> -> tensor<10x8xf32>
  return %l, %dw : tensor<f32>, tensor<10x8xf32>
}

// -----

// The loss is scaled before it becomes the objective: its gradient is not
// the seed, so both ops stay.
// CHECK-LABEL: func.func @scaled_objective
// CHECK: pd.softmax_cross_entropy %
// CHECK: pd.grad_seed
// CHECK: pd.softmax_cross_entropy_grad
// CHECK-NOT: softmax_cross_entropy_with_grad
func.func @scaled_objective(%z: tensor<4x10xf32>, %y: tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>) {
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %o = pd.scale %l, 5.000000e-01 : tensor<f32>
  %s = pd.grad_seed : tensor<f32>
  %ds = pd.scale %s, 5.000000e-01 : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %ds, %z, %y : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  return %o, %dz : tensor<f32>, tensor<4x10xf32>
}

// -----

// Reduction "none" (one loss per row): its gradient is per row, not fused.
// CHECK-LABEL: func.func @per_row
// CHECK-NOT: softmax_cross_entropy_with_grad
// CHECK: pd.softmax_cross_entropy_grad
func.func @per_row(%z: tensor<4x10xf32>, %y: tensor<4xi64>, %dl: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>) {
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<4xf32>
  %dz = pd.softmax_cross_entropy_grad %dl, %z, %y : tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  return %l, %dz : tensor<4xf32>, tensor<4x10xf32>
}

// -----

// Another loss over the same logits with other labels is not the one the
// gradient differentiates; the seed read by another gradient stays.
// CHECK-LABEL: func.func @other_labels
// CHECK-NEXT: pd.softmax_cross_entropy %arg0, %arg1
// CHECK-NEXT: %[[S:.*]] = pd.grad_seed
// CHECK-NEXT: pd.softmax_cross_entropy_grad %[[S]], %arg0, %arg2
// CHECK-NEXT: pd.scale %[[S]]
func.func @other_labels(%z: tensor<4x10xf32>, %y: tensor<4xi64>, %y2: tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>, tensor<f32>) {
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %s = pd.grad_seed : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %s, %z, %y2 : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  %t = pd.scale %s, 2.000000e+00 : tensor<f32>
  return %l, %dz, %t : tensor<f32>, tensor<4x10xf32>, tensor<f32>
}

// -----

// A seed also read elsewhere stays when the loss fuses.
// CHECK-LABEL: func.func @seed_shared
// CHECK-NEXT: %[[L:.*]], %[[DZ:.*]] = pd.softmax_cross_entropy_with_grad %arg0, %arg1
// CHECK-NEXT: %[[S:.*]] = pd.grad_seed
// CHECK-NEXT: %[[T:.*]] = pd.scale %[[S]]
// CHECK-NEXT: return %[[L]], %[[DZ]], %[[T]]
func.func @seed_shared(%z: tensor<4x10xf32>, %y: tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>, tensor<f32>) {
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %s = pd.grad_seed : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %s, %z, %y : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  %t = pd.scale %s, 2.000000e+00 : tensor<f32>
  return %l, %dz, %t : tensor<f32>, tensor<4x10xf32>, tensor<f32>
}
