// RUN: pd-opt %s --split-input-file --pd-autodiff | FileCheck %s

// Tests that a two-layer MLP gets the reverse-mode gradient of its loss:
// the seed, the loss gradient, relu's mask, bias gradients summed over the
// batch, both weight gradients, and no gradient for the graph input.

pd.param @w1 {onnx_name = "fc1.weight"} : tensor<16x8xf32>
pd.param @b1 {onnx_name = "fc1.bias"} : tensor<16xf32>
pd.param @w2 {onnx_name = "fc2.weight"} : tensor<10x16xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x8xf32> {pd.input_name = "x"}, %y: tensor<4xi64> {pd.input_name = "y"}) -> tensor<f32> {
  // CHECK: %[[W1:.+]] = pd.param_ref @w1 {pd.op_id = 0 : i64}
  %w1 = pd.param_ref @w1 : tensor<16x8xf32>
  // CHECK-NEXT: %[[B1:.+]] = pd.param_ref @b1 {pd.op_id = 1 : i64}
  %b1 = pd.param_ref @b1 : tensor<16xf32>
  // CHECK-NEXT: %[[H:.+]] = pd.matmul %arg0, %[[W1]] {pd.op_id = 2 : i64, transpose_rhs}
  %h = pd.matmul %x, %w1 {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %[[HB:.+]] = pd.add %[[H]], %[[B1]] {pd.op_id = 3 : i64}
  %hb = pd.add %h, %b1 : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %[[R:.+]] = pd.relu %[[HB]] {pd.op_id = 4 : i64}
  %r = pd.relu %hb : tensor<4x16xf32>
  // CHECK-NEXT: %[[W2:.+]] = pd.param_ref @w2 {pd.op_id = 5 : i64}
  %w2 = pd.param_ref @w2 : tensor<10x16xf32>
  // CHECK-NEXT: %[[Z:.+]] = pd.matmul %[[R]], %[[W2]] {pd.op_id = 6 : i64, transpose_rhs}
  %z = pd.matmul %r, %w2 {transpose_rhs} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  // CHECK-NEXT: %[[L:.+]] = pd.softmax_cross_entropy %[[Z]], %arg1 {pd.op_id = 7 : i64}
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  // CHECK-NEXT: %[[S:.+]] = pd.grad_seed {pd.grad_of = 7 : i64} : tensor<f32>
  // CHECK-NEXT: %[[DZ:.+]] = pd.softmax_cross_entropy_grad %[[S]], %[[Z]], %arg1 {pd.grad_of = 7 : i64}
  // dR = dZ W2 (Z = R W2^T), dW2 = dZ^T R.
  // CHECK-NEXT: %[[DR:.+]] = pd.matmul %[[DZ]], %[[W2]] {pd.grad_of = 6 : i64} : tensor<4x10xf32>, tensor<10x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %[[DW2:.+]] = pd.matmul %[[DZ]], %[[R]] {pd.grad_of = 6 : i64, transpose_lhs} : tensor<4x10xf32>, tensor<4x16xf32> -> tensor<10x16xf32>
  // CHECK-NEXT: pd.accumulate_grad @w2, %[[DW2]] {pd.grad_of = 5 : i64}
  // CHECK-NEXT: %[[DHB:.+]] = pd.relu_grad %[[DR]], %[[R]] {pd.grad_of = 4 : i64}
  // CHECK-NEXT: %[[DB1:.+]] = pd.sum_to %[[DHB]] {pd.grad_of = 3 : i64} : tensor<4x16xf32> -> tensor<16xf32>
  // The gradient of the input x is dead and removed: nothing between the
  // bias and the weight gradient.
  // CHECK-NEXT: %[[DW1:.+]] = pd.matmul %[[DHB]], %arg0 {pd.grad_of = 2 : i64, transpose_lhs}
  // CHECK-NEXT: pd.accumulate_grad @b1, %[[DB1]] {pd.grad_of = 1 : i64}
  // CHECK-NEXT: pd.accumulate_grad @w1, %[[DW1]] {pd.grad_of = 0 : i64}
  // CHECK-NEXT: return %[[L]]
  return %l : tensor<f32>
}

// -----

// Tests that a value used twice gets the sum of both gradients.
pd.param @w {onnx_name = "w"} : tensor<4x4xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x4xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x4xf32>
  %a = pd.mul %w, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %l = pd.softmax_cross_entropy %a, %y : tensor<4x4xf32>, tensor<4xi64> -> tensor<f32>
  // CHECK: %[[G1:.+]] = pd.mul %{{.+}}, %{{.+}} {pd.grad_of = 1 : i64}
  // CHECK-NEXT: %[[G2:.+]] = pd.mul %{{.+}}, %{{.+}} {pd.grad_of = 1 : i64}
  // CHECK-NEXT: %[[SUM:.+]] = pd.add %[[G1]], %[[G2]] {pd.grad_of = 1 : i64}
  // CHECK-NEXT: pd.accumulate_grad @w, %[[SUM]]
  return %l : tensor<f32>
}

// -----

// Tests that a broadcast operand of sub gets the negated, summed gradient.
pd.param @b {onnx_name = "b"} : tensor<4xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<2x4xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %b = pd.param_ref @b : tensor<4xf32>
  %s = pd.sub %x, %b : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %l = pd.softmax_cross_entropy %s, %y : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  // CHECK: %[[NEG:.+]] = pd.scale %{{.+}}, -1.000000e+00 {pd.grad_of = 1 : i64}
  // CHECK-NEXT: %[[DB:.+]] = pd.sum_to %[[NEG]] {pd.grad_of = 1 : i64} : tensor<2x4xf32> -> tensor<4xf32>
  // CHECK-NEXT: pd.accumulate_grad @b, %[[DB]]
  return %l : tensor<f32>
}

// -----

// Tests that a matmul's bias gets dC summed over the rows (no gradient
// for the data input).
pd.param @w {onnx_name = "w"} : tensor<4x3xf32>
pd.param @b {onnx_name = "b"} : tensor<3xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<2x4xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x3xf32>
  %b = pd.param_ref @b : tensor<3xf32>
  %z = pd.matmul %x, %w, %b : tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = pd.softmax_cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi64> -> tensor<f32>
  // CHECK: %[[DZ:.+]] = pd.softmax_cross_entropy_grad
  // CHECK-NEXT: %[[DW:.+]] = pd.matmul %arg0, %[[DZ]] {pd.grad_of = 2 : i64, transpose_lhs}
  // CHECK-NEXT: %[[DB:.+]] = pd.sum_to %[[DZ]] {pd.grad_of = 2 : i64} : tensor<2x3xf32> -> tensor<3xf32>
  // CHECK-DAG: pd.accumulate_grad @w, %[[DW]]
  // CHECK-DAG: pd.accumulate_grad @b, %[[DB]]
  return %l : tensor<f32>
}
