//===- PDOpsConv.td - pd conv ops -----------------------*- tablegen -*-===//
//
// The convolutional ops: 2-D convolution, batch normalization with batch
// statistics, max/average pooling and zero padding, with the ops their
// gradients use. Included by PDOps.td; verifiers, costs and gradient rules
// in PDOpsConv.cpp.
//
//===----------------------------------------------------------------------===//

/// The window attributes shared by convolution and pooling: `strides`
/// [sh, sw], `pads` [top, left, bottom, right] (ONNX order), `dilations`.
defvar PD_WindowAttrs = (ins DenseI64ArrayAttr:$strides,
                             DenseI64ArrayAttr:$pads);

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

def PD_Conv2dOp : PD_Op<"conv2d", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Grouped 2-D convolution of an NCHW tensor, with optional bias.";
  let description = [{
    y[n, m, oy, ox] = bias[m] + sum over the input channels c of m's group
    and the kernel taps (ky, kx) of
    filter[m, c, ky, kx] * x[n, c, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw]
    (zero outside the input). The filter is [M, C/group, KH, KW]; `pads`
    are [top, left, bottom, right]. ONNX Conv (2-D, any auto_pad) imports
    to this op.

    ```mlir
    %y = pd.conv2d %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<2x1x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = !con((ins PD_F32Tensor:$input, PD_F32Tensor:$filter,
                            Optional<PD_F32Tensor>:$bias),
                       PD_WindowAttrs,
                       (ins DenseI64ArrayAttr:$dilations, I64Attr:$group));
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? attr-dict `:` type($input) `,` type($filter) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_Conv2dGradInputOp : PD_Op<"conv2d_grad_input", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of conv2d for its input (transposed convolution).";
  let description = [{
    dx = col2im(filter^T dy) per image and group; the result type is the
    forward input's. Attributes are the forward's.

    ```mlir
    %dx = pd.conv2d_grad_input %dy, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2x1x8x8xf32>
    ```
  }];
  let arguments = !con((ins PD_F32Tensor:$grad, PD_F32Tensor:$filter),
                       PD_WindowAttrs,
                       (ins DenseI64ArrayAttr:$dilations, I64Attr:$group));
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $filter attr-dict `:` type($grad) `,` type($filter) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_Conv2dGradFilterOp : PD_Op<"conv2d_grad_filter", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of conv2d for its filter.";
  let description = [{
    dfilter = sum over images of dy im2col(x)^T per group; the result type
    is the forward filter's. Attributes are the forward's.

    ```mlir
    %dw = pd.conv2d_grad_filter %dy, %x {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32> -> tensor<4x1x3x3xf32>
    ```
  }];
  let arguments = !con((ins PD_F32Tensor:$grad, PD_F32Tensor:$input),
                       PD_WindowAttrs,
                       (ins DenseI64ArrayAttr:$dilations, I64Attr:$group));
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` type($grad) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

def PD_BatchNormOp : PD_Op<"batch_norm", [
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Batch normalization with the statistics of the batch.";
  let description = [{
    For x [N, C, D...]: per channel c, mean and biased variance over N and
    D..., then y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c].
    ONNX BatchNormalization in training mode imports to this op. With
    `running_mean` and `running_var` (pd.state symbols of shape [C]) each
    execution also updates them as torch does (ONNX's momentum m is 1 -
    torch's): running_mean = m * running_mean + (1 - m) * mean and
    running_var = m * running_var + (1 - m) * var * k / (k - 1), the
    unbiased variance over k = N * prod(D...) elements. That update is the
    op's only side effect: it runs once per microbatch forward, in
    microbatch order; a recomputed forward must drop the two attributes.
    In inference mode ONNX BatchNormalization imports to
    pd.mul/pd.sub/pd.add with the running statistics as constants:
    y = x * k + (bias - mean * k), k = scale / sqrt(var + eps), so only
    scale and bias are trained.

    ```mlir
    %y = pd.batch_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
    %z = pd.batch_norm %x, %g, %b {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, running_mean = @bn.running_mean, running_var = @bn.running_var} : tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, PD_F32Tensor:$scale,
                       PD_F32Tensor:$bias, F32Attr:$epsilon,
                       OptionalAttr<F32Attr>:$momentum,
                       OptionalAttr<FlatSymbolRefAttr>:$running_mean,
                       OptionalAttr<FlatSymbolRefAttr>:$running_var);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` type($input) `,` type($scale) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_BatchNormGradOp : PD_Op<"batch_norm_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradients of batch_norm for its input, scale and bias.";
  let description = [{
    Recomputes each channel's mean and rstd = 1/sqrt(var + epsilon) from x,
    then with k = N * prod(D...) elements per channel: dbias = sum dy,
    dscale = sum dy * xhat, dx = scale * rstd / k * (k dy - dbias -
    xhat * dscale).

    ```mlir
    %dx, %dg, %db = pd.batch_norm_grad %dy, %x, %g {epsilon = 1.0e-05 : f32} : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$input,
                       PD_F32Tensor:$scale, F32Attr:$epsilon);
  let results = (outs PD_F32Tensor:$input_grad, PD_F32Tensor:$scale_grad,
                      PD_F32Tensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $scale attr-dict `:` type($grad) `,` type($input) `,` type($scale) `->` type($input_grad) `,` type($scale_grad) `,` type($bias_grad)
  }];
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Attributes of the pooling ops: the window and its rounding.
defvar PD_PoolAttrs = !con((ins DenseI64ArrayAttr:$kernel_shape),
                           PD_WindowAttrs, (ins UnitAttr:$ceil_mode));

def PD_MaxPool2dOp : PD_Op<"max_pool2d", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "2-D max pooling of an NCHW tensor.";
  let description = [{
    Each output is the maximum of its `kernel_shape` window (stride
    `strides`, input padded by `pads` [top, left, bottom, right] with values
    that never win). With `ceil_mode` the output size rounds up (a last
    window must start inside the input or the begin padding). ONNX MaxPool
    (2-D, dilations 1, no Indices output) imports to this op.

    ```mlir
    %y = pd.max_pool2d %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
    ```
  }];
  let arguments = !con((ins PD_F32Tensor:$input), PD_PoolAttrs);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def PD_MaxPool2dGradOp : PD_Op<"max_pool2d_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of max_pool2d: dy routed to each window's maximum.";
  let description = [{
    Recomputes each window's first maximum from the forward input x and
    adds the window's dy there (overlapping windows add up); every other
    element of dx is 0. Attributes are the forward's.

    ```mlir
    %dx = pd.max_pool2d_grad %dy, %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = !con((ins PD_F32Tensor:$grad, PD_F32Tensor:$input),
                       PD_PoolAttrs);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` type($grad) `,` type($input) `->` type($result)
  }];
}

def PD_AvgPool2dOp : PD_Op<"avg_pool2d", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "2-D average pooling of an NCHW tensor.";
  let description = [{
    Each output is the sum of its window's inputs over a divisor: with
    `count_include_pad` the window's size up to the end of the padding,
    otherwise the number of inputs it covers (PyTorch's rule, also for
    `ceil_mode` windows that run past the padding). ONNX AveragePool
    (2-D) imports to this op.

    ```mlir
    %y = pd.avg_pool2d %x {count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
    ```
  }];
  let arguments = !con((ins PD_F32Tensor:$input), PD_PoolAttrs,
                       (ins UnitAttr:$count_include_pad));
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def PD_AvgPool2dGradOp : PD_Op<"avg_pool2d_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of avg_pool2d: dy spread evenly over each window.";
  let description = [{
    Adds dy / divisor to every input of the window (the forward's
    divisor); the result type is the forward input's.

    ```mlir
    %dx = pd.avg_pool2d_grad %dy {count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = !con((ins PD_F32Tensor:$grad), PD_PoolAttrs,
                       (ins UnitAttr:$count_include_pad));
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Padding
//===----------------------------------------------------------------------===//

def PD_PadOp : PD_Op<"pad", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Constant padding: the input placed at an offset in a filled tensor.";
  let description = [{
    `pads` are ONNX's [begin..., end...] (non-negative, one pair per axis);
    result dim i = input dim i + begin i + end i. ONNX Pad in constant mode
    imports to this op (PyTorch emits it before AveragePool when
    count_include_pad is set, and transformers' causal LM loss pads the
    int64 labels with -100). `value` fills the padding (converted to the
    element type). Its gradient is pd.slice.

    ```mlir
    %y = pd.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x10x10xf32>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$input, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
