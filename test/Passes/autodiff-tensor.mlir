// RUN: pd-opt %s --split-input-file --pd-autodiff | FileCheck %s

// Tests the gradient rules of the tensor family: gather scatter-adds,
// transpose inverts its permutation, reshape reshapes back, batched matmul
// transposes like pd.matmul.

pd.param @emb {onnx_name = "emb"} : tensor<7x4xf32>
// CHECK-LABEL: func.func @main
func.func @main(%i: tensor<2x3xi64>) -> tensor<f32> {
  %t = pd.param_ref @emb : tensor<7x4xf32>
  %g = pd.gather %t, %i : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %tr = pd.transpose %g {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %bm = pd.batch_matmul %tr, %tr {transpose_rhs} : tensor<2x4x3xf32>, tensor<2x4x3xf32> -> tensor<2x4x4xf32>
  %r = pd.reshape %bm : tensor<2x4x4xf32> -> tensor<32xf32>
  %l = pd.reduce_sum %r {axes = array<i64: 0>} : tensor<32xf32> -> tensor<f32>
  // CHECK: pd.grad_seed
  // CHECK-NEXT: %[[DR:.+]] = pd.broadcast_axes
  // CHECK-NEXT: %[[DBM:.+]] = pd.reshape %[[DR]] {pd.grad_of = 4 : i64} : tensor<32xf32> -> tensor<2x4x4xf32>
  // CHECK-NEXT: %[[D1:.+]] = pd.batch_matmul %[[DBM]], %{{.+}} {pd.grad_of = 3 : i64} : tensor<2x4x4xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  // CHECK-NEXT: %[[D2:.+]] = pd.batch_matmul %[[DBM]], %{{.+}} {pd.grad_of = 3 : i64, transpose_lhs} : tensor<2x4x4xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  // CHECK-NEXT: %[[SUM:.+]] = pd.add %[[D1]], %[[D2]]
  // CHECK-NEXT: %[[DG:.+]] = pd.transpose %[[SUM]] {pd.grad_of = 2 : i64, perm = array<i64: 0, 2, 1>}
  // CHECK-NEXT: %[[DT:.+]] = pd.gather_grad %[[DG]], %arg0 {pd.grad_of = 1 : i64} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  // CHECK-NEXT: pd.accumulate_grad @emb, %[[DT]]
  // CHECK-NEXT: return
  return %l : tensor<f32>
}

// -----

// Tests gather along axis 1 (scatter-add on that axis), where (each branch
// masked, the y branch with negate, and summed to its shape), broadcast_to
// (sum_to), concat (a slice per input, added for a repeated input) and a
// negative-step slice (slice_grad with the same window).

pd.param @p {onnx_name = "p"} : tensor<2x6xf32>
pd.param @q {onnx_name = "q"} : tensor<3xf32>
// CHECK-LABEL: func.func @main
func.func @main(%i: tensor<2xi64>) -> tensor<f32> {
  %p = pd.param_ref @p : tensor<2x6xf32>
  %q = pd.param_ref @q : tensor<3xf32>
  %s = pd.slice %p {starts = array<i64: 0, 5>, steps = array<i64: 1, -2>} : tensor<2x6xf32> -> tensor<2x3xf32>
  %c = pd.concat %s, %s {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %b = pd.broadcast_to %c : tensor<4x3xf32> -> tensor<2x4x3xf32>
  %m = pd.constant dense<[true, false, true]> : tensor<3xi1>
  %w = pd.where %m, %b, %q : tensor<3xi1>, tensor<2x4x3xf32>, tensor<3xf32> -> tensor<2x4x3xf32>
  %g = pd.gather %w, %i {axis = 1 : i64} : tensor<2x4x3xf32>, tensor<2xi64> -> tensor<2x2x3xf32>
  %l = pd.reduce_sum %g {axes = array<i64: 0, 1, 2>} : tensor<2x2x3xf32> -> tensor<f32>
  // CHECK: %[[M:.+]] = pd.constant dense<[true, false, true]>
  // CHECK: pd.grad_seed
  // CHECK-NEXT: %[[DR:.+]] = pd.broadcast_axes
  // CHECK-NEXT: %[[DW:.+]] = pd.gather_grad %[[DR]], %arg0 {axis = 1 : i64, pd.grad_of = 7 : i64} : tensor<2x2x3xf32>, tensor<2xi64> -> tensor<2x4x3xf32>
  // CHECK-NEXT: %[[DB:.+]] = pd.where_grad %[[DW]], %[[M]] {pd.grad_of = 6 : i64} : tensor<2x4x3xf32>, tensor<3xi1> -> tensor<2x4x3xf32>
  // CHECK-NEXT: %[[DQ0:.+]] = pd.where_grad %[[DW]], %[[M]] {negate, pd.grad_of = 6 : i64}
  // CHECK-NEXT: %[[DQ:.+]] = pd.sum_to %[[DQ0]] {pd.grad_of = 6 : i64} : tensor<2x4x3xf32> -> tensor<3xf32>
  // CHECK-NEXT: %[[DC:.+]] = pd.sum_to %[[DB]] {pd.grad_of = 4 : i64} : tensor<2x4x3xf32> -> tensor<4x3xf32>
  // CHECK-NEXT: %[[D0:.+]] = pd.slice %[[DC]] {pd.grad_of = 3 : i64, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x3xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: %[[D1:.+]] = pd.slice %[[DC]] {pd.grad_of = 3 : i64, starts = array<i64: 2, 0>, steps = array<i64: 1, 1>} : tensor<4x3xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: %[[DS:.+]] = pd.add %[[D0]], %[[D1]]
  // CHECK-NEXT: %[[DP:.+]] = pd.slice_grad %[[DS]] {pd.grad_of = 2 : i64, starts = array<i64: 0, 5>, steps = array<i64: 1, -2>} : tensor<2x3xf32> -> tensor<2x6xf32>
  // CHECK-NEXT: pd.accumulate_grad @q, %[[DQ]]
  // CHECK-NEXT: pd.accumulate_grad @p, %[[DP]]
  // CHECK-NEXT: return
  return %l : tensor<f32>
}
