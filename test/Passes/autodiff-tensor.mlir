// RUN: pd-opt %s --pd-autodiff | FileCheck %s

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
  // CHECK: %[[DR:.+]] = pd.broadcast_axes
  // CHECK: %[[DBM:.+]] = pd.reshape %[[DR]] {pd.grad_of = 4 : i64} : tensor<32xf32> -> tensor<2x4x4xf32>
  // CHECK: %[[D1:.+]] = pd.batch_matmul %[[DBM]], %{{.+}} {pd.grad_of = 3 : i64} : tensor<2x4x4xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  // CHECK: %[[D2:.+]] = pd.batch_matmul %[[DBM]], %{{.+}} {pd.grad_of = 3 : i64, transpose_lhs} : tensor<2x4x4xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  // CHECK: %[[SUM:.+]] = pd.add %[[D1]], %[[D2]]
  // CHECK: %[[DG:.+]] = pd.transpose %[[SUM]] {pd.grad_of = 2 : i64, perm = array<i64: 0, 2, 1>}
  // CHECK: %[[DT:.+]] = pd.gather_grad %[[DG]], %arg0 {pd.grad_of = 1 : i64} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  // CHECK: pd.accumulate_grad @emb, %[[DT]]
  return %l : tensor<f32>
}
