// RUN: pd-opt %s --pd-fuse-bias-gradients --split-input-file | FileCheck %s

// The MLP's up-projection bias: the sum of the GELU gradient's rows, read
// through the reshape that merges batch and positions, becomes the GELU
// gradient's second result. The GELU gradient keeps its attributes, its
// other users (the weight and input gradients' GEMMs) read its first
// result, the reshape left without users goes, and the measured costs add.
// CHECK-LABEL: func.func @mlp_up_bias
// CHECK-SAME: (%[[DG:.*]]: tensor<2x4x8xf32>, %[[H:.*]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[DH:.*]], %[[DB:.*]] = pd.gelu_grad %[[DG]], %[[H]] {approximate = #pd.gelu<tanh>, pd.grad_of = 7 : i64, pd.seconds = 3.000000e+00 : f64} : tensor<2x4x8xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[V:.*]] = pd.reshape %[[DH]] : tensor<2x4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[V]], %[[DB]]
func.func @mlp_up_bias(%dg: tensor<2x4x8xf32>, %h: tensor<2x4x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %dh = pd.gelu_grad %dg, %h {approximate = #pd.gelu<tanh>, pd.grad_of = 7 : i64, pd.seconds = 1.0 : f64} : tensor<2x4x8xf32>
  %v = pd.reshape %dh : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %w = pd.reshape %dh : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %db = pd.sum_to %w {pd.grad_of = 6 : i64, pd.seconds = 2.0 : f64} : tensor<8x8xf32> -> tensor<8xf32>
  return %v, %db : tensor<8x8xf32>, tensor<8xf32>
}

// -----

// Straight from the GELU gradient, no reshape; the rows of a 3-D tensor.
// CHECK-LABEL: func.func @direct
// CHECK-NEXT: %[[DH:.*]], %[[DB:.*]] = pd.gelu_grad %arg0, %arg1 : tensor<2x3x5xf32> -> tensor<5xf32>
// CHECK-NEXT: return %[[DH]], %[[DB]]
func.func @direct(%dg: tensor<2x3x5xf32>, %h: tensor<2x3x5xf32>) -> (tensor<2x3x5xf32>, tensor<5xf32>) {
  %dh = pd.gelu_grad %dg, %h : tensor<2x3x5xf32>
  %db = pd.sum_to %dh : tensor<2x3x5xf32> -> tensor<5xf32>
  return %dh, %db : tensor<2x3x5xf32>, tensor<5xf32>
}

// -----

// Sums that are not a bias gradient stay: to a trailing [1, N] shape (a
// broadcast over one leading dim of a rank-2 result), to a column (the
// last dim reduced), and through a reshape that changes the last dim.
// CHECK-LABEL: func.func @not_bias_gradients
// CHECK-NEXT: pd.gelu_grad %arg0, %arg1 : tensor<4x6xf32>{{$}}
// CHECK-COUNT-2: pd.sum_to
// CHECK-NEXT: pd.reshape
// CHECK-NEXT: pd.sum_to
func.func @not_bias_gradients(%dg: tensor<4x6xf32>, %h: tensor<4x6xf32>) -> (tensor<1x6xf32>, tensor<4x1xf32>, tensor<3xf32>) {
  %dh = pd.gelu_grad %dg, %h : tensor<4x6xf32>
  %a = pd.sum_to %dh : tensor<4x6xf32> -> tensor<1x6xf32>
  %b = pd.sum_to %dh : tensor<4x6xf32> -> tensor<4x1xf32>
  %v = pd.reshape %dh : tensor<4x6xf32> -> tensor<8x3xf32>
  %c = pd.sum_to %v : tensor<8x3xf32> -> tensor<3xf32>
  return %a, %b, %c : tensor<1x6xf32>, tensor<4x1xf32>, tensor<3xf32>
}

// -----

// Another producer (a plain elementwise gradient) stays; of two sums of one
// GELU gradient only the first is fused (the op has one bias result).
// CHECK-LABEL: func.func @other_producers
// CHECK: pd.sum_to %arg0
// CHECK: %[[DH:.*]], %[[DB:.*]] = pd.gelu_grad %arg0, %arg1 : tensor<4x6xf32> -> tensor<6xf32>
// CHECK: %[[SECOND:.*]] = pd.sum_to %[[DH]] : tensor<4x6xf32> -> tensor<6xf32>
// CHECK: return %{{.*}}, %[[DB]], %[[SECOND]]
func.func @other_producers(%dg: tensor<4x6xf32>, %h: tensor<4x6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %a = pd.sum_to %dg : tensor<4x6xf32> -> tensor<6xf32>
  %dh = pd.gelu_grad %dg, %h : tensor<4x6xf32>
  %b = pd.sum_to %dh : tensor<4x6xf32> -> tensor<6xf32>
  %c = pd.sum_to %dh : tensor<4x6xf32> -> tensor<6xf32>
  return %a, %b, %c : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// -----

// A GELU gradient at x + bias (the bias moved into the GELU by
// pd-fuse-bias-into-consumers) keeps its input bias when its bias
// gradient joins it.
// CHECK-LABEL: func.func @input_bias
// CHECK-NEXT: %[[DH:.*]], %[[DB:.*]] = pd.gelu_grad %arg0, %arg1, %arg2 : tensor<4x6xf32>, tensor<6xf32> -> tensor<6xf32>
// CHECK-NEXT: return %[[DH]], %[[DB]]
func.func @input_bias(%dg: tensor<4x6xf32>, %h: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>) {
  %dh = pd.gelu_grad %dg, %h, %b : tensor<4x6xf32>, tensor<6xf32>
  %db = pd.sum_to %dh : tensor<4x6xf32> -> tensor<6xf32>
  return %dh, %db : tensor<4x6xf32>, tensor<6xf32>
}
