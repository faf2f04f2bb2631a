// RUN: pd-opt %s --split-input-file --verify-diagnostics

// Tests that reduction axes must be sorted, unique and in range.
func.func @axes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.reduce_sum' op axes must be sorted, unique and in [0, 2)}}
  %0 = pd.reduce_sum %x {axes = array<i64: 2>} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that a reduction's result shape drops (or keeps as 1) the axes.
func.func @reduce_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.reduce_sum' op result shape [8] is not [4]}}
  %0 = pd.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that broadcast_axes' operand is the result without those axes.
func.func @broadcast_shape(%x: tensor<5xf32>) {
  // expected-error @+1 {{'pd.broadcast_axes' op operand shape [5] is not the result shape [4,8] without the broadcast axes}}
  %0 = pd.broadcast_axes %x {axes = array<i64: 1>} : tensor<5xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that division operands must broadcast.
func.func @div(%a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'pd.div' op operand shapes [4,8] and [3] do not broadcast}}
  %0 = pd.div %a, %b : tensor<4x8xf32>, tensor<3xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that the softmax axis is in range.
func.func @softmax(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.softmax' op axis 2 is out of range for rank 2}}
  %0 = pd.softmax %x {axis = 2} : tensor<4x8xf32>
  return
}

// -----

// Tests that layer norm's scale has the normalized shape.
func.func @layer_norm(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.layer_norm' op scale and bias must have the normalized shape [8], got [4]}}
  %0 = pd.layer_norm %x, %g, %g {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that pd.layer_norm_grad's input_grad_sum is a vector of its last
// dimension.
func.func @layer_norm_grad_sum(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'pd.layer_norm_grad' op input_grad_sum shape [4] is not the last dimension of [4,8]}}
  %dx, %dg, %db, %ds = pd.layer_norm_grad %x, %x, %g {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>
  return
}

// -----

// Tests that pd.layer_norm_grad's input_grad_sum needs a norm over the last
// dimension alone.
func.func @layer_norm_grad_sum_axis(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.layer_norm_grad' op an input_grad_sum needs the norm over the last dimension}}
  %dx, %dg, %db, %ds = pd.layer_norm_grad %x, %x, %g {axis = 1, epsilon = 1.0e-5 : f32} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

// Tests that pd.gelu_grad's bias gradient is a vector of its last dimension.
func.func @gelu_grad_bias(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.gelu_grad' op bias gradient shape [4] is not the last dimension of [4,8]}}
  %dx, %db = pd.gelu_grad %dy, %x : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that pd.gelu's bias is a vector of its last dimension.
func.func @gelu_bias(%x: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'pd.gelu' op bias shape [4] is not the last dimension of [4,8]}}
  %y = pd.gelu %x, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

// Tests that pd.gelu_grad's input bias is a vector of its last dimension.
func.func @gelu_grad_input_bias(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %b: tensor<8x1xf32>) {
  // expected-error @+1 {{'pd.gelu_grad' op input bias shape [8,1] is not the last dimension of [4,8]}}
  %dx = pd.gelu_grad %dy, %x, %b : tensor<4x8xf32>, tensor<8x1xf32>
  return
}

// -----

// Tests that pd.gelu_grad's operands and result have one type.
func.func @gelu_grad_types(%dy: tensor<4x8xf32>, %x: tensor<2x16xf32>) {
  // expected-error @+1 {{'pd.gelu_grad' op failed to verify that all of {grad, input, result} have same type}}
  %dx = "pd.gelu_grad"(%dy, %x) : (tensor<4x8xf32>, tensor<2x16xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that pd.gelu's approximation is a #pd.gelu (none or tanh).
func.func @gelu(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.gelu' op attribute 'approximate' failed to satisfy constraint: the form of GELU}}
  %0 = pd.gelu %x {approximate = "fast"} : tensor<4x8xf32>
  return
}

// -----

// Tests that pd.dropout's ratio lies in (0, 1).
func.func @dropout_ratio(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.dropout' op ratio 1.000000e+00 is outside (0, 1)}}
  %0 = pd.dropout %x {ratio = 1.000000e+00 : f32, rng_id = 0 : i64} : tensor<4x8xf32>
  return
}

// -----

// Tests that pd.dropout's rng_id fits the 32-bit counter word.
func.func @dropout_id(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.dropout' op rng_id 4294967296 is outside [0, 2^32)}}
  %0 = pd.dropout %x {ratio = 5.000000e-01 : f32, rng_id = 4294967296 : i64} : tensor<4x8xf32>
  return
}

// -----

// Tests that pd.pow_broadcast's result is the broadcast shape.
func.func @pow_broadcast_shape(%x: tensor<4x8xf32>, %p: tensor<8xf32>) {
  // expected-error @+1 {{'pd.pow_broadcast' op result shape [8,4] is not the broadcast shape [4,8]}}
  %0 = pd.pow_broadcast %x, %p : tensor<4x8xf32>, tensor<8xf32> -> tensor<8x4xf32>
  return
}

// -----

// Tests that pd.rms_norm's scale has the normalized shape.
func.func @rms_norm_scale(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.rms_norm' op scale must have the normalized shape [8], got [4]}}
  %0 = pd.rms_norm %x, %g {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that pd.max's result is the broadcast shape.
func.func @max_shape(%x: tensor<4x8xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{'pd.max' op result shape [8] is not the broadcast shape [4,8]}}
  %0 = pd.max %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that a masked softmax's mask is [R, N] with R dividing the rows.
func.func @masked_softmax_mask_shape(%x: tensor<2x3x4xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+1 {{'pd.masked_softmax' op mask must be [R, 4] or [G, R, 4] with G R dividing the 6 rows, got [4,4]}}
  %0 = pd.masked_softmax %x, %m : tensor<2x3x4xf32>, tensor<4x4xi1>
  return
}

// -----

// Tests that a masked softmax's [G, R, N] mask has G R dividing the rows.
func.func @masked_softmax_group_shape(%x: tensor<2x3x4xf32>, %m: tensor<4x1x4xi1>) {
  // expected-error @+1 {{'pd.masked_softmax' op mask must be [R, 4] or [G, R, 4] with G R dividing the 6 rows, got [4,1,4]}}
  %0 = pd.masked_softmax %x, %m : tensor<2x3x4xf32>, tensor<4x1x4xi1>
  return
}

// -----

// Tests that a masked softmax's mask has rank 2 or 3.
func.func @masked_softmax_mask_rank(%x: tensor<2x3x4xf32>, %m: tensor<4xi1>) {
  // expected-error @+1 {{'pd.masked_softmax' op mask must be [R, 4] or [G, R, 4] with G R dividing the 6 rows, got [4]}}
  %0 = pd.masked_softmax %x, %m : tensor<2x3x4xf32>, tensor<4xi1>
  return
}

// -----

// Tests that diagonal_blocks takes a mask of one group (a causal mask).
func.func @masked_softmax_diagonal_groups(%x: tensor<2x4x4xf32>, %m: tensor<2x4x4xi1>) {
  // expected-error @+1 {{'pd.masked_softmax' op diagonal_blocks needs an [R, N] mask}}
  %0 = pd.masked_softmax %x, %m {diagonal_blocks} : tensor<2x4x4xf32>, tensor<2x4x4xi1>
  return
}

// -----

// Tests that a constant mask keeps an element of every row.
func.func @masked_softmax_empty_row(%x: tensor<2x2xf32>) {
  %m = pd.constant dense<[[true, false], [false, false]]> : tensor<2x2xi1>
  // expected-error @+1 {{'pd.masked_softmax' op mask row 1 keeps no element}}
  %0 = pd.masked_softmax %x, %m : tensor<2x2xf32>, tensor<2x2xi1>
  return
}

// -----

// Tests that a causal softmax gradient has rows of square matrices.
func.func @masked_softmax_grad_causal_shape(%dy: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'pd.masked_softmax_grad' op causal needs [..., T, T] rows, got [2,3,4]}}
  %0 = pd.masked_softmax_grad %dy, %y {causal} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that add_layer_norm adds operands of one shape.
func.func @add_layer_norm_broadcast(%a: tensor<2x4xf32>, %b: tensor<1x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.add_layer_norm' op operands and sum must have one type}}
  %s, %y = pd.add_layer_norm %a, %b, %g, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : tensor<2x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

// Tests that pd.masked_softmax's diagonal_blocks needs a mask over square rows.
func.func @masked_softmax_diagonal_blocks(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'pd.masked_softmax' op diagonal_blocks needs a mask over [..., T, T] rows}}
  %y = pd.masked_softmax %x {diagonal_blocks} : tensor<4x8xf32>
  return
}

// -----

// Tests that pd.masked_softmax_grad's diagonal_blocks needs causal.
func.func @masked_softmax_grad_diagonal_blocks(%dy: tensor<8x8xf32>, %y: tensor<8x8xf32>) {
  // expected-error @+1 {{'pd.masked_softmax_grad' op diagonal_blocks needs causal}}
  %dx = pd.masked_softmax_grad %dy, %y {diagonal_blocks} : tensor<8x8xf32>
  return
}

// -----

// Tests that add_layer_norm's rhs bias is a vector of the last dimension.
func.func @add_layer_norm_rhs_bias(%a: tensor<2x4xf32>, %g: tensor<4xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'pd.add_layer_norm' op rhs bias shape [2] is not the last dimension of [2,4]}}
  %s, %y = pd.add_layer_norm %a, %a, %g, %g, %c {axis = 1 : i64, epsilon = 1.0e-5 : f32} : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

// Tests that a rhs bias needs the norm over the last dimension alone.
func.func @add_layer_norm_rhs_bias_axis(%a: tensor<2x4xf32>, %g: tensor<2x4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'pd.add_layer_norm' op a rhs bias needs the norm over the last dimension}}
  %s, %y = pd.add_layer_norm %a, %a, %g, %g, %c {axis = 0 : i64, epsilon = 1.0e-5 : f32} : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

// Tests that pd.rotary's tables broadcast to the input as one run of dims.
func.func @rotary_table_not_a_run(%x: tensor<2x4x8x16xf32>, %c: tensor<2x1x8x16xf32>) {
  // expected-error @+1 {{'pd.rotary' op cos and sin [2,1,8,16] must broadcast to the input [2,4,8,16] as one run of dims, with an even last axis no longer than the input's}}
  %0 = pd.rotary %x, %c, %c : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>
  return
}

// -----

// Tests that pd.rotary rotates an even number of columns.
func.func @rotary_odd_axis(%x: tensor<2x8x15xf32>, %c: tensor<8x15xf32>) {
  // expected-error @+1 {{'pd.rotary' op cos and sin [8,15] must broadcast to the input [2,8,15] as one run of dims, with an even last axis no longer than the input's}}
  %0 = pd.rotary %x, %c, %c : tensor<2x8x15xf32>, tensor<8x15xf32>
  return
}

// -----

// Tests that pd.rotary's tables are no wider than the input (partial
// rotary rotates the leading columns).
func.func @rotary_tables_too_wide(%x: tensor<2x8x16xf32>, %c: tensor<8x18xf32>) {
  // expected-error @+1 {{'pd.rotary' op cos and sin [8,18] must broadcast to the input [2,8,16] as one run of dims, with an even last axis no longer than the input's}}
  %0 = pd.rotary %x, %c, %c : tensor<2x8x16xf32>, tensor<8x18xf32>
  return
}

// -----

// Tests that pd.rotary's cos and sin are of one type.
func.func @rotary_table_types(%x: tensor<2x8x16xf32>, %c: tensor<8x16xf32>, %s: tensor<1x16xf32>) {
  // expected-error @+1 {{'pd.rotary' op failed to verify that all of {cos, sin} have same type}}
  %0 = "pd.rotary"(%x, %c, %s) : (tensor<2x8x16xf32>, tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

// Tests that pd.add_rms_norm's scale has the normalized trailing shape.
func.func @add_rms_norm_scale(%a: tensor<2x4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.add_rms_norm' op scale must have the normalized shape [8], got [4]}}
  %s, %y = pd.add_rms_norm %a, %a, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>, tensor<4xf32>
  return
}

// -----

// Tests that pd.rms_norm_grad's addend has the input gradient's type.
func.func @rms_norm_grad_addend(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{'pd.rms_norm_grad' op addend must have the input gradient's type}}
  %dx, %dg = pd.rms_norm_grad %x, %x, %g, %d {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  return
}
