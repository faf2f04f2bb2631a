// RUN: pd-opt %s | pd-opt | FileCheck %s

// Tests that the NN family's ops round-trip through their custom formats.

// CHECK-LABEL: func.func @nn
func.func @nn(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  // CHECK: pd.reduce_sum %{{.+}} {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %s = pd.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK: pd.reduce_sum %{{.+}} {axes = array<i64: 0>, keepdims} : tensor<4x8xf32> -> tensor<1x8xf32>
  %k = pd.reduce_sum %x {axes = array<i64: 0>, keepdims} : tensor<4x8xf32> -> tensor<1x8xf32>
  // CHECK: pd.broadcast_axes %{{.+}} {axes = array<i64: 1>} : tensor<4xf32> -> tensor<4x8xf32>
  %bc = pd.broadcast_axes %s {axes = array<i64: 1>} : tensor<4xf32> -> tensor<4x8xf32>
  // CHECK: pd.div %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %d = pd.div %x, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: pd.neg
  %n = pd.neg %x : tensor<4x8xf32>
  // CHECK: pd.sqrt
  %q = pd.sqrt %x : tensor<4x8xf32>
  // CHECK: pd.exp
  %e = pd.exp %x : tensor<4x8xf32>
  // CHECK: pd.log
  %l = pd.log %x : tensor<4x8xf32>
  // CHECK: pd.erf
  %f = pd.erf %x : tensor<4x8xf32>
  // CHECK: pd.tanh
  %t = pd.tanh %x : tensor<4x8xf32>
  // CHECK: pd.sigmoid
  %sg = pd.sigmoid %x : tensor<4x8xf32>
  // CHECK: pd.reciprocal
  %r = pd.reciprocal %x : tensor<4x8xf32>
  // CHECK: pd.pow %{{.+}}, 2.000000e+00 : tensor<4x8xf32>
  %p = pd.pow %x, 2.0 : tensor<4x8xf32>
  // CHECK: pd.unary_grad %{{.+}}, %{{.+}}, %{{.+}} {alpha = 2.000000e+00 : f32, kind = #pd.unary_kind<pow>} : tensor<4x8xf32>
  %ug = pd.unary_grad %x, %x, %p {kind = #pd.unary_kind<pow>, alpha = 2.0 : f32} : tensor<4x8xf32>
  // CHECK: pd.softmax %{{.+}} {axis = 1 : i64, log} : tensor<4x8xf32>
  %sm = pd.softmax %x {axis = 1, log} : tensor<4x8xf32>
  // CHECK: pd.softmax_grad %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<4x8xf32>
  %smg = pd.softmax_grad %x, %sm {axis = 1} : tensor<4x8xf32>
  // CHECK: pd.masked_softmax %{{.+}}, %{{.+}} {scale = 5.000000e-01 : f32} : tensor<4x8xf32>, tensor<2x8xi1>
  %keep = pd.constant dense<true> : tensor<2x8xi1>
  %msm = pd.masked_softmax %x, %keep {scale = 0.5 : f32} : tensor<4x8xf32>, tensor<2x8xi1>
  // CHECK: pd.masked_softmax %{{.+}} : tensor<4x8xf32>{{$}}
  %ssm = pd.masked_softmax %x : tensor<4x8xf32>
  // CHECK: pd.masked_softmax %{{.+}}, %{{.+}} {zero_nan_rows} : tensor<4x8xf32>, tensor<2x1x8xi1>
  %pad = pd.constant dense<true> : tensor<2x1x8xi1>
  %psm = pd.masked_softmax %x, %pad {zero_nan_rows} : tensor<4x8xf32>, tensor<2x1x8xi1>
  // CHECK: pd.masked_softmax_grad %{{.+}}, %{{.+}} {scale = 5.000000e-01 : f32} : tensor<4x8xf32>
  %msmg = pd.masked_softmax_grad %x, %msm {scale = 0.5 : f32} : tensor<4x8xf32>
  // CHECK: pd.layer_norm %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %ln = pd.layer_norm %x, %g, %b {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: pd.add_layer_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  %as, %an = pd.add_layer_norm %x, %x, %g, %b {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: pd.add_layer_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  %bs, %bn = pd.add_layer_norm %x, %x, %g, %b, %b {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: pd.layer_norm_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %adx, %adg, %adb = pd.layer_norm_grad %x, %x, %g, %x {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: pd.layer_norm_grad {{.*}} -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %dx, %dg, %db = pd.layer_norm_grad %x, %x, %g {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: pd.layer_norm_grad {{.*}} -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %sdx, %sdg, %sdb, %sds = pd.layer_norm_grad %x, %x, %g, %x {axis = 1, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return
}

// Tests that pd.gelu and pd.gelu_grad round-trip, the default "none" form
// printed without its attribute.

// CHECK-LABEL: func.func @gelu
func.func @gelu(%x: tensor<4x8xf32>) {
  // CHECK: %[[Y:.+]] = pd.gelu %{{.+}} : tensor<4x8xf32>
  %y = pd.gelu %x  : tensor<4x8xf32>
  // CHECK: pd.gelu %[[Y]] {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  %t = pd.gelu %y {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  // CHECK: pd.gelu_grad %{{.+}}, %{{.+}} {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  %dx = pd.gelu_grad %t, %x {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  // CHECK: pd.gelu_grad %{{.+}}, %{{.+}} : tensor<4x8xf32> -> tensor<8xf32>
  %dh, %db = pd.gelu_grad %t, %x : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// Tests that pd.silu, pd.swiglu and pd.swiglu_grad round-trip.

// CHECK-LABEL: func.func @silu_swiglu
func.func @silu_swiglu(%g: tensor<4x8xf32>, %u: tensor<4x8xf32>) {
  // CHECK: %[[S:.+]] = pd.silu %{{.+}} : tensor<4x8xf32>
  %s = pd.silu %g : tensor<4x8xf32>
  // CHECK: %[[Y:.+]] = pd.swiglu %[[S]], %{{.+}} : tensor<4x8xf32>
  %y = pd.swiglu %s, %u : tensor<4x8xf32>
  // CHECK: %gate_grad, %up_grad = pd.swiglu_grad %[[Y]], %{{.+}}, %{{.+}} : tensor<4x8xf32>
  %dg, %du = pd.swiglu_grad %y, %g, %u : tensor<4x8xf32>
  return
}

// Tests that pd.geglu and pd.geglu_grad round-trip in both GELU forms.

// CHECK-LABEL: func.func @geglu
func.func @geglu(%g: tensor<4x8xf32>, %u: tensor<4x8xf32>) {
  // CHECK: %[[Y:.+]] = pd.geglu %{{.+}}, %{{.+}} {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  %y = pd.geglu %g, %u {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  // CHECK: %gate_grad, %up_grad = pd.geglu_grad %[[Y]], %{{.+}}, %{{.+}} {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  %dg, %du = pd.geglu_grad %y, %g, %u {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
  // CHECK: pd.geglu %{{.+}}, %{{.+}} : tensor<4x8xf32>
  %z = pd.geglu %g, %u : tensor<4x8xf32>
  return
}

// Tests that a GELU with a bias (gelu(x + bias)) and its gradient at
// x + bias, with and without the bias gradient, round-trip.

// CHECK-LABEL: func.func @gelu_bias
func.func @gelu_bias(%x: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // CHECK: pd.gelu %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32>
  %y = pd.gelu %x, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pd.gelu_grad %{{.+}}, %{{.+}}, %{{.+}} {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>, tensor<8xf32>{{$}}
  %dx = pd.gelu_grad %y, %x, %b {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pd.gelu_grad %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<8xf32>
  %dh, %db = pd.gelu_grad %y, %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<8xf32>
  return
}

// Tests that pd.dropout round-trips with its ratio and rng_id.

// CHECK-LABEL: func.func @dropout
func.func @dropout(%x: tensor<4x8xf32>) {
  // CHECK: pd.dropout %{{.+}} {ratio = 1.000000e-01 : f32, rng_id = 3 : i64} : tensor<4x8xf32>
  %y = pd.dropout %x {ratio = 1.000000e-01 : f32, rng_id = 3 : i64} : tensor<4x8xf32>
  return
}

// Tests that pd.pow_broadcast (ONNX Pow with a tensor exponent) round-trips.

// CHECK-LABEL: func.func @pow_broadcast
func.func @pow_broadcast(%x: tensor<4x8xf32>, %p: tensor<8xf32>) {
  // CHECK: pd.pow_broadcast %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y = pd.pow_broadcast %x, %p : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return
}

// Tests that cos, sin, min, max, minmax_grad, rms_norm, rms_norm_grad
// (with and without an addend) and add_rms_norm round-trip.

// CHECK-LABEL: func.func @decoder_ops
func.func @decoder_ops(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // CHECK: pd.cos %{{.+}} : tensor<4x8xf32>
  %c = pd.cos %x : tensor<4x8xf32>
  // CHECK: pd.sin %{{.+}} : tensor<4x8xf32>
  %s = pd.sin %x : tensor<4x8xf32>
  // CHECK: pd.min %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %lo = pd.min %x, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: pd.max %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %hi = pd.max %x, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: pd.minmax_grad %{{.+}}, %{{.+}}, %{{.+}} {is_max = true, which = 1 : i64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %d = pd.minmax_grad %hi, %x, %g {is_max = true, which = 1 : i64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: pd.rms_norm %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %n = pd.rms_norm %x, %g {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: pd.rms_norm_grad %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  %dx, %dg = pd.rms_norm_grad %n, %x, %g {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pd.rms_norm_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  %dx2, %dg2 = pd.rms_norm_grad %n, %x, %g, %c {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  // CHECK: %sum, %result = pd.add_rms_norm %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<8xf32>
  %sum, %y = pd.add_rms_norm %x, %s, %g {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// Tests that pd.rotary round-trips, plain and adjoint, with tables of the
// heads-first and the tokens-first layout, and partial (tables narrower
// than the input: its leading columns rotated).

// CHECK-LABEL: func.func @rotary
func.func @rotary(%x: tensor<2x4x8x16xf32>, %c: tensor<1x1x8x16xf32>, %s: tensor<1x1x8x16xf32>, %t: tensor<2x8x4x16xf32>, %c2: tensor<1x8x1x16xf32>, %c3: tensor<1x1x8x4xf32>) {
  // CHECK: pd.rotary %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
  %y = pd.rotary %x, %c, %s : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
  // CHECK: pd.rotary %{{.+}}, %{{.+}}, %{{.+}} {adjoint} : tensor<2x8x4x16xf32>, tensor<1x8x1x16xf32>
  %z = pd.rotary %t, %c2, %c2 {adjoint} : tensor<2x8x4x16xf32>, tensor<1x8x1x16xf32>
  // CHECK: pd.rotary %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x8x16xf32>, tensor<1x1x8x4xf32>
  %p = pd.rotary %x, %c3, %c3 : tensor<2x4x8x16xf32>, tensor<1x1x8x4xf32>
  return
}
