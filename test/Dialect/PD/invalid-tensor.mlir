// RUN: pd-opt %s --split-input-file --verify-diagnostics

// Tests that perm must be a permutation.
func.func @perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.transpose' op perm is not a permutation of [0, 2)}}
  %0 = pd.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

// Tests that the result of a transpose is the permuted shape.
func.func @perm_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.transpose' op result shape [2,3] is not the permuted input shape}}
  %0 = pd.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that a reshape keeps the element count.
func.func @reshape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.reshape' op cannot reshape 'tensor<2x3xf32>' to 'tensor<7xf32>' (element counts or types differ)}}
  %0 = pd.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

// Tests the result shape of gather.
func.func @gather(%t: tensor<7x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'pd.gather' op gathered shape [3,5] is not [3,4]}}
  %0 = pd.gather %t, %i : tensor<7x4xf32>, tensor<3xi64> -> tensor<3x5xf32>
  return
}

// -----

// Tests that batched matmul operands share their batch dimensions.
func.func @batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op batch dimensions differ}}
  %0 = pd.batch_matmul %a, %b : tensor<2x3x4xf32>, tensor<3x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

// Tests the contraction dimensions of batched matmul.
func.func @batch_k(%a: tensor<2x3x4xf32>, %b: tensor<2x5x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op contraction dimensions differ: 4 vs 5}}
  %0 = pd.batch_matmul %a, %b : tensor<2x3x4xf32>, tensor<2x5x5xf32> -> tensor<2x3x5xf32>
  return
}
