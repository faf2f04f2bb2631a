// RUN: pd-opt %s --pd-fuse-bias-gradients --split-input-file | FileCheck %s
// RUN: pd-opt %s --pd-fuse-bias-gradients=same-forward-op --split-input-file | FileCheck %s --check-prefix=SAME

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

// -----

// A bias moved into the residual add + layer norm (an attention output or
// MLP down projection's): its gradient, the layer-norm gradient's
// input_grad summed over the rows through the reshape that merges batch
// and positions, becomes the layer-norm gradient's input_grad_sum. The op
// keeps its addend and attributes, its other results keep their users and
// the measured costs add.
// CHECK-LABEL: func.func @residual_norm_bias
// CHECK-SAME: (%[[DY:.*]]: tensor<2x4x8xf32>, %[[S:.*]]: tensor<2x4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[DS:.*]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[DX:.*]], %[[DG:.*]], %[[DBETA:.*]], %[[DB:.*]] = pd.layer_norm_grad %[[DY]], %[[S]], %[[G]], %[[DS]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32, pd.seconds = 5.000000e+00 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT: return %[[DX]], %[[DG]], %[[DBETA]], %[[DB]]
func.func @residual_norm_bias(%dy: tensor<2x4x8xf32>, %s: tensor<2x4x8xf32>, %g: tensor<8xf32>, %ds: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dg, %dbeta = pd.layer_norm_grad %dy, %s, %g, %ds {axis = 2 : i64, epsilon = 9.99999974E-6 : f32, pd.seconds = 3.0 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %v = pd.reshape %dx : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %db = pd.sum_to %v {pd.seconds = 2.0 : f64} : tensor<8x8xf32> -> tensor<8xf32>
  return %dx, %dg, %dbeta, %db : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Layer-norm gradient sums that stay: of a norm over the last two
// dimensions (its rows are not the bias's), of the scale gradient (not
// the input's), and a second sum of an input_grad already summed.
// CHECK-LABEL: func.func @norm_sums_that_stay
// CHECK: pd.layer_norm_grad {{.*}} -> tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>{{$}}
// CHECK: pd.sum_to
// CHECK: pd.sum_to
// CHECK: %[[DX:.*]], %{{.*}}, %{{.*}}, %[[DB:.*]] = pd.layer_norm_grad {{.*}} -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[SECOND:.*]] = pd.sum_to %[[DX]]
// CHECK-NEXT: return %{{.*}}, %{{.*}}, %[[DB]], %[[SECOND]]
func.func @norm_sums_that_stay(%dy: tensor<2x4x8xf32>, %x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %dy2: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g2: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dg, %db = pd.layer_norm_grad %dy, %x, %g {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  %a = pd.sum_to %dx : tensor<2x4x8xf32> -> tensor<8xf32>
  %b = pd.sum_to %dg : tensor<4x8xf32> -> tensor<8xf32>
  %dx2, %dg2, %db2 = pd.layer_norm_grad %dy2, %x2, %g2 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %c = pd.sum_to %dx2 : tensor<4x8xf32> -> tensor<8xf32>
  %d = pd.sum_to %dx2 : tensor<4x8xf32> -> tensor<8xf32>
  return %a, %b, %c, %d : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// With same-forward-op (on @main, before partitioning): the pair that
// differentiates one forward op (a GELU that took its Linear's bias) is
// fused; a sum that differentiates another forward op (a matmul that kept
// its bias), which a stage cut may put on another stage than the GELU
// gradient, stays for the stage functions. Without the option, both fuse.
// SAME-LABEL: func.func @one_forward_op
// SAME-NEXT: %[[DH:.*]], %[[DB:.*]] = pd.gelu_grad %arg0, %arg1, %arg2 {pd.grad_of = 4 : i64, pd.seconds = 3.000000e+00 : f64} : tensor<4x6xf32>, tensor<6xf32> -> tensor<6xf32>
// SAME-NEXT: %[[DH2:.*]] = pd.gelu_grad %arg0, %arg1 {pd.grad_of = 5 : i64} : tensor<4x6xf32>{{$}}
// SAME-NEXT: %[[DB2:.*]] = pd.sum_to %[[DH2]] {pd.grad_of = 3 : i64} : tensor<4x6xf32> -> tensor<6xf32>
// SAME-NEXT: return %[[DH]], %[[DB]], %[[DH2]], %[[DB2]]
// CHECK-LABEL: func.func @one_forward_op
// CHECK-NEXT: pd.gelu_grad {{.*}} -> tensor<6xf32>
// CHECK-NEXT: pd.gelu_grad {{.*}} -> tensor<6xf32>
// CHECK-NEXT: return
func.func @one_forward_op(%dg: tensor<4x6xf32>, %h: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>, tensor<4x6xf32>, tensor<6xf32>) {
  %dh = pd.gelu_grad %dg, %h, %b {pd.grad_of = 4 : i64, pd.seconds = 1.0 : f64} : tensor<4x6xf32>, tensor<6xf32>
  %db = pd.sum_to %dh {pd.grad_of = 4 : i64, pd.seconds = 2.0 : f64} : tensor<4x6xf32> -> tensor<6xf32>
  %dh2 = pd.gelu_grad %dg, %h {pd.grad_of = 5 : i64} : tensor<4x6xf32>
  %db2 = pd.sum_to %dh2 {pd.grad_of = 3 : i64} : tensor<4x6xf32> -> tensor<6xf32>
  return %dh, %db, %dh2, %db2 : tensor<4x6xf32>, tensor<6xf32>, tensor<4x6xf32>, tensor<6xf32>
}
