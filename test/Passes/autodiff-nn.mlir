// RUN: pd-opt %s --split-input-file --pd-autodiff | FileCheck %s

// Tests the gradient rules of the NN family: reductions broadcast back,
// unary math goes through unary_grad, division and layer norm.

pd.param @w {onnx_name = "w"} : tensor<4x8xf32>
pd.param @g {onnx_name = "g"} : tensor<8xf32>
pd.param @b {onnx_name = "b"} : tensor<8xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x8xf32>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x8xf32>
  %g = pd.param_ref @g : tensor<8xf32>
  %b = pd.param_ref @b : tensor<8xf32>
  %ln = pd.layer_norm %w, %g, %b {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %e = pd.exp %ln : tensor<4x8xf32>
  %d = pd.div %e, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %sm = pd.softmax %d {axis = 1} : tensor<4x8xf32>
  %l = pd.reduce_sum %sm {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  // CHECK: %[[S:.+]] = pd.grad_seed
  // CHECK-NEXT: %[[DSM:.+]] = pd.broadcast_axes %[[S]] {axes = array<i64: 0, 1>, pd.grad_of = 7 : i64} : tensor<f32> -> tensor<4x8xf32>
  // CHECK-NEXT: %[[DD:.+]] = pd.softmax_grad %[[DSM]], %{{.+}} {axis = 1 : i64, pd.grad_of = 6 : i64}
  // d(e/g)/de = dd / g; d/dg = sum_rows(-(dd / g) * (e / g)).
  // CHECK-NEXT: %[[Q:.+]] = pd.div %[[DD]], %{{.+}} {pd.grad_of = 5 : i64}
  // CHECK-NEXT: %[[QC:.+]] = pd.mul %[[Q]], %{{.+}} {pd.grad_of = 5 : i64}
  // CHECK-NEXT: %[[NEG:.+]] = pd.scale %[[QC]], -1.000000e+00 {pd.grad_of = 5 : i64}
  // CHECK-NEXT: %[[DGDIV:.+]] = pd.sum_to %[[NEG]] {pd.grad_of = 5 : i64} : tensor<4x8xf32> -> tensor<8xf32>
  // CHECK-NEXT: %[[DE:.+]] = pd.unary_grad %[[Q]], %{{.+}}, %{{.+}} {kind = #pd.unary_kind<exp>, pd.grad_of = 4 : i64}
  // CHECK-NEXT: %[[DW:.+]], %[[DG:.+]], %[[DB:.+]] = pd.layer_norm_grad %[[DE]], %{{.+}}, %{{.+}} {axis = 1 : i64, {{.*}}pd.grad_of = 3 : i64}
  // g is read twice (layer norm and div): its two contributions are summed.
  // CHECK-NEXT: %[[DGSUM:.+]] = pd.add %[[DGDIV]], %[[DG]] {pd.grad_of = 3 : i64}
  // CHECK-NEXT: pd.accumulate_grad @b, %[[DB]]
  // CHECK-NEXT: pd.accumulate_grad @g, %[[DGSUM]]
  // CHECK-NEXT: pd.accumulate_grad @w, %[[DW]]
  // CHECK-NEXT: return
  return %l : tensor<f32>
}

// -----

// Dropout's gradient is dropout of dy with the same rng_id (the mask is
// regenerated from its key; nothing is stashed).
pd.param @w {onnx_name = "w"} : tensor<4x8xf32>
// CHECK-LABEL: func.func @main
func.func @main() -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x8xf32>
  %y = pd.dropout %w {ratio = 2.500000e-01 : f32, rng_id = 4 : i64} : tensor<4x8xf32>
  %l = pd.reduce_sum %y {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  // CHECK: pd.grad_seed
  // CHECK-NEXT: %[[DY:.+]] = pd.broadcast_axes
  // CHECK-NEXT: %[[DW:.+]] = pd.dropout %[[DY]] {pd.grad_of = 1 : i64, ratio = 2.500000e-01 : f32, rng_id = 4 : i64} : tensor<4x8xf32>
  // CHECK-NEXT: pd.accumulate_grad @w, %[[DW]]
  // CHECK-NEXT: return
  return %l : tensor<f32>
}

// -----

// A masked softmax's gradient is one masked_softmax_grad from its output
// with the same scale; the constant mask gets none.
pd.param @w {onnx_name = "w"} : tensor<4x2xf32>
// CHECK-LABEL: func.func @main
func.func @main() -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x2xf32>
  %m = pd.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %p = pd.masked_softmax %w, %m {scale = 5.000000e-01 : f32} : tensor<4x2xf32>, tensor<2x2xi1>
  %l = pd.reduce_sum %p {axes = array<i64: 0, 1>} : tensor<4x2xf32> -> tensor<f32>
  // CHECK: %[[P:.+]] = pd.masked_softmax
  // CHECK: pd.grad_seed
  // CHECK-NEXT: %[[DP:.+]] = pd.broadcast_axes
  // CHECK-NEXT: %[[DW:.+]] = pd.masked_softmax_grad %[[DP]], %[[P]] {pd.grad_of = 2 : i64, scale = 5.000000e-01 : f32} : tensor<4x2xf32>
  // CHECK-NEXT: pd.accumulate_grad @w, %[[DW]]
  // CHECK-NEXT: return
  return %l : tensor<f32>
}

