// RUN: pd-opt %s --split-input-file --pd-partition-stages=num-stages=3 --verify-diagnostics

// The input of each case is written as pd-autodiff leaves it (forward ops
// with pd.op_id, gradient ops with pd.grad_of), except the last, which
// tests an op without either.

// Tests that asking for more stages than compute ops fails.
pd.param @w {onnx_name = "w"} : tensor<4x4xf32>
// expected-error @+1 {{pd-partition-stages: cannot split 2 compute ops into 3 stages}}
func.func @main(%x: tensor<4x4xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %w = pd.param_ref @w {pd.op_id = 0 : i64} : tensor<4x4xf32>
  %h = pd.matmul %x, %w {pd.op_id = 1 : i64} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %l = pd.softmax_cross_entropy %h, %y {pd.op_id = 2 : i64} : tensor<4x4xf32>, tensor<4xi64> -> tensor<f32>
  %seed = pd.grad_seed {pd.grad_of = 2 : i64} : tensor<f32>
  %dh = pd.softmax_cross_entropy_grad %seed, %h, %y {pd.grad_of = 2 : i64} : tensor<f32>, tensor<4x4xf32>, tensor<4xi64> -> tensor<4x4xf32>
  %dw = pd.matmul %x, %dh {pd.grad_of = 1 : i64, transpose_lhs} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  pd.accumulate_grad @w, %dw {pd.grad_of = 0 : i64} : tensor<4x4xf32>
  return %l : tensor<f32>
}

// -----

// Tests that one parameter read feeding two stages is refused (a tied
// parameter needs one pd.param_ref per use, as the importer emits).
pd.param @w {onnx_name = "w"} : tensor<64x64xf32>
func.func @main(%x: tensor<64x64xf32>, %y: tensor<64xi64>) -> tensor<f32> {
  // expected-error @+1 {{pd-partition-stages: this read of parameter @w is used on stages 0 and 2; a parameter used on several stages needs one pd.param_ref per use}}
  %w = pd.param_ref @w {pd.op_id = 0 : i64} : tensor<64x64xf32>
  %a = pd.matmul %x, %w {pd.op_id = 1 : i64} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %b = pd.matmul %a, %a {pd.op_id = 2 : i64} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %c = pd.matmul %b, %w {pd.op_id = 3 : i64} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %l = pd.softmax_cross_entropy %c, %y {pd.op_id = 4 : i64} : tensor<64x64xf32>, tensor<64xi64> -> tensor<f32>
  %seed = pd.grad_seed {pd.grad_of = 4 : i64} : tensor<f32>
  %dc = pd.softmax_cross_entropy_grad %seed, %c, %y {pd.grad_of = 4 : i64} : tensor<f32>, tensor<64x64xf32>, tensor<64xi64> -> tensor<64x64xf32>
  %db = pd.matmul %dc, %w {pd.grad_of = 3 : i64, transpose_rhs} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %dwc = pd.matmul %b, %dc {pd.grad_of = 3 : i64, transpose_lhs} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %da1 = pd.matmul %db, %a {pd.grad_of = 2 : i64, transpose_rhs} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %da2 = pd.matmul %a, %db {pd.grad_of = 2 : i64, transpose_lhs} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %da = pd.add %da1, %da2 {pd.grad_of = 2 : i64} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %dwa = pd.matmul %x, %da {pd.grad_of = 1 : i64, transpose_lhs} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %dw = pd.add %dwc, %dwa {pd.grad_of = 1 : i64} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  pd.accumulate_grad @w, %dw {pd.grad_of = 0 : i64} : tensor<64x64xf32>
  return %l : tensor<f32>
}

// -----

// Tests that an op the autodiff did not tag is refused.
func.func @main(%x: tensor<4x4xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+1 {{pd-partition-stages: op is neither forward (pd.op_id) nor gradient (pd.grad_of); run pd-autodiff first}}
  %l = pd.softmax_cross_entropy %x, %y : tensor<4x4xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}
