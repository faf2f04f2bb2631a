// RUN: pd-opt %s --pd-autodiff | FileCheck %s

// Tests the gradient rules of the Conv family: conv2d gives its input,
// filter and bias gradients, batch norm one fused gradient op, pooling
// its own gradient ops and pad a slice.

pd.param @w {onnx_name = "w"} : tensor<4x2x3x3xf32>
pd.param @b {onnx_name = "b"} : tensor<4xf32>
pd.param @g {onnx_name = "g"} : tensor<4xf32>
pd.param @beta {onnx_name = "beta"} : tensor<4xf32>
pd.param @s {onnx_name = "s"} : tensor<6xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<2x2x6x6xf32>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<4x2x3x3xf32>
  %b = pd.param_ref @b : tensor<4xf32>
  %g = pd.param_ref @g : tensor<4xf32>
  %beta = pd.param_ref @beta : tensor<4xf32>
  %s = pd.param_ref @s : tensor<6xf32>
  %xs = pd.mul %x, %s : tensor<2x2x6x6xf32>, tensor<6xf32> -> tensor<2x2x6x6xf32>
  %p = pd.pad %xs {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : tensor<2x2x6x6xf32> -> tensor<2x2x8x8xf32>
  %c = pd.conv2d %p, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<2x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  %n = pd.batch_norm %c, %g, %beta {epsilon = 1.0e-05 : f32} : tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  %m = pd.max_pool2d %n {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x6x6xf32> -> tensor<2x4x3x3xf32>
  %a = pd.avg_pool2d %m {count_include_pad, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x4x3x3xf32> -> tensor<2x4x2x2xf32>
  %l = pd.reduce_sum %a {axes = array<i64: 0, 1, 2, 3>} : tensor<2x4x2x2xf32> -> tensor<f32>
  // CHECK: %[[S:.+]] = pd.grad_seed
  // CHECK-NEXT: %[[DA:.+]] = pd.broadcast_axes %[[S]]
  // CHECK-NEXT: %[[DM:.+]] = pd.avg_pool2d_grad %[[DA]] {count_include_pad, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, pd.grad_of = 10 : i64, strides = array<i64: 2, 2>} : tensor<2x4x2x2xf32> -> tensor<2x4x3x3xf32>
  // CHECK-NEXT: %[[DN:.+]] = pd.max_pool2d_grad %[[DM]], %{{.+}} {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, pd.grad_of = 9 : i64, strides = array<i64: 2, 2>} : tensor<2x4x3x3xf32>, tensor<2x4x6x6xf32> -> tensor<2x4x6x6xf32>
  // CHECK-NEXT: %[[DC:.+]], %[[DG:.+]], %[[DBETA:.+]] = pd.batch_norm_grad %[[DN]], %{{.+}}, %{{.+}} {epsilon = 9.99999974E-6 : f32, pd.grad_of = 8 : i64}
  // CHECK-NEXT: %[[DP:.+]] = pd.conv2d_grad_input %[[DC]], %{{.+}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, pd.grad_of = 7 : i64, strides = array<i64: 1, 1>} : tensor<2x4x6x6xf32>, tensor<4x2x3x3xf32> -> tensor<2x2x8x8xf32>
  // CHECK-NEXT: %[[DW:.+]] = pd.conv2d_grad_filter %[[DC]], %{{.+}} {{{.+}}pd.grad_of = 7 : i64{{.+}}} : tensor<2x4x6x6xf32>, tensor<2x2x8x8xf32> -> tensor<4x2x3x3xf32>
  // CHECK-NEXT: %[[DB:.+]] = pd.reduce_sum %[[DC]] {axes = array<i64: 0, 2, 3>, pd.grad_of = 7 : i64} : tensor<2x4x6x6xf32> -> tensor<4xf32>
  // CHECK-NEXT: %[[DXS:.+]] = pd.slice %[[DP]] {pd.grad_of = 6 : i64, starts = array<i64: 0, 0, 1, 1>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x2x8x8xf32> -> tensor<2x2x6x6xf32>
  // CHECK-NEXT: %[[DSX:.+]] = pd.mul %[[DXS]], %{{.+}} {pd.grad_of = 5 : i64}
  // CHECK-NEXT: %[[DS:.+]] = pd.sum_to %[[DSX]] {pd.grad_of = 5 : i64} : tensor<2x2x6x6xf32> -> tensor<6xf32>
  // CHECK-NEXT: pd.accumulate_grad @s, %[[DS]]
  // CHECK-NEXT: pd.accumulate_grad @beta, %[[DBETA]]
  // CHECK-NEXT: pd.accumulate_grad @g, %[[DG]]
  // CHECK-NEXT: pd.accumulate_grad @b, %[[DB]]
  // CHECK-NEXT: pd.accumulate_grad @w, %[[DW]]
  // CHECK-NEXT: return
  return %l : tensor<f32>
}
