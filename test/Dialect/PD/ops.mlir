// RUN: pd-opt %s | pd-opt | FileCheck %s

// Tests that every pd op round-trips through its custom assembly format.

// CHECK: pd.param @w {onnx_name = "fc.weight"} : tensor<16x8xf32>
pd.param @w {onnx_name = "fc.weight"} : tensor<16x8xf32>

// CHECK-LABEL: func.func @math
func.func @math(%x: tensor<4x8xf32>, %b: tensor<16xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  // CHECK: %[[W:.+]] = pd.param_ref @w : tensor<16x8xf32>
  %w = pd.param_ref @w : tensor<16x8xf32>
  // CHECK: %[[H:.+]] = pd.matmul %{{.+}}, %[[W]] {alpha = 2.000000e+00 : f32, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %h = pd.matmul %x, %w {transpose_rhs, alpha = 2.0 : f32} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  // CHECK: pd.matmul %{{.+}}, %[[W]], %{{.+}} {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %hb = pd.matmul %x, %w, %b {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK: pd.add %[[H]], %{{.+}} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %a = pd.add %h, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK: pd.sub
  %s = pd.sub %a, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK: pd.mul
  %m = pd.mul %s, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK: pd.relu %{{.+}} : tensor<4x16xf32>
  %r = pd.relu %m : tensor<4x16xf32>
  // CHECK: pd.relu_grad
  %rg = pd.relu_grad %r, %r : tensor<4x16xf32>
  // CHECK: pd.scale %{{.+}}, 5.000000e-01 : tensor<4x16xf32>
  %sc = pd.scale %rg, 0.5 : tensor<4x16xf32>
  // CHECK: pd.sum_to %{{.+}} : tensor<4x16xf32> -> tensor<16xf32>
  %st = pd.sum_to %sc : tensor<4x16xf32> -> tensor<16xf32>
  %z = pd.matmul %r, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  // CHECK: pd.softmax_cross_entropy %{{.+}}, %{{.+}} {ignore_index = 3 : i64} : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  %l = pd.softmax_cross_entropy %z, %y {ignore_index = 3} : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  // CHECK: pd.softmax_cross_entropy_grad
  %g = pd.softmax_cross_entropy_grad %l, %z, %y : tensor<f32>, tensor<4x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  // CHECK: %{{.+}}, %{{.+}} = pd.softmax_cross_entropy_with_grad %{{.+}}, %{{.+}} {ignore_index = 3 : i64} : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>, tensor<4x8xf32>
  %lw, %dz = pd.softmax_cross_entropy_with_grad %z, %y {ignore_index = 3} : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>, tensor<4x8xf32>
  // CHECK: pd.constant dense<1.000000e+00> : tensor<2xf32>
  %c = pd.constant dense<1.0> : tensor<2xf32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @stage_ops
func.func @stage_ops(%g: tensor<16x8xf32>) {
  // CHECK: %[[X:.+]] = pd.input 0 "x" : tensor<4x8xf32>
  %x = pd.input 0 "x" : tensor<4x8xf32>
  // CHECK: pd.send %[[X]] to 1 channel 3 : tensor<4x8xf32>
  pd.send %x to 1 channel 3 : tensor<4x8xf32>
  // CHECK: pd.recv from 1 channel 4 : tensor<4x8xf32>
  %r = pd.recv from 1 channel 4 : tensor<4x8xf32>
  // CHECK: pd.grad_seed : tensor<f32>
  %s = pd.grad_seed : tensor<f32>
  // CHECK: pd.report_loss
  pd.report_loss %s : tensor<f32>
  // CHECK: pd.accumulate_grad @w, %{{.+}} : tensor<16x8xf32>
  pd.accumulate_grad @w, %g : tensor<16x8xf32>
  // CHECK: pd.buffer = #pd.buffer<workspace, 128>
  %b = pd.relu %x {pd.buffer = #pd.buffer<workspace, 128>} : tensor<4x8xf32>
  return
}
