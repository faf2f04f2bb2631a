// RUN: pd-opt %s --split-input-file --pd-autodiff --verify-diagnostics

// Tests that the loss function must return one scalar f32.
// expected-error @+1 {{pd-autodiff: @main must return exactly one scalar f32 loss}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Tests that an op without a gradient rule on the path to the loss fails.
pd.param @w {onnx_name = "w"} : tensor<4x4xf32>
func.func @main(%y: tensor<4xi64>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x4xf32>
  // expected-error @+1 {{pd-autodiff: no gradient rule for 'pd.relu_grad'}}
  %g = pd.relu_grad %w, %w : tensor<4x4xf32>
  %l = pd.softmax_cross_entropy %g, %y : tensor<4x4xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that a missing loss function is reported.
// expected-error @+1 {{pd-autodiff: no function @main}}
module {
  func.func @other() { return }
}
