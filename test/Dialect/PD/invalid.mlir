// RUN: pd-opt %s --split-input-file --verify-diagnostics

// Tests that a matmul with mismatched contraction dimensions is rejected.
func.func @matmul_k(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error @+1 {{'pd.matmul' op contraction dimensions differ: 8 vs 7}}
  %0 = pd.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Tests that a matmul result must have shape [m, n].
func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'pd.matmul' op result shape [4,15] is not [4,16]}}
  %0 = pd.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x15xf32>
  return
}

// -----

// Tests that matmul takes 2-D operands.
func.func @matmul_rank(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'pd.matmul' op expects 2-D operands, got ranks 3 and 2}}
  %0 = pd.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Tests that operands of a broadcasting op must broadcast.
func.func @add_shapes(%a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'pd.add' op operand shapes [4,8] and [3] do not broadcast}}
  %0 = pd.add %a, %b : tensor<4x8xf32>, tensor<3xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that the result of a broadcasting op has the broadcast shape.
func.func @add_result(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'pd.mul' op result shape [8] is not the broadcast shape [4,8]}}
  %0 = pd.mul %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that sum_to only reduces over broadcast dimensions.
func.func @sum_to(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.sum_to' op result shape [3] does not broadcast to [4,8]}}
  %0 = pd.sum_to %a : tensor<4x8xf32> -> tensor<3xf32>
  return
}

// -----

// Tests that the loss checks labels against logits.
func.func @loss_labels(%z: tensor<4x10xf32>, %y: tensor<5xi64>) {
  // expected-error @+1 {{'pd.softmax_cross_entropy' op labels shape [5] does not match logits [4,10] (expected [4])}}
  %0 = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<5xi64> -> tensor<f32>
  return
}

// -----

// Tests that the loss takes 2-D logits.
func.func @loss_rank(%z: tensor<10xf32>, %y: tensor<10xi64>) {
  // expected-error @+1 {{'pd.softmax_cross_entropy' op expects logits of rank 2 [N, C], got rank 1}}
  %0 = pd.softmax_cross_entropy %z, %y : tensor<10xf32>, tensor<10xi64> -> tensor<f32>
  return
}

// -----

// Tests that the loss result is a scalar or one loss per row.
func.func @loss_result(%z: tensor<4x10xf32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{'pd.softmax_cross_entropy' op expects a scalar result (reduction mean) or one loss per row [4], got [10]}}
  %0 = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<10xf32>
  return
}

// -----

// Tests that the loss with its gradient checks labels against logits.
func.func @loss_with_grad_labels(%z: tensor<4x10xf32>, %y: tensor<5xi64>) {
  // expected-error @+1 {{'pd.softmax_cross_entropy_with_grad' op labels shape [5] does not match logits [4,10] (expected [4])}}
  %0:2 = pd.softmax_cross_entropy_with_grad %z, %y : tensor<4x10xf32>, tensor<5xi64> -> tensor<f32>, tensor<4x10xf32>
  return
}

// -----

// Tests that the gradient of the loss with its gradient has the logits' type.
func.func @loss_with_grad_type(%z: tensor<4x10xf32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{'pd.softmax_cross_entropy_with_grad' op expects the gradient's type to be the logits' 'tensor<4x10xf32>'}}
  %0:2 = pd.softmax_cross_entropy_with_grad %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>, tensor<10x4xf32>
  return
}

// -----

// Tests that the loss gradient is a scalar or one per row.
func.func @loss_grad(%z: tensor<4x10xf32>, %y: tensor<4xi64>, %g: tensor<2xf32>) {
  // expected-error @+1 {{'pd.softmax_cross_entropy_grad' op expects a scalar gradient or one per row [4], got [2]}}
  %0 = pd.softmax_cross_entropy_grad %g, %z, %y : tensor<2xf32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  return
}

// -----

// Tests that param_ref names an existing parameter.
func.func @param_missing() {
  // expected-error @+1 {{'pd.param_ref' op 'nope' does not name a pd.param}}
  %0 = pd.param_ref @nope : tensor<4xf32>
  return
}

// -----

pd.param @w {onnx_name = "w"} : tensor<4xf32>
// Tests that param_ref has the parameter's type.
func.func @param_type() {
  // expected-error @+1 {{'pd.param_ref' op type 'tensor<5xf32>' does not match the type 'tensor<4xf32>' of parameter 'w'}}
  %0 = pd.param_ref @w : tensor<5xf32>
  return
}

// -----

pd.param @w {onnx_name = "w"} : tensor<4xf32>
// Tests that a gradient has its parameter's type.
func.func @accumulate_type(%g: tensor<3xf32>) {
  // expected-error @+1 {{'pd.accumulate_grad' op type 'tensor<3xf32>' does not match the type 'tensor<4xf32>' of parameter 'w'}}
  pd.accumulate_grad @w, %g : tensor<3xf32>
  return
}

// -----

// Tests that a constant's value has the result type.
func.func @constant_type() {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %0 = "pd.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

// Tests that a matmul's bias is [N] of the product.
func.func @matmul_bias_shape(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'pd.matmul' op bias shape [4] is not [3]}}
  %0 = pd.matmul %a, %b, %c : tensor<4x8xf32>, tensor<8x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  return
}
