// RUN: pd-opt %s | pd-opt | FileCheck %s

// Tests that the Conv family's ops round-trip through their custom formats.

// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>,
                %dy: tensor<2x6x4x4xf32>) {
  // CHECK: pd.conv2d %{{.+}}, %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<2x6x4x4xf32>
  %y = pd.conv2d %x, %w, %b {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<2x6x4x4xf32>
  // CHECK: pd.conv2d %{{.+}}, %{{.+}} {{{.+}}} : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x4xf32>
  %n = pd.conv2d %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x4xf32>
  // CHECK: pd.conv2d_grad_input %{{.+}}, %{{.+}} {{{.+}}} : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x8xf32>
  %dx = pd.conv2d_grad_input %dy, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x8xf32>
  // CHECK: pd.conv2d_grad_filter %{{.+}}, %{{.+}} {{{.+}}} : tensor<2x6x4x4xf32>, tensor<2x4x8x8xf32> -> tensor<6x2x3x3xf32>
  %dw = pd.conv2d_grad_filter %dy, %x {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x6x4x4xf32>, tensor<2x4x8x8xf32> -> tensor<6x2x3x3xf32>
  return
}

// CHECK: pd.state @rm {onnx_name = "bn.running_mean"} : tensor<4xf32>
pd.state @rm {onnx_name = "bn.running_mean"} : tensor<4xf32>
pd.state @rv {onnx_name = "bn.running_var"} : tensor<4xf32>

// CHECK-LABEL: func.func @norm_pool_pad
func.func @norm_pool_pad(%x: tensor<2x4x8x8xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>,
                         %dp: tensor<2x4x4x4xf32>) {
  // CHECK: pd.batch_norm %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 9.99999974E-6 : f32} : tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  %y = pd.batch_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  // CHECK: pd.batch_norm %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 9.99999974E-6 : f32, momentum = 0.899999976 : f32, running_mean = @rm, running_var = @rv}
  %s = pd.batch_norm %x, %g, %b {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, running_mean = @rm, running_var = @rv} : tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  // CHECK: pd.batch_norm_grad %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 9.99999974E-6 : f32} : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>
  %dx, %dg, %db = pd.batch_norm_grad %y, %x, %g {epsilon = 1.0e-05 : f32} : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>
  // CHECK: pd.max_pool2d %{{.+}} {ceil_mode, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %m = pd.max_pool2d %x {ceil_mode, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  // CHECK: pd.max_pool2d_grad %{{.+}}, %{{.+}} {ceil_mode, {{.+}}} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %dm = pd.max_pool2d_grad %dp, %x {ceil_mode, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  // CHECK: pd.avg_pool2d %{{.+}} {count_include_pad, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %a = pd.avg_pool2d %x {count_include_pad, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  // CHECK: pd.avg_pool2d_grad %{{.+}} {count_include_pad, {{.+}}} : tensor<2x4x4x4xf32> -> tensor<2x4x8x8xf32>
  %da = pd.avg_pool2d_grad %dp {count_include_pad, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32> -> tensor<2x4x8x8xf32>
  // CHECK: pd.pad %{{.+}} {pads = array<i64: 0, 0, 1, 2, 0, 0, 3, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x12x10xf32>
  %p = pd.pad %x {pads = array<i64: 0, 0, 1, 2, 0, 0, 3, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x12x10xf32>
  return
}
