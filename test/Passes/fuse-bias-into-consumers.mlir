// RUN: pd-opt %s --pd-fuse-bias-into-consumers --split-input-file | FileCheck %s

// A transformer MLP's up projection as pd-fuse-matmul-bias leaves it: the
// bias moves from the matmul into the GELU that reads the product through
// the reshape back to 3-D; the GEMM no longer starts from the bias rows.
// CHECK-LABEL: func.func @mlp_up
// CHECK-SAME: (%[[X:.*]]: tensor<32x64xf32>, %[[W:.*]]: tensor<256x64xf32>, %[[B:.*]]: tensor<256xf32>)
// CHECK-NEXT: %[[Z:.*]] = pd.matmul %[[X]], %[[W]] {transpose_rhs} : tensor<32x64xf32>, tensor<256x64xf32> -> tensor<32x256xf32>
// CHECK-NEXT: %[[R:.*]] = pd.reshape %[[Z]] : tensor<32x256xf32> -> tensor<2x16x256xf32>
// CHECK-NEXT: %[[H:.*]] = pd.gelu %[[R]], %[[B]] {approximate = #pd.gelu<tanh>} : tensor<2x16x256xf32>, tensor<256xf32>
// CHECK-NEXT: return %[[H]]
func.func @mlp_up(%x: tensor<32x64xf32>, %w: tensor<256x64xf32>, %b: tensor<256xf32>) -> tensor<2x16x256xf32> {
  %z = pd.matmul %x, %w, %b {transpose_rhs} : tensor<32x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<32x256xf32>
  %r = pd.reshape %z : tensor<32x256xf32> -> tensor<2x16x256xf32>
  %h = pd.gelu %r {approximate = #pd.gelu<tanh>} : tensor<2x16x256xf32>
  return %h : tensor<2x16x256xf32>
}

// -----

// Directly, 2-D, alpha kept on the matmul.
// CHECK-LABEL: func.func @direct
// CHECK-NEXT: %[[Z:.*]] = pd.matmul %arg0, %arg1 {alpha = 2.000000e+00 : f32} : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[H:.*]] = pd.gelu %[[Z]], %arg2 : tensor<4x3xf32>, tensor<3xf32>
// CHECK-NEXT: return %[[H]]
func.func @direct(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %z = pd.matmul %x, %w, %b {alpha = 2.0 : f32} : tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %h = pd.gelu %z : tensor<4x3xf32>
  return %h : tensor<4x3xf32>
}

// -----

// Left alone: a product with another reader (the biased value is needed
// as it is), a reshape with another reader, a reshape that changes the row
// length the bias runs along, a matmul without a bias, and a GELU whose
// input is not a matmul.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: pd.matmul {{.*}}, {{.*}}, {{.*}} :
// CHECK-NOT: pd.gelu {{.*}}, {{.*}} :
func.func @left_alone(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>, %b3: tensor<3xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<2x2x6xf32>, tensor<2x2x6xf32>, tensor<8x3xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %z0 = pd.matmul %x, %w, %b : tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %h0 = pd.gelu %z0 : tensor<4x6xf32>
  %z1 = pd.matmul %x, %w, %b : tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %r1 = pd.reshape %z1 : tensor<4x6xf32> -> tensor<2x2x6xf32>
  %h1 = pd.gelu %r1 : tensor<2x2x6xf32>
  %z2 = pd.matmul %x, %w, %b : tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %r2 = pd.reshape %z2 : tensor<4x6xf32> -> tensor<8x3xf32>
  %h2 = pd.gelu %r2 : tensor<8x3xf32>
  %z3 = pd.matmul %x, %w : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  %h3 = pd.gelu %z3 : tensor<4x6xf32>
  %z4 = pd.matmul %x, %w, %b : tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %s4 = pd.add %z4, %z4 : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %h4 = pd.gelu %s4 : tensor<4x6xf32>
  return %z0, %h0, %r1, %h1, %h2, %h3, %h4 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<2x2x6xf32>, tensor<2x2x6xf32>, tensor<8x3xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// A pre-LN block's attention output projection and the residual add with
// the next norm (pd-fuse-residual-layer-norm): the bias moves into the
// norm as rhs_bias, the product as the add's rhs; and as its lhs (the MLP's
// down projection added on the left), the operands swapped.
// CHECK-LABEL: func.func @residual_norm
// CHECK-SAME: (%[[R:.*]]: tensor<2x4x8xf32>, %[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Z:.*]] = pd.matmul %[[X]], %[[W]] {transpose_rhs} : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[V:.*]] = pd.reshape %[[Z]]
// CHECK-NEXT: %[[S:.*]], %[[N:.*]] = pd.add_layer_norm %[[R]], %[[V]], %[[G]], %[[G]], %[[B]] {axis = 2 : i64, {{.*}}} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
// CHECK-NEXT: %[[Z2:.*]] = pd.matmul %[[X]], %[[W]] {transpose_rhs} : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[V2:.*]] = pd.reshape %[[Z2]]
// CHECK-NEXT: pd.add_layer_norm %[[S]], %[[V2]], %[[G]], %[[G]], %[[B]] {axis = 2 : i64, {{.*}}} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
func.func @residual_norm(%r: tensor<2x4x8xf32>, %x: tensor<8x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>, %g: tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %z = pd.matmul %x, %w, %b {transpose_rhs} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %v = pd.reshape %z : tensor<8x8xf32> -> tensor<2x4x8xf32>
  %s, %n = pd.add_layer_norm %r, %v, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %z2 = pd.matmul %x, %w, %b {transpose_rhs} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %v2 = pd.reshape %z2 : tensor<8x8xf32> -> tensor<2x4x8xf32>
  %s2, %n2 = pd.add_layer_norm %v2, %s, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return %n, %s2, %n2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// Left alone: a norm over more than the last dimension (the bias would
// not run along its rows), and a product with another reader.
// CHECK-LABEL: func.func @norm_left_alone
// CHECK-COUNT-2: pd.matmul {{.*}}, {{.*}}, {{.*}} :
// CHECK-NOT: pd.add_layer_norm {{.*}}, {{.*}}, {{.*}}, {{.*}}, {{.*}} {
func.func @norm_left_alone(%r: tensor<8x8xf32>, %x: tensor<8x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>, %g: tensor<8x8xf32>, %g8: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %z = pd.matmul %x, %w, %b {transpose_rhs} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %s, %n = pd.add_layer_norm %r, %z, %g, %g {axis = 0 : i64, epsilon = 1.0e-5 : f32} : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>, tensor<8x8xf32>
  %z2 = pd.matmul %x, %w, %b {transpose_rhs} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %s2, %n2 = pd.add_layer_norm %r, %z2, %g8, %g8 {axis = 1 : i64, epsilon = 1.0e-5 : f32} : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8x8xf32>, tensor<8x8xf32>
  return %n, %n2, %z2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