// -----

// add_layer_norm: one layer_norm_grad from the sum, with the sum's own
// gradient as its addend; both summands get its input gradient.
pd.param @w {onnx_name = "w"} : tensor<4x8xf32>
pd.param @g {onnx_name = "g"} : tensor<8xf32>
pd.param @b {onnx_name = "b"} : tensor<8xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x8xf32>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x8xf32>
  %g = pd.param_ref @g : tensor<8xf32>
  %b = pd.param_ref @b : tensor<8xf32>
  %s, %n = pd.add_layer_norm %x, %w, %g, %b {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  %r = pd.mul %s, %n : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %l = pd.reduce_sum %r {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  // CHECK: %[[S:.+]], %[[N:.+]] = pd.add_layer_norm
  // CHECK: %[[DS:.+]] = pd.mul %{{.+}}, %[[N]] {pd.grad_of = 4 : i64}
  // CHECK-NEXT: %[[DN:.+]] = pd.mul %{{.+}}, %[[S]] {pd.grad_of = 4 : i64}
  // CHECK-NEXT: %[[DX:.+]], %[[DG:.+]], %[[DB:.+]] = pd.layer_norm_grad %[[DN]], %[[S]], %{{.+}}, %[[DS]] {axis = 1 : i64, epsilon = 9.99999974E-6 : f32, pd.grad_of = 3 : i64}
  // CHECK-DAG: pd.accumulate_grad @w, %[[DX]]
  // CHECK-DAG: pd.accumulate_grad @g, %[[DG]]
  // CHECK-DAG: pd.accumulate_grad @b, %[[DB]]
  return %l : tensor<f32>
}

// -----

// A GELU with the bias of the Linear before it (pd-fuse-bias-into-consumers):
// its gradient recomputes gelu' at x + bias (input_bias), and the bias
// gradient is that gradient summed over the rows.
pd.param @w {onnx_name = "w"} : tensor<4x8xf32>
pd.param @b {onnx_name = "b"} : tensor<8xf32>
// CHECK-LABEL: func.func @main
func.func @main() -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x8xf32>
  %b = pd.param_ref @b : tensor<8xf32>
  %h = pd.gelu %w, %b {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>, tensor<8xf32>
  %l = pd.reduce_sum %h {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  // CHECK: %[[W:.+]] = pd.param_ref @w
  // CHECK-NEXT: %[[B:.+]] = pd.param_ref @b
  // CHECK: %[[DH:.+]] = pd.broadcast_axes
  // CHECK-NEXT: %[[DW:.+]] = pd.gelu_grad %[[DH]], %[[W]], %[[B]] {approximate = #pd.gelu<tanh>, pd.grad_of = 2 : i64} : tensor<4x8xf32>, tensor<8xf32>
  // CHECK-NEXT: %[[DB:.+]] = pd.sum_to %[[DW]] {pd.grad_of = 2 : i64} : tensor<4x8xf32> -> tensor<8xf32>
  // CHECK-NEXT: pd.accumulate_grad @b, %[[DB]]
  // CHECK-NEXT: pd.accumulate_grad @w, %[[DW]]
  return %l : tensor<f32>
}

// -----

// add_layer_norm with a rhs bias (pd-fuse-bias-into-consumers): the bias
// gradient is the summands' gradient summed over the rows.
pd.param @w {onnx_name = "w"} : tensor<4x8xf32>
pd.param @g {onnx_name = "g"} : tensor<8xf32>
pd.param @c {onnx_name = "c"} : tensor<8xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x8xf32>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x8xf32>
  %g = pd.param_ref @g : tensor<8xf32>
  %c = pd.param_ref @c : tensor<8xf32>
  %s, %n = pd.add_layer_norm %x, %w, %g, %g, %c {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  %l = pd.reduce_sum %n {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  // CHECK: %[[DX:.+]], %[[DG:.+]], %[[DB:.+]] = pd.layer_norm_grad
  // CHECK-NEXT: %[[DC:.+]] = pd.sum_to %[[DX]] {pd.grad_of = 3 : i64} : tensor<4x8xf32> -> tensor<8xf32>
  // CHECK-DAG: pd.accumulate_grad @c, %[[DC]]
  // CHECK-DAG: pd.accumulate_grad @w, %[[DX]]
  return %l : tensor<f32>
}
