// RUN: pd-opt %s --split-input-file --verify-diagnostics

// Tests that a conv filter must be rank 4.
func.func @filter_rank(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3xf32>) {
  // expected-error @+1 {{'pd.conv2d' op filter must be [M, C/group, KH, KW], got [3,2,3]}}
  %0 = pd.conv2d %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x2x4x4xf32>, tensor<3x2x3xf32> -> tensor<1x3x2x2xf32>
  return
}

// -----

// Tests that the groups must split input and output channels evenly.
func.func @groups(%x: tensor<1x4x4x4xf32>, %w: tensor<3x2x1x1xf32>) {
  // expected-error @+1 {{'pd.conv2d' op group 2 does not divide input channels 4 and filter [3,2,1,1] into equal groups}}
  %0 = pd.conv2d %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x4x4x4xf32>, tensor<3x2x1x1xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that the input must be NCHW.
func.func @input_rank(%x: tensor<1x2x4xf32>, %w: tensor<3x2x1x1xf32>) {
  // expected-error @+1 {{'pd.conv2d' op input must be NCHW (rank 4), got [1,2,4]}}
  %0 = pd.conv2d %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x2x4xf32>, tensor<3x2x1x1xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that strides are two positive values.
func.func @strides(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) {
  // expected-error @+1 {{'pd.conv2d' op strides must have 2 entries, each at least 1}}
  %0 = pd.conv2d %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 0, 1>} : tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that pads are four non-negative values.
func.func @pads(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) {
  // expected-error @+1 {{'pd.conv2d' op pads must have 4 entries, each at least 0}}
  %0 = pd.conv2d %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that dilations are two positive values.
func.func @dilations(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) {
  // expected-error @+1 {{'pd.conv2d' op dilations must have 2 entries, each at least 1}}
  %0 = pd.conv2d %x, %w {dilations = array<i64: 1, 0>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that the (dilated) kernel must fit the padded input.
func.func @too_small(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'pd.conv2d' op the window does not fit the padded input [1,2,4,4]}}
  %0 = pd.conv2d %x, %w {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x1x1xf32>
  return
}

// -----

// Tests the conv result shape rule.
func.func @conv_result(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'pd.conv2d' op result shape [1,3,5,5] is not [1,3,2,2]}}
  %0 = pd.conv2d %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x5x5xf32>
  return
}

// -----

// Tests that the bias has one value per output channel.
func.func @bias(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'pd.conv2d' op bias must be [M], got [2]}}
  %0 = pd.conv2d %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<2xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that the input gradient has the forward input's shape.
func.func @grad_input(%dy: tensor<1x3x4x4xf32>, %w: tensor<3x2x1x1xf32>) {
  // expected-error @+1 {{'pd.conv2d_grad_input' op result shape [1,3,4,4] is not [1,3,5,5]}}
  %0 = pd.conv2d_grad_input %dy, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x3x4x4xf32>, tensor<3x2x1x1xf32> -> tensor<1x2x5x5xf32>
  return
}

// -----

// Tests that the filter gradient has the filter's shape.
func.func @grad_filter(%dy: tensor<1x3x4x4xf32>, %x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'pd.conv2d_grad_filter' op group 1 does not divide input channels 2 and filter [3,1,1,1] into equal groups}}
  %0 = pd.conv2d_grad_filter %dy, %x {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x3x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<3x1x1x1xf32>
  return
}

// -----

// Tests that batch norm needs a channel axis.
func.func @bn_rank(%x: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.batch_norm' op input must be [N, C, D...], got [4]}}
  %0 = pd.batch_norm %x, %g, %g {epsilon = 1.0e-05 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that batch norm's scale and bias are per channel.
func.func @bn_scale(%x: tensor<2x4x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{'pd.batch_norm' op scale and bias shape [3] is not [4]}}
  %0 = pd.batch_norm %x, %g, %g {epsilon = 1.0e-05 : f32} : tensor<2x4x3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x4x3xf32>
  return
}

// -----

// Tests that batch norm keeps the input type.
func.func @bn_result(%x: tensor<2x4x3xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.batch_norm' op result type must be the input type}}
  %0 = pd.batch_norm %x, %g, %g {epsilon = 1.0e-05 : f32} : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x4xf32>
  return
}

// -----

// Tests that batch norm's running statistics come with a momentum.
pd.state @rm {onnx_name = "rm"} : tensor<4xf32>
func.func @bn_stats_momentum(%x: tensor<2x4x3xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.batch_norm' op running_mean, running_var and momentum come together}}
  %0 = pd.batch_norm %x, %g, %g {epsilon = 1.0e-05 : f32, running_mean = @rm, running_var = @rm} : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x3xf32>
  return
}

// -----

// Tests that batch norm's running statistics name pd.state symbols.
pd.param @w {onnx_name = "w"} : tensor<4xf32>
func.func @bn_stats_symbol(%x: tensor<2x4x3xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.batch_norm' op 'w' does not name a pd.state}}
  %0 = pd.batch_norm %x, %g, %g {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, running_mean = @w, running_var = @w} : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x3xf32>
  return
}

// -----

// Tests that batch norm's running statistics have one value per channel.
pd.state @rm {onnx_name = "rm"} : tensor<3xf32>
func.func @bn_stats_shape(%x: tensor<2x4x3xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'pd.batch_norm' op running statistic 'rm' has type 'tensor<3xf32>', expected 'tensor<4xf32>'}}
  %0 = pd.batch_norm %x, %g, %g {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, running_mean = @rm, running_var = @rm} : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x3xf32>
  return
}

// -----

// Tests that a pooling kernel has two positive sizes.
func.func @pool_kernel(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'pd.max_pool2d' op kernel_shape must have 2 entries, each at least 1}}
  %0 = pd.max_pool2d %x {kernel_shape = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  return
}

// -----

// Tests that pooling pads are smaller than the kernel.
func.func @pool_pads(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'pd.avg_pool2d' op pads must be smaller than the kernel}}
  %0 = pd.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 2, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x3x2xf32>
  return
}

// -----

// Tests that ceil_mode rounds the pooling output size up.
func.func @pool_ceil(%x: tensor<1x2x5x5xf32>) {
  // expected-error @+1 {{'pd.max_pool2d' op result shape [1,2,2,2] is not [1,2,3,3]}}
  %0 = pd.max_pool2d %x {ceil_mode, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x2x5x5xf32> -> tensor<1x2x2x2xf32>
  return
}

// -----

// Tests that pad has a begin and an end per axis.
func.func @pad_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.pad' op pads must have 4 entries, each at least 0}}
  %0 = pd.pad %x {pads = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x4xf32>
  return
}

// -----

// Tests the pad result shape rule.
func.func @pad_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.pad' op result shape [3,4] is not [4,4]}}
  %0 = pd.pad %x {pads = array<i64: 1, 0, 1, 1>} : tensor<2x3xf32> -> tensor<3x4xf32>
  return
}
