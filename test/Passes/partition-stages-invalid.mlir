// RUN: pd-opt %s --split-input-file --pd-autodiff --pd-partition-stages=num-stages=3 --verify-diagnostics

// Tests that asking for more stages than compute ops fails.
pd.param @w {onnx_name = "w"} : tensor<4x4xf32>
// expected-error @+1 {{pd-partition-stages: cannot split 2 compute ops into 3 stages}}
func.func @main(%x: tensor<4x4xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x4xf32>
  %h = pd.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %l = pd.softmax_cross_entropy %h, %y : tensor<4x4xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that one parameter read feeding two stages is refused (a tied
// parameter needs one pd.param_ref per use, as the importer emits).
pd.param @w {onnx_name = "w"} : tensor<64x64xf32>
func.func @main(%x: tensor<64x64xf32>, %y: tensor<64xi64>) -> tensor<f32> {
  // expected-error @+1 {{pd-partition-stages: this read of parameter @w is used on stages 0 and 2; a parameter used on several stages needs one pd.param_ref per use}}
  %w = pd.param_ref @w : tensor<64x64xf32>
  %a = pd.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %b = pd.matmul %a, %a : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %c = pd.matmul %b, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %l = pd.softmax_cross_entropy %c, %y : tensor<64x64xf32>, tensor<64xi64> -> tensor<f32>
  return %l : tensor<f32>
}
