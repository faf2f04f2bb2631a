// RUN: pd-opt %s --pd-fuse-attention-softmax --split-input-file | FileCheck %s

// GPT's attention (torch.onnx opset 13): scores * (1/sqrt(d)), Where of
// the upper triangle to -inf, Softmax over the last axis. One
// masked_softmax with the scale and the keep-mask (the lower triangle) as
// one [T, T] matrix for every batch and head.
// CHECK-LABEL: func.func @causal
// CHECK-SAME: (%[[S:.*]]: tensor<2x3x4x4xf32>)
// CHECK-NEXT: %[[K:.*]] = pd.constant dense<{{\[}}[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
// CHECK-NEXT: %[[P:.*]] = pd.masked_softmax %[[S]], %[[K]] {scale = 5.000000e-01 : f32} : tensor<2x3x4x4xf32>, tensor<4x4xi1>
// CHECK-NEXT: return %[[P]]
func.func @causal(%s: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %c = pd.constant dense<5.000000e-01> : tensor<f32>
  %t = pd.mul %s, %c : tensor<2x3x4x4xf32>, tensor<f32> -> tensor<2x3x4x4xf32>
  %m = pd.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %f = pd.constant dense<0xFF800000> : tensor<f32>
  %w = pd.where %m, %f, %t : tensor<1x1x4x4xi1>, tensor<f32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %p = pd.softmax %w {axis = 3 : i64} : tensor<2x3x4x4xf32>
  return %p : tensor<2x3x4x4xf32>
}

// -----

// Hugging Face GPT-2: scores / sqrt(d), Where(mask, scores, finfo.min).
// The mask keeps where it is true; the division becomes a scale of 1/4.
// CHECK-LABEL: func.func @divided_keep_true
// CHECK-SAME: (%[[S:.*]]: tensor<2x2x2xf32>)
// CHECK-NEXT: %[[K:.*]] = pd.constant dense<{{\[}}[true, false], [true, true]]> : tensor<2x2xi1>
// CHECK-NEXT: %[[P:.*]] = pd.masked_softmax %[[S]], %[[K]] {scale = 2.500000e-01 : f32} : tensor<2x2x2xf32>, tensor<2x2xi1>
// CHECK-NEXT: return %[[P]]
func.func @divided_keep_true(%s: tensor<2x2x2xf32>) -> tensor<2x2x2xf32> {
  %c = pd.constant dense<4.000000e+00> : tensor<f32>
  %t = pd.div %s, %c : tensor<2x2x2xf32>, tensor<f32> -> tensor<2x2x2xf32>
  %m = pd.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %f = pd.constant dense<-3.40282347E+38> : tensor<f32>
  %w = pd.where %m, %t, %f : tensor<2x2xi1>, tensor<2x2x2xf32>, tensor<f32> -> tensor<2x2x2xf32>
  %p = pd.softmax %w {axis = 2 : i64} : tensor<2x2x2xf32>
  return %p : tensor<2x2x2xf32>
}

// -----

// Llama's additive mask (0 and -inf) on the left of the add, no scale.
// CHECK-LABEL: func.func @additive
// CHECK-NEXT: %[[K:.*]] = pd.constant dense<{{\[}}[true, false], [true, true]]> : tensor<2x2xi1>
// CHECK-NEXT: pd.masked_softmax %{{.*}}, %[[K]] : tensor<3x2x2xf32>, tensor<2x2xi1>
func.func @additive(%s: tensor<3x2x2xf32>) -> tensor<3x2x2xf32> {
  %m = pd.constant dense<[[[0.0, 0xFF800000], [0.0, 0.0]]]> : tensor<1x2x2xf32>
  %w = pd.add %m, %s : tensor<1x2x2xf32>, tensor<3x2x2xf32> -> tensor<3x2x2xf32>
  %p = pd.softmax %w {axis = 2 : i64} : tensor<3x2x2xf32>
  return %p : tensor<3x2x2xf32>
}

// -----

