// RUN: pd-opt %s --pd-fuse-residual-layer-norm --split-input-file | FileCheck %s

// A pre-LN block's residual add and the next norm: one add_layer_norm; the
// parameter reads move up before it and the sum keeps its other user.
// CHECK-LABEL: func.func @residual
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[H:.*]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = pd.param_ref @g
// CHECK-NEXT: %[[B:.*]] = pd.param_ref @b
// CHECK-NEXT: %[[S:.*]], %[[N:.*]] = pd.add_layer_norm %[[X]], %[[H]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
// CHECK-NEXT: %[[R:.*]] = pd.add %[[S]], %[[N]]
// CHECK-NEXT: return %[[R]]
pd.param @g {onnx_name = "g"} : tensor<8xf32>
pd.param @b {onnx_name = "b"} : tensor<8xf32>
func.func @residual(%x: tensor<2x4x8xf32>, %h: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = pd.add %x, %h : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %g = pd.param_ref @g : tensor<8xf32>
  %b = pd.param_ref @b : tensor<8xf32>
  %n = pd.layer_norm %s, %g, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %r = pd.add %s, %n : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// Left alone: a broadcasting add (token + position embeddings) and a scale
// computed from the sum.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: pd.add_layer_norm
// CHECK-COUNT-2: pd.layer_norm
func.func @left_alone(%t: tensor<2x4x8xf32>, %p: tensor<1x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %e = pd.add %t, %p : tensor<2x4x8xf32>, tensor<1x4x8xf32> -> tensor<2x4x8xf32>
  %n0 = pd.layer_norm %e, %g, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %s = pd.add %t, %n0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %m = pd.sum_to %s : tensor<2x4x8xf32> -> tensor<8xf32>
  %g2 = pd.exp %m : tensor<8xf32>
  %n1 = pd.layer_norm %s, %g2, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  return %n0, %n1 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// A Llama block's residual add and the next RMS norm: one add_rms_norm, the
// scale's read moved up before it, the sum kept for its other user.
// CHECK-LABEL: func.func @residual_rms
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[H:.*]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = pd.param_ref @g
// CHECK-NEXT: %[[S:.*]], %[[N:.*]] = pd.add_rms_norm %[[X]], %[[H]], %[[G]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = pd.add %[[S]], %[[N]]
// CHECK-NEXT: return %[[R]]
pd.param @g {onnx_name = "g"} : tensor<8xf32>
func.func @residual_rms(%x: tensor<2x4x8xf32>, %h: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = pd.add %x, %h : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %g = pd.param_ref @g : tensor<8xf32>
  %n = pd.rms_norm %s, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %r = pd.add %s, %n : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// Gemma scales its RMS norms by 1 + w, computed after the residual add:
// the parameter read and the add of 1 move up before the fused op.
// CHECK-LABEL: func.func @gemma_scale
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[H:.*]]: tensor<2x4x8xf32>, %[[ONE:.*]]: tensor<f32>)
// CHECK-NEXT: %[[W:.*]] = pd.param_ref @w
// CHECK-NEXT: %[[G:.*]] = pd.add %[[W]], %[[ONE]]
// CHECK-NEXT: %[[S:.*]], %[[N:.*]] = pd.add_rms_norm %[[X]], %[[H]], %[[G]]
// CHECK-NEXT: return %[[S]], %[[N]]
pd.param @w {onnx_name = "w"} : tensor<8xf32>
func.func @gemma_scale(%x: tensor<2x4x8xf32>, %h: tensor<2x4x8xf32>, %one: tensor<f32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %s = pd.add %x, %h : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %w = pd.param_ref @w : tensor<8xf32>
  %g = pd.add %w, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %n = pd.rms_norm %s, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  return %s, %n : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// Left alone: an RMS norm of a broadcasting add, and one whose scale is
// computed from the sum itself.
// CHECK-LABEL: func.func @rms_left_alone
// CHECK-NOT: pd.add_rms_norm
// CHECK-COUNT-2: pd.rms_norm
func.func @rms_left_alone(%t: tensor<2x4x8xf32>, %p: tensor<1x4x8xf32>, %g: tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %e = pd.add %t, %p : tensor<2x4x8xf32>, tensor<1x4x8xf32> -> tensor<2x4x8xf32>
  %n0 = pd.rms_norm %e, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %s = pd.add %t, %n0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %m = pd.sum_to %s : tensor<2x4x8xf32> -> tensor<8xf32>
  %g2 = pd.exp %m : tensor<8xf32>
  %n1 = pd.rms_norm %s, %g2 {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  return %n0, %n1 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}
