// RUN: pd-opt %s --pd-fuse-decomposed-ops --split-input-file | FileCheck %s

// The torch.onnx opset-13 LayerNorm: mean, Sub, Pow 2, mean, Add eps, Sqrt,
// Div, Mul gamma, Add beta over the last axis.
// CHECK-LABEL: func.func @full
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = pd.layer_norm %[[X]], %[[G]], %[[B]] {axis = 1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @full(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = pd.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %m = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
  %d = pd.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %q = pd.pow %d, 2.000000e+00 : tensor<4x8xf32>
  %vs = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %v = pd.scale %vs, 1.250000e-01 : tensor<4x1xf32>
  %eps = pd.constant dense<9.99999974E-6> : tensor<f32>
  %e = pd.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = pd.sqrt %e : tensor<4x1xf32>
  %n = pd.div %d, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = pd.mul %n, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %z = pd.add %y, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// Two trailing axes, d*d for the square, eps first, gamma and beta on the
// left: still one layer_norm over axis 1.
// CHECK-LABEL: func.func @two_axes_commuted
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3x4xf32>)
// CHECK-NEXT: %[[Y:.*]] = pd.layer_norm %[[X]], %[[G]], %[[B]] {axis = 1 : i64, epsilon = 1.000000e-03 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @two_axes_commuted(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %s = pd.reduce_sum %x {axes = array<i64: 1, 2>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  %m = pd.scale %s, 0.0833333358 : tensor<2x1x1xf32>
  %d = pd.sub %x, %m : tensor<2x3x4xf32>, tensor<2x1x1xf32> -> tensor<2x3x4xf32>
  %q = pd.mul %d, %d : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %vs = pd.reduce_sum %q {axes = array<i64: 1, 2>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  %v = pd.scale %vs, 0.0833333358 : tensor<2x1x1xf32>
  %eps = pd.constant dense<1.000000e-03> : tensor<1xf32>
  %e = pd.add %eps, %v : tensor<1xf32>, tensor<2x1x1xf32> -> tensor<2x1x1xf32>
  %r = pd.sqrt %e : tensor<2x1x1xf32>
  %n = pd.div %d, %r : tensor<2x3x4xf32>, tensor<2x1x1xf32> -> tensor<2x3x4xf32>
  %y = pd.mul %g, %n : tensor<3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %z = pd.add %b, %y : tensor<3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %z : tensor<2x3x4xf32>
}

// -----

// No affine part (elementwise_affine=False): gamma = 1, beta = 0.
// CHECK-LABEL: func.func @no_affine
// CHECK-DAG: %[[ONE:.*]] = pd.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ZERO:.*]] = pd.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[Y:.*]] = pd.layer_norm %arg0, %[[ONE]], %[[ZERO]] {axis = 1 : i64
// CHECK-NEXT: return %[[Y]]
func.func @no_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = pd.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %m = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
  %d = pd.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %q = pd.pow %d, 2.000000e+00 : tensor<4x8xf32>
  %vs = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %v = pd.scale %vs, 1.250000e-01 : tensor<4x1xf32>
  %eps = pd.constant dense<9.99999974E-6> : tensor<f32>
  %e = pd.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = pd.sqrt %e : tensor<4x1xf32>
  %n = pd.div %d, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// A gamma of another shape ([1, 8] broadcasts but is not the trailing
// shape) stays a pd.mul after the fused normalisation.
// CHECK-LABEL: func.func @gamma_other_shape
// CHECK: %[[N:.*]] = pd.layer_norm %arg0
// CHECK-NEXT: %[[Y:.*]] = pd.mul %[[N]], %arg1
// CHECK-NEXT: return %[[Y]]
func.func @gamma_other_shape(%x: tensor<4x8xf32>, %g: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %s = pd.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %m = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
  %d = pd.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %q = pd.pow %d, 2.000000e+00 : tensor<4x8xf32>
  %vs = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %v = pd.scale %vs, 1.250000e-01 : tensor<4x1xf32>
  %eps = pd.constant dense<9.99999974E-6> : tensor<f32>
  %e = pd.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = pd.sqrt %e : tensor<4x1xf32>
  %n = pd.div %d, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = pd.mul %n, %g : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not LayerNorm: the centred values are used elsewhere too, so the chain
// cannot go away; their normalisation d / sqrt(mean(d^2) + eps) is an
// RMSNorm of d.
// CHECK-LABEL: func.func @centred_escapes
// CHECK-NOT: pd.layer_norm
// CHECK: %[[D:.*]] = pd.sub
// CHECK-NEXT: pd.rms_norm %[[D]], %{{.*}} {axis = 1 : i64, epsilon = 9.99999974E-6 : f32}
func.func @centred_escapes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = pd.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %m = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
  %d = pd.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %q = pd.pow %d, 2.000000e+00 : tensor<4x8xf32>
  %vs = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %v = pd.scale %vs, 1.250000e-01 : tensor<4x1xf32>
  %eps = pd.constant dense<9.99999974E-6> : tensor<f32>
  %e = pd.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = pd.sqrt %e : tensor<4x1xf32>
  %n = pd.div %d, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %n, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not LayerNorm: the statistics are over the leading axis, and the second
// "mean" divides by the wrong count.
// CHECK-LABEL: func.func @leading_axis
// CHECK-NOT: pd.layer_norm
// CHECK-LABEL: func.func @wrong_count
// CHECK-NOT: pd.layer_norm
func.func @leading_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = pd.reduce_sum %x {axes = array<i64: 0>, keepdims} : tensor<4x8xf32> -> tensor<1x8xf32>
  %m = pd.scale %s, 2.500000e-01 : tensor<1x8xf32>
  %d = pd.sub %x, %m : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %q = pd.pow %d, 2.000000e+00 : tensor<4x8xf32>
  %vs = pd.reduce_sum %q {axes = array<i64: 0>, keepdims} : tensor<4x8xf32> -> tensor<1x8xf32>
  %v = pd.scale %vs, 2.500000e-01 : tensor<1x8xf32>
  %eps = pd.constant dense<9.99999974E-6> : tensor<f32>
  %e = pd.add %v, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %r = pd.sqrt %e : tensor<1x8xf32>
  %n = pd.div %d, %r : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}
func.func @wrong_count(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = pd.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %m = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
  %d = pd.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %q = pd.pow %d, 2.000000e+00 : tensor<4x8xf32>
  %vs = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %v = pd.scale %vs, 0.142857149 : tensor<4x1xf32>
  %eps = pd.constant dense<9.99999974E-6> : tensor<f32>
  %e = pd.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = pd.sqrt %e : tensor<4x1xf32>
  %n = pd.div %d, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// GELU as torch.onnx exports F.gelu before opset 20, and the association
// torch 2's optimizer leaves: one pd.gelu each.
// CHECK-LABEL: func.func @gelu_forms
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>
// CHECK-NEXT: %[[A:.*]] = pd.gelu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = pd.gelu %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = pd.gelu %[[B]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[C]]
func.func @gelu_forms(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = pd.constant dense<1.41421354> : tensor<f32>
  %one = pd.constant dense<1.000000e+00> : tensor<f32>
  %half = pd.constant dense<5.000000e-01> : tensor<f32>
  %rsqrt2 = pd.constant dense<0.707106769> : tensor<f32>
  // (x * (1 + erf(x / sqrt2))) * 0.5
  %0 = pd.div %x, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %1 = pd.erf %0 : tensor<4x8xf32>
  %2 = pd.add %1, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %3 = pd.mul %x, %2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %a = pd.mul %3, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  // a * (0.5 * (erf(a * rsqrt2) + 1))
  %4 = pd.mul %a, %rsqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %5 = pd.erf %4 : tensor<4x8xf32>
  %6 = pd.add %one, %5 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %7 = pd.mul %half, %6 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = pd.mul %a, %7 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // (b * 0.5) * (1 + erf(b / sqrt2))
  %8 = pd.mul %b, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %9 = pd.div %b, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %10 = pd.erf %9 : tensor<4x8xf32>
  %11 = pd.add %10, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %c = pd.mul %8, %11 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// Not GELU: the erf escapes, or the factor is not one half.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: pd.gelu
// CHECK: return
func.func @not_gelu(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %sqrt2 = pd.constant dense<1.41421354> : tensor<f32>
  %one = pd.constant dense<1.000000e+00> : tensor<f32>
  %half = pd.constant dense<5.000000e-01> : tensor<f32>
  %other = pd.constant dense<6.000000e-01> : tensor<f32>
  %0 = pd.div %x, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %1 = pd.erf %0 : tensor<4x8xf32>
  %2 = pd.add %1, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %3 = pd.mul %x, %2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %a = pd.mul %3, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %4 = pd.div %x, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %5 = pd.erf %4 : tensor<4x8xf32>
  %6 = pd.add %5, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %7 = pd.mul %x, %6 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = pd.mul %7, %other : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %a, %1, %b : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// GELU's tanh approximation as torch.onnx exports F.gelu(approximate="tanh")
// (x * (x * x)) and as Hugging Face's NewGELU reads (pow 3): one pd.gelu
// {approximate = #pd.gelu<tanh>} each.
// CHECK-LABEL: func.func @tanh_gelu_forms
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>
// CHECK-NEXT: %[[A:.*]] = pd.gelu %[[X]] {approximate = #pd.gelu<tanh>} : tensor<2x3xf32>
// CHECK-NEXT: %[[B:.*]] = pd.gelu %[[A]] {approximate = #pd.gelu<tanh>} : tensor<2x3xf32>
// CHECK-NEXT: return %[[B]]
func.func @tanh_gelu_forms(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %k = pd.constant dense<4.471500e-02> : tensor<f32>
  %c = pd.constant dense<0.797884583> : tensor<f32>
  %one = pd.constant dense<1.000000e+00> : tensor<f32>
  %half = pd.constant dense<5.000000e-01> : tensor<f32>
  %0 = pd.mul %x, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = pd.mul %x, %0 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = pd.mul %k, %1 : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = pd.add %x, %2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %4 = pd.mul %c, %3 : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %5 = pd.tanh %4 : tensor<2x3xf32>
  %6 = pd.add %one, %5 : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %7 = pd.mul %x, %6 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %a = pd.mul %half, %7 : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %8 = pd.mul %a, %half : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %9 = pd.pow %a, 3.000000e+00 : tensor<2x3xf32>
  %10 = pd.mul %9, %k : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %11 = pd.add %a, %10 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %12 = pd.mul %11, %c : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %13 = pd.tanh %12 : tensor<2x3xf32>
  %14 = pd.add %13, %one : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %b = pd.mul %8, %14 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// -----

// Not GELU: another cubic coefficient.
// CHECK-LABEL: func.func @not_tanh_gelu
// CHECK-NOT: pd.gelu
// CHECK: pd.tanh
func.func @not_tanh_gelu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %k = pd.constant dense<5.000000e-02> : tensor<f32>
  %c = pd.constant dense<0.797884583> : tensor<f32>
  %one = pd.constant dense<1.000000e+00> : tensor<f32>
  %half = pd.constant dense<5.000000e-01> : tensor<f32>
  %0 = pd.pow %x, 3.000000e+00 : tensor<2x3xf32>
  %1 = pd.mul %k, %0 : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = pd.add %x, %1 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = pd.mul %c, %2 : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %4 = pd.tanh %3 : tensor<2x3xf32>
  %5 = pd.add %one, %4 : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %6 = pd.mul %x, %5 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %7 = pd.mul %half, %6 : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %7 : tensor<2x3xf32>
}

// -----

// Llama's RMSNorm as torch.onnx exports it: Pow 2, ReduceMean, Add eps,
// Sqrt, Div(1, .) (torch.rsqrt), Mul by x, Mul by the weight on the left.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[G:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = pd.rms_norm %[[X]], %[[G]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %q = pd.pow %x, 2.000000e+00 : tensor<2x4x8xf32>
  %s = pd.reduce_sum %q {axes = array<i64: 2>, keepdims} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %v = pd.scale %s, 1.250000e-01 : tensor<2x4x1xf32>
  %eps = pd.constant dense<9.99999997E-7> : tensor<f32>
  %e = pd.add %v, %eps : tensor<2x4x1xf32>, tensor<f32> -> tensor<2x4x1xf32>
  %r = pd.sqrt %e : tensor<2x4x1xf32>
  %one = pd.constant dense<1.000000e+00> : tensor<f32>
  %i = pd.div %one, %r : tensor<f32>, tensor<2x4x1xf32> -> tensor<2x4x1xf32>
  %n = pd.mul %x, %i : tensor<2x4x8xf32>, tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %y = pd.mul %g, %n : tensor<8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// The dynamo exporter's spelling: x * x, eps first, Reciprocal(Sqrt), no
// weight: the scale is a constant of ones.
// CHECK-LABEL: func.func @rms_norm_reciprocal
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[ONES:.*]] = pd.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-NEXT: %[[Y:.*]] = pd.rms_norm %[[X]], %[[ONES]] {axis = 1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_reciprocal(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %q = pd.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %v = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
  %eps = pd.constant dense<9.99999974E-6> : tensor<f32>
  %e = pd.add %eps, %v : tensor<f32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %r = pd.sqrt %e : tensor<4x1xf32>
  %i = pd.reciprocal %r : tensor<4x1xf32>
  %n = pd.mul %i, %x : tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// x / sqrt(mean(x^2) + eps) directly, weight on the right.
// CHECK-LABEL: func.func @rms_norm_div
// CHECK-NEXT: %[[Y:.*]] = pd.rms_norm %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_div(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %q = pd.pow %x, 2.000000e+00 : tensor<4x8xf32>
  %s = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %v = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
  %eps = pd.constant dense<9.99999997E-7> : tensor<f32>
  %e = pd.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = pd.sqrt %e : tensor<4x1xf32>
  %n = pd.div %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = pd.mul %n, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not RMSNorm: the mean of the square is also read elsewhere.
// CHECK-LABEL: func.func @not_rms_norm_shared
// CHECK-NOT: pd.rms_norm
// CHECK: pd.sqrt
func.func @not_rms_norm_shared(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %q = pd.pow %x, 2.000000e+00 : tensor<4x8xf32>
  %s = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
  %v = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
  %eps = pd.constant dense<9.99999997E-7> : tensor<f32>
  %e = pd.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = pd.sqrt %e : tensor<4x1xf32>
  %n = pd.div %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %n, %v : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// SiLU as exporters write it, x * sigmoid(x), in both operand orders; the
// second is returned, the first scaled by a broadcast vector (not a gate).
// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[U:.*]]: tensor<4x8xf32>, %[[V:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[A:.*]] = pd.silu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = pd.silu %[[U]] : tensor<4x8xf32>
// CHECK-NEXT: %[[G:.*]] = pd.mul %[[A]], %[[V]]
// CHECK-NEXT: return %[[G]], %[[B]]
func.func @silu(%x: tensor<4x8xf32>, %u: tensor<4x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = pd.sigmoid %x : tensor<4x8xf32>
  %a = pd.mul %x, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %t = pd.sigmoid %u : tensor<4x8xf32>
  %b = pd.mul %t, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %g = pd.mul %a, %v : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %g, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Llama's gated MLP: silu(gate) * up, the product's operands in either
// order, up computed after the SiLU; a SiLU also read elsewhere stays a
// pd.silu and a pd.mul.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[G:.*]]: tensor<4x8xf32>, %[[U:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[W:.*]] = pd.add %[[U]], %[[U]]
// CHECK-NEXT: %[[A:.*]] = pd.swiglu %[[G]], %[[W]] : tensor<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = pd.swiglu %[[U]], %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = pd.silu %[[G]] : tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = pd.mul %[[S]], %[[U]]
// CHECK-NEXT: return %[[B]], %[[C]], %[[S]]
func.func @swiglu(%g: tensor<4x8xf32>, %u: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = pd.sigmoid %g : tensor<4x8xf32>
  %h = pd.mul %g, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %w = pd.add %u, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %a = pd.mul %h, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %t = pd.sigmoid %u : tensor<4x8xf32>
  %k = pd.mul %t, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = pd.mul %a, %k : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %r = pd.sigmoid %g : tensor<4x8xf32>
  %q = pd.mul %r, %g : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c = pd.mul %q, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %b, %c, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Gemma's gated MLP: gelu(gate) * up (tanh form), the product's operands in
// either order, up computed after the GELU; the erf form too. A GELU also
// read elsewhere, or with a bias, stays a pd.gelu and a pd.mul.
// CHECK-LABEL: func.func @geglu
// CHECK-SAME: (%[[G:.*]]: tensor<4x8xf32>, %[[U:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[W:.*]] = pd.add %[[U]], %[[U]]
// CHECK-NEXT: %[[A:.*]] = pd.geglu %[[G]], %[[W]] {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = pd.geglu %[[U]], %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = pd.gelu %[[G]] : tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = pd.mul %[[S]], %[[U]]
// CHECK-NEXT: %[[T:.*]] = pd.gelu %[[G]], %[[B]]
// CHECK-NEXT: %[[D:.*]] = pd.mul %[[T]], %[[U]]
// CHECK-NEXT: return %[[E]], %[[C]], %[[S]], %[[D]]
func.func @geglu(%g: tensor<4x8xf32>, %u: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = pd.gelu %g {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  %w = pd.add %u, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %a = pd.mul %h, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %k = pd.gelu %u : tensor<4x8xf32>
  %e = pd.mul %a, %k : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %q = pd.gelu %g : tensor<4x8xf32>
  %c = pd.mul %q, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %t = pd.gelu %g, %b : tensor<4x8xf32>, tensor<8xf32>
  %d = pd.mul %t, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %e, %c, %q, %d : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not SiLU: the sigmoid is also read elsewhere (kept, so fusing would add
// work); the product is of another tensor; a broadcast x.
// CHECK-LABEL: func.func @not_silu
// CHECK-NOT: pd.silu
func.func @not_silu(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = pd.sigmoid %x : tensor<4x8xf32>
  %a = pd.mul %x, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %t = pd.sigmoid %y : tensor<4x8xf32>
  %b = pd.mul %x, %t : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %sv = pd.sigmoid %v : tensor<8xf32>
  %c = pd.mul %x, %sv : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %a, %s, %b, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