// Hugging Face GPT-2 (transformers 4.4x, either exporter): the scale went
// onto Q and K before the product and the causal mask is additive, one
// copy per batch element ([B, 1, T, T]); the copies are equal, so one
// [T, T] mask serves every row.
// CHECK-LABEL: func.func @per_batch_copies
// CHECK-SAME: (%[[S:.*]]: tensor<2x3x2x2xf32>)
// CHECK-NEXT: %[[K:.*]] = pd.constant dense<{{\[}}[true, false], [true, true]]> : tensor<2x2xi1>
// CHECK-NEXT: %[[P:.*]] = pd.masked_softmax %[[S]], %[[K]] : tensor<2x3x2x2xf32>, tensor<2x2xi1>
// CHECK-NEXT: return %[[P]]
func.func @per_batch_copies(%s: tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32> {
  %m = pd.constant dense<[[[[0.0, 0xFF800000], [0.0, 0.0]]], [[[0.0, 0xFF800000], [0.0, 0.0]]]]> : tensor<2x1x2x2xf32>
  %w = pd.add %s, %m : tensor<2x3x2x2xf32>, tensor<2x1x2x2xf32> -> tensor<2x3x2x2xf32>
  %p = pd.softmax %w {axis = 3 : i64} : tensor<2x3x2x2xf32>
  return %p : tensor<2x3x2x2xf32>
}

// -----

// A scale alone (a constant on the left of the multiply): no mask operand.
// CHECK-LABEL: func.func @scale_only
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[P:.*]] = pd.masked_softmax %[[S]] {scale = 1.250000e-01 : f32} : tensor<4x8xf32>
// CHECK-NEXT: return %[[P]]
func.func @scale_only(%s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = pd.constant dense<1.250000e-01> : tensor<1xf32>
  %t = pd.mul %c, %s : tensor<1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %p = pd.softmax %t {axis = 1 : i64} : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// Not fused, each for its reason: a fill that need not vanish (-1e4), a
// mask that differs per batch but not per head (it cannot be one [R, N]
// matrix of the rows), a row the mask drops entirely, a scale whose
// product is also used elsewhere, a log-softmax, a softmax over a leading
// axis.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: pd.masked_softmax
// CHECK-COUNT-6: pd.softmax
// CHECK-NOT: pd.masked_softmax
func.func @left_alone(%s: tensor<2x2x2x2xf32>, %x: tensor<4x8xf32>) -> (tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %small = pd.constant dense<-1.000000e+04> : tensor<f32>
  %ninf = pd.constant dense<0xFF800000> : tensor<f32>
  %tri = pd.constant dense<[[false, true], [false, false]]> : tensor<2x2xi1>
  %w0 = pd.where %tri, %small, %s : tensor<2x2xi1>, tensor<f32>, tensor<2x2x2x2xf32> -> tensor<2x2x2x2xf32>
  %p0 = pd.softmax %w0 {axis = 3 : i64} : tensor<2x2x2x2xf32>
  %perbatch = pd.constant dense<[[[[false, true], [false, false]]], [[[false, false], [false, false]]]]> : tensor<2x1x2x2xi1>
  %w1 = pd.where %perbatch, %ninf, %s : tensor<2x1x2x2xi1>, tensor<f32>, tensor<2x2x2x2xf32> -> tensor<2x2x2x2xf32>
  %p1 = pd.softmax %w1 {axis = 3 : i64} : tensor<2x2x2x2xf32>
  %dropsrow = pd.constant dense<[[false, true], [true, true]]> : tensor<2x2xi1>
  %w2 = pd.where %dropsrow, %ninf, %s : tensor<2x2xi1>, tensor<f32>, tensor<2x2x2x2xf32> -> tensor<2x2x2x2xf32>
  %p2 = pd.softmax %w2 {axis = 3 : i64} : tensor<2x2x2x2xf32>
  %c = pd.constant dense<5.000000e-01> : tensor<f32>
  %t = pd.mul %x, %c : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %p3 = pd.softmax %t {axis = 1 : i64} : tensor<4x8xf32>
  %c2 = pd.constant dense<5.000000e-01> : tensor<f32>
  %t2 = pd.mul %x, %c2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %p4 = pd.softmax %t2 {axis = 1 : i64, log} : tensor<4x8xf32>
  %c3 = pd.constant dense<5.000000e-01> : tensor<f32>
  %t3 = pd.mul %x, %c3 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %p5 = pd.softmax %t3 {axis = 0 : i64} : tensor<4x8xf32>
  return %p0, %p1, %p2, %p3, %t, %p4, %p5 : tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// torch's export of scaled_dot_product_attention with a padding mask
// (transformers' BERT, sdpa): sqrt(scale) on Q and on K^T, the boolean
// [B, 1, T, T] mask of the step added as Where(mask, 0, -inf), and
// Where(IsNaN(p), 0, p) after the softmax. One masked_softmax of the bare
// product: the scales multiplied into its scale, the mask viewed as one
// [T, T] block per batch entry, the guard as zero_nan_rows. (The scale is
// the float32 product of the two: 0.353553385^2 rounds below 1/8.)
// CHECK-LABEL: func.func @sdpa_padding
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x4x8xf32>, %[[K:.*]]: tensor<2x3x8x4xf32>, %[[M:.*]]: tensor<2x1x4x4xi1>)
// CHECK-NEXT: %[[S:.*]] = pd.batch_matmul %[[Q]], %[[K]] : tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[V:.*]] = pd.reshape %[[M]] : tensor<2x1x4x4xi1> -> tensor<2x4x4xi1>
// CHECK-NEXT: %[[P:.*]] = pd.masked_softmax %[[S]], %[[V]] {scale = 0.124999993 : f32, zero_nan_rows} : tensor<2x3x4x4xf32>, tensor<2x4x4xi1>
// CHECK-NEXT: return %[[P]]
func.func @sdpa_padding(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x8x4xf32>, %m: tensor<2x1x4x4xi1>) -> tensor<2x3x4x4xf32> {
  %c = pd.constant dense<0.353553385> : tensor<f32>
  %qs = pd.mul %q, %c : tensor<2x3x4x8xf32>, tensor<f32> -> tensor<2x3x4x8xf32>
  %ks = pd.mul %k, %c : tensor<2x3x8x4xf32>, tensor<f32> -> tensor<2x3x8x4xf32>
  %s = pd.batch_matmul %qs, %ks : tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x4x4xf32>
  %zero = pd.constant dense<0.000000e+00> : tensor<1xf32>
  %ninf = pd.constant dense<0xFF800000> : tensor<1xf32>
  %bias = pd.where %m, %zero, %ninf : tensor<2x1x4x4xi1>, tensor<1xf32>, tensor<1xf32> -> tensor<2x1x4x4xf32>
  %t = pd.add %s, %bias : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32> -> tensor<2x3x4x4xf32>
  %p = pd.softmax %t {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %eq = pd.compare %p, %p {predicate = "eq"} : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xi1>
  %nan = pd.not %eq : tensor<2x3x4x4xi1>
  %y = pd.where %nan, %zero, %p : tensor<2x3x4x4xi1>, tensor<1xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

// A key padding mask [B, 1, 1, T] (one mask row per batch entry, shared by
// its heads and queries), kept where false (Where(mask, -inf, 0)): a Not
// gives the keep-mask; the mask selecting the scores directly
// (Where(mask, s, -inf)) over [B, T, H, T] scores broadcasts over the
// middle dims likewise.
// CHECK-LABEL: func.func @key_padding
// CHECK-SAME: (%[[S:.*]]: tensor<2x3x4x4xf32>, %[[M:.*]]: tensor<2x1x1x4xi1>, %[[U:.*]]: tensor<2x4x3x4xf32>)
// CHECK: %[[N:.*]] = pd.not %[[M]] : tensor<2x1x1x4xi1>
// CHECK-NEXT: %[[V:.*]] = pd.reshape %[[N]] : tensor<2x1x1x4xi1> -> tensor<2x1x4xi1>
// CHECK-NEXT: pd.masked_softmax %[[S]], %[[V]] {zero_nan_rows} : tensor<2x3x4x4xf32>, tensor<2x1x4xi1>
// CHECK: %[[W:.*]] = pd.reshape %[[M]] : tensor<2x1x1x4xi1> -> tensor<2x1x4xi1>
// CHECK-NEXT: pd.masked_softmax %[[U]], %[[W]] {zero_nan_rows} : tensor<2x4x3x4xf32>, tensor<2x1x4xi1>
func.func @key_padding(%s: tensor<2x3x4x4xf32>, %m: tensor<2x1x1x4xi1>, %u: tensor<2x4x3x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x4x3x4xf32>) {
  %zero = pd.constant dense<0.000000e+00> : tensor<f32>
  %ninf = pd.constant dense<0xFF800000> : tensor<f32>
  %bias = pd.where %m, %ninf, %zero : tensor<2x1x1x4xi1>, tensor<f32>, tensor<f32> -> tensor<2x1x1x4xf32>
  %t = pd.add %bias, %s : tensor<2x1x1x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %p = pd.softmax %t {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %eq = pd.compare %p, %p {predicate = "eq"} : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xi1>
  %nan = pd.not %eq : tensor<2x3x4x4xi1>
  %y = pd.where %nan, %zero, %p : tensor<2x3x4x4xi1>, tensor<f32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %w = pd.where %m, %u, %ninf : tensor<2x1x1x4xi1>, tensor<2x4x3x4xf32>, tensor<f32> -> tensor<2x4x3x4xf32>
  %p2 = pd.softmax %w {axis = 3 : i64} : tensor<2x4x3x4xf32>
  %eq2 = pd.compare %p2, %p2 {predicate = "eq"} : tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32> -> tensor<2x4x3x4xi1>
  %nan2 = pd.not %eq2 : tensor<2x4x3x4xi1>
  %y2 = pd.where %nan2, %zero, %p2 : tensor<2x4x3x4xi1>, tensor<f32>, tensor<2x4x3x4xf32> -> tensor<2x4x3x4xf32>
  return %y, %y2 : tensor<2x3x4x4xf32>, tensor<2x4x3x4xf32>
}

// -----

// transformers' Llama (sdpa): the constant causal mask, the scale on K^T
// alone (Q's went into the rotary embedding), and the guard.
// CHECK-LABEL: func.func @causal_guarded
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x4xf32>, %[[K:.*]]: tensor<2x4x4xf32>)
// CHECK: %[[S:.*]] = pd.batch_matmul %[[Q]], %[[K]]
// CHECK: %[[P:.*]] = pd.masked_softmax %[[S]], %{{.*}} {scale = 5.000000e-01 : f32, zero_nan_rows} : tensor<2x4x4xf32>, tensor<4x4xi1>
// CHECK-NEXT: return %[[P]]
func.func @causal_guarded(%q: tensor<2x4x4xf32>, %k: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %c = pd.constant dense<5.000000e-01> : tensor<f32>
  %ks = pd.mul %k, %c : tensor<2x4x4xf32>, tensor<f32> -> tensor<2x4x4xf32>
  %s = pd.batch_matmul %q, %ks : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %m = pd.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %t = pd.add %s, %m : tensor<2x4x4xf32>, tensor<4x4xf32> -> tensor<2x4x4xf32>
  %p = pd.softmax %t {axis = 2 : i64} : tensor<2x4x4xf32>
  %eq = pd.compare %p, %p {predicate = "eq"} : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xi1>
  %nan = pd.not %eq : tensor<2x4x4xi1>
  %zero = pd.constant dense<0.000000e+00> : tensor<1xf32>
  %y = pd.where %nan, %zero, %p : tensor<2x4x4xi1>, tensor<1xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

// Partly fused, each for its reason: a mask of the step without the guard
// (a row keeping nothing is NaN there, the kernel's 0) stays as it is, and
// so do the operand scales (the additive mask comes after them); a mask of
// the step filled with -1e9 (a row keeping nothing is neither NaN nor
// uniform: -1e9 does not absorb the scores) stays an add, the guard fused; a product also read elsewhere keeps
// its operand scales; a guard whose softmax is also read elsewhere stays;
// a mask of the step broadcast again after its rows ([B, 1, T, 1, T])
// stays a Where, the guard fused.
// CHECK-LABEL: func.func @partly_fused
// CHECK: %[[QS0:.*]] = pd.mul %arg0
// CHECK: %[[S0:.*]] = pd.batch_matmul %[[QS0]], %{{.*}} :
// CHECK: %[[T0:.*]] = pd.add %[[S0]], %{{.*}} : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32>
// CHECK-NEXT: pd.softmax %[[T0]]
// CHECK: %[[T1:.*]] = pd.add %arg3, %{{.*}} : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32>
// CHECK-NEXT: pd.masked_softmax %[[T1]] {zero_nan_rows} : tensor<2x3x4x4xf32>
// CHECK: %[[QS2:.*]] = pd.mul %arg0
// CHECK: %[[S2:.*]] = pd.batch_matmul %[[QS2]], %arg1 :
// CHECK-NEXT: pd.softmax %[[S2]]
// CHECK-NEXT: %[[P3:.*]] = pd.softmax %arg3
// CHECK-NEXT: pd.compare %[[P3]], %[[P3]]
// CHECK: %[[W5:.*]] = pd.where %arg4, %arg5, %{{.*}} : tensor<2x1x4x1x4xi1>
// CHECK-NEXT: pd.masked_softmax %[[W5]] {zero_nan_rows} : tensor<2x3x4x5x4xf32>
func.func @partly_fused(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x8x4xf32>, %m: tensor<2x1x4x4xi1>, %x: tensor<2x3x4x4xf32>, %m5: tensor<2x1x4x1x4xi1>, %x5: tensor<2x3x4x5x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x5x4xf32>) {
  %c = pd.constant dense<0.353553385> : tensor<f32>
  %zero = pd.constant dense<0.000000e+00> : tensor<f32>
  %ninf = pd.constant dense<0xFF800000> : tensor<f32>
  %min = pd.constant dense<-1.000000e+09> : tensor<f32>
  %qs = pd.mul %q, %c : tensor<2x3x4x8xf32>, tensor<f32> -> tensor<2x3x4x8xf32>
  %ks = pd.mul %k, %c : tensor<2x3x8x4xf32>, tensor<f32> -> tensor<2x3x8x4xf32>
  %s = pd.batch_matmul %qs, %ks : tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x4x4xf32>
  %bias = pd.where %m, %zero, %ninf : tensor<2x1x4x4xi1>, tensor<f32>, tensor<f32> -> tensor<2x1x4x4xf32>
  %t = pd.add %s, %bias : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32> -> tensor<2x3x4x4xf32>
  %p0 = pd.softmax %t {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %bmin = pd.where %m, %zero, %min : tensor<2x1x4x4xi1>, tensor<f32>, tensor<f32> -> tensor<2x1x4x4xf32>
  %t1 = pd.add %x, %bmin : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32> -> tensor<2x3x4x4xf32>
  %p1 = pd.softmax %t1 {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %eq1 = pd.compare %p1, %p1 {predicate = "eq"} : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xi1>
  %nan1 = pd.not %eq1 : tensor<2x3x4x4xi1>
  %y1 = pd.where %nan1, %zero, %p1 : tensor<2x3x4x4xi1>, tensor<f32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %qs2 = pd.mul %q, %c : tensor<2x3x4x8xf32>, tensor<f32> -> tensor<2x3x4x8xf32>
  %s2 = pd.batch_matmul %qs2, %k : tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x4x4xf32>
  %p2 = pd.softmax %s2 {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %p3 = pd.softmax %x {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %eq3 = pd.compare %p3, %p3 {predicate = "eq"} : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xi1>
  %nan3 = pd.not %eq3 : tensor<2x3x4x4xi1>
  %y3 = pd.where %nan3, %zero, %p3 : tensor<2x3x4x4xi1>, tensor<f32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %w5 = pd.where %m5, %x5, %ninf : tensor<2x1x4x1x4xi1>, tensor<2x3x4x5x4xf32>, tensor<f32> -> tensor<2x3x4x5x4xf32>
  %p5 = pd.softmax %w5 {axis = 4 : i64} : tensor<2x3x4x5x4xf32>
  %eq5 = pd.compare %p5, %p5 {predicate = "eq"} : tensor<2x3x4x5x4xf32>, tensor<2x3x4x5x4xf32> -> tensor<2x3x4x5x4xi1>
  %nan5 = pd.not %eq5 : tensor<2x3x4x5x4xi1>
  %y5 = pd.where %nan5, %zero, %p5 : tensor<2x3x4x5x4xi1>, tensor<f32>, tensor<2x3x4x5x4xf32> -> tensor<2x3x4x5x4xf32>
  return %p0, %y1, %s2, %p2, %p3, %y3, %y5 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x5x4xf32>
}

// -----

// torch's dynamo export of the same attention (transformers' BERT): the
// mask filled with finfo.min, which absorbs the scores, so that a row
// keeping nothing is uniform (not NaN): fused with uniform_empty_rows, with
// the guard after it or without one.
// CHECK-LABEL: func.func @dynamo_padding
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x4x8xf32>, %[[K:.*]]: tensor<2x3x8x4xf32>, %[[M:.*]]: tensor<2x1x4x4xi1>, %[[X:.*]]: tensor<2x3x4x4xf32>)
// CHECK-NEXT: %[[S:.*]] = pd.batch_matmul %[[Q]], %[[K]] :
// CHECK-NEXT: %[[V:.*]] = pd.reshape %[[M]] : tensor<2x1x4x4xi1> -> tensor<2x4x4xi1>
// CHECK-NEXT: %[[P:.*]] = pd.masked_softmax %[[S]], %[[V]] {scale = 2.500000e-01 : f32, uniform_empty_rows, zero_nan_rows} : tensor<2x3x4x4xf32>, tensor<2x4x4xi1>
// CHECK-NEXT: %[[W:.*]] = pd.reshape %[[M]] : tensor<2x1x4x4xi1> -> tensor<2x4x4xi1>
// CHECK-NEXT: %[[U:.*]] = pd.masked_softmax %[[X]], %[[W]] {uniform_empty_rows} : tensor<2x3x4x4xf32>, tensor<2x4x4xi1>
// CHECK-NEXT: return %[[P]], %[[U]]
func.func @dynamo_padding(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x8x4xf32>, %m: tensor<2x1x4x4xi1>, %x: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %c = pd.constant dense<5.000000e-01> : tensor<f32>
  %qs = pd.mul %q, %c : tensor<2x3x4x8xf32>, tensor<f32> -> tensor<2x3x4x8xf32>
  %ks = pd.mul %k, %c : tensor<2x3x8x4xf32>, tensor<f32> -> tensor<2x3x8x4xf32>
  %zero = pd.constant dense<0.000000e+00> : tensor<f32>
  %min = pd.constant dense<-3.40282347E+38> : tensor<f32>
  %bias = pd.where %m, %zero, %min : tensor<2x1x4x4xi1>, tensor<f32>, tensor<f32> -> tensor<2x1x4x4xf32>
  %s = pd.batch_matmul %qs, %ks : tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x4x4xf32>
  %t = pd.add %s, %bias : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32> -> tensor<2x3x4x4xf32>
  %p = pd.softmax %t {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %eq = pd.compare %p, %p {predicate = "eq"} : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xi1>
  %nan = pd.not %eq : tensor<2x3x4x4xi1>
  %y = pd.where %nan, %zero, %p : tensor<2x3x4x4xi1>, tensor<f32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %bias2 = pd.where %m, %zero, %min : tensor<2x1x4x4xi1>, tensor<f32>, tensor<f32> -> tensor<2x1x4x4xf32>
  %t2 = pd.add %x, %bias2 : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32> -> tensor<2x3x4x4xf32>
  %u = pd.softmax %t2 {axis = 3 : i64} : tensor<2x3x4x4xf32>
  return %y, %u : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// An additive Where(cond, 0, fill) whose cond is a constant reads as the
// constant mask it is (the same rule as a constant additive mask).
// CHECK-LABEL: func.func @additive_where_constant
// CHECK-NEXT: %[[K:.*]] = pd.constant dense<{{\[}}[true, false], [true, true]]> : tensor<2x2xi1>
// CHECK-NEXT: pd.masked_softmax %arg0, %[[K]] : tensor<3x2x2xf32>, tensor<2x2xi1>
func.func @additive_where_constant(%s: tensor<3x2x2xf32>) -> tensor<3x2x2xf32> {
  %c = pd.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %zero = pd.constant dense<0.000000e+00> : tensor<f32>
  %min = pd.constant dense<-3.40282347E+38> : tensor<f32>
  %m = pd.where %c, %zero, %min : tensor<2x2xi1>, tensor<f32>, tensor<f32> -> tensor<2x2xf32>
  %t = pd.add %s, %m : tensor<3x2x2xf32>, tensor<2x2xf32> -> tensor<3x2x2xf32>
  %p = pd.softmax %t {axis = 2 : i64} : tensor<3x2x2xf32>
  return %p : tensor<3x2x2xf32>
}
