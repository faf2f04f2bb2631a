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
