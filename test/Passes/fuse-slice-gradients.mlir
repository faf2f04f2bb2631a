// RUN: pd-opt %s --pd-fuse-slice-gradients --split-input-file | FileCheck %s

// The backward of attention's qkv split: three slice gradients summed in
// reverse order become one concat in slice order, keeping the root's tag.
// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x4xf32>, %[[K:.*]]: tensor<2x3x4xf32>, %[[V:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[G:.*]] = pd.concat %[[Q]], %[[K]], %[[V]] {axis = 2 : i64, pd.grad_of = 16 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x12xf32>
// CHECK-NEXT: return %[[G]]
func.func @qkv(%dq: tensor<2x3x4xf32>, %dk: tensor<2x3x4xf32>, %dv: tensor<2x3x4xf32>) -> tensor<2x3x12xf32> {
  %a = pd.slice_grad %dv {pd.grad_of = 18 : i64, starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %b = pd.slice_grad %dk {pd.grad_of = 17 : i64, starts = array<i64: 0, 0, 4>, steps = array<i64: 1, 1, 1>} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %s = pd.add %a, %b {pd.grad_of = 17 : i64} : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  %c = pd.slice_grad %dq {pd.grad_of = 16 : i64, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %g = pd.add %s, %c {pd.grad_of = 16 : i64} : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  return %g : tensor<2x3x12xf32>
}

// -----

// Unequal parts along a leading axis (Split with explicit sizes).
// CHECK-LABEL: func.func @unequal_rows
// CHECK-NEXT: %[[G:.*]] = pd.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<1x5xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: return %[[G]]
func.func @unequal_rows(%top: tensor<1x5xf32>, %rest: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %a = pd.slice_grad %rest {starts = array<i64: 1, 0>, steps = array<i64: 1, 1>} : tensor<3x5xf32> -> tensor<4x5xf32>
  %b = pd.slice_grad %top {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<1x5xf32> -> tensor<4x5xf32>
  %g = pd.add %a, %b : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  return %g : tensor<4x5xf32>
}

// -----

// The slices tile, but their sum also takes another gradient: the slices
// become a concat, the other addition stays.
// CHECK-LABEL: func.func @inner_sum
// CHECK-NEXT: %[[C:.*]] = pd.concat %arg0, %arg1 {axis = 1 : i64}
// CHECK-NEXT: %[[G:.*]] = pd.add %[[C]], %arg2
// CHECK-NEXT: return %[[G]]
func.func @inner_sum(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>, %other: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = pd.slice_grad %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x2xf32> -> tensor<2x4xf32>
  %b = pd.slice_grad %y {starts = array<i64: 0, 2>, steps = array<i64: 1, 1>} : tensor<2x2xf32> -> tensor<2x4xf32>
  %s = pd.add %a, %b : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %g = pd.add %s, %other : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

// -----

// Left as sums: a gap, an overlap, a strided slice, slices cut along two
// axes, and a slice gradient that is also used elsewhere.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: pd.concat
// CHECK-COUNT-5: pd.add
// CHECK-NOT: pd.concat
func.func @left_alone(%x: tensor<2x2xf32>, %w: tensor<2x3xf32>, %r: tensor<1x2xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %a0 = pd.slice_grad %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x2xf32> -> tensor<2x5xf32>
  %b0 = pd.slice_grad %x {starts = array<i64: 0, 3>, steps = array<i64: 1, 1>} : tensor<2x2xf32> -> tensor<2x5xf32>
  %gap = pd.add %a0, %b0 : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %a1 = pd.slice_grad %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x2xf32> -> tensor<2x5xf32>
  %b1 = pd.slice_grad %w {starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x5xf32>
  %overlap = pd.add %a1, %b1 : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %a2 = pd.slice_grad %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 2>} : tensor<2x2xf32> -> tensor<2x4xf32>
  %b2 = pd.slice_grad %x {starts = array<i64: 0, 1>, steps = array<i64: 1, 2>} : tensor<2x2xf32> -> tensor<2x4xf32>
  %strided = pd.add %a2, %b2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %a3 = pd.slice_grad %r {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<1x2xf32> -> tensor<2x4xf32>
  %b3 = pd.slice_grad %r {starts = array<i64: 1, 2>, steps = array<i64: 1, 1>} : tensor<1x2xf32> -> tensor<2x4xf32>
  %twoaxes = pd.add %a3, %b3 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %a4 = pd.slice_grad %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x2xf32> -> tensor<2x4xf32>
  %b4 = pd.slice_grad %x {starts = array<i64: 0, 2>, steps = array<i64: 1, 1>} : tensor<2x2xf32> -> tensor<2x4xf32>
  %shared = pd.add %a4, %b4 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %gap, %overlap, %strided, %twoaxes, %shared, %a4 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
