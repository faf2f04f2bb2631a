// RUN: pd-opt %s --pd-outline-stages | FileCheck %s

// Tests that a two-stage MLP (as pd-partition-stages leaves it: every op
// with its pd.stage, gradient ops pd.grad_of) becomes two forward and two
// backward functions: the activation crosses forward on channel 0 and its
// gradient backward on channel 1; each stage reads the graph input it
// consumes; the backward's saved values are the forward's results; weights
// are re-read, not stashed.

module attributes {pd.num_stages = 2 : i64} {
pd.param @w1 {onnx_name = "fc1.weight"} : tensor<16x8xf32>
pd.param @b1 {onnx_name = "fc1.bias"} : tensor<16xf32>
pd.param @w2 {onnx_name = "fc2.weight"} : tensor<10x16xf32>
func.func @main(%x: tensor<4x8xf32> {pd.input_name = "x"}, %y: tensor<4xi64> {pd.input_name = "y"}) -> tensor<f32> {
  %w1 = pd.param_ref @w1 {pd.op_id = 0 : i64, pd.stage = 0 : i64} : tensor<16x8xf32>
  %b1 = pd.param_ref @b1 {pd.op_id = 1 : i64, pd.stage = 0 : i64} : tensor<16xf32>
  %h = pd.matmul %x, %w1 {pd.op_id = 2 : i64, pd.stage = 0 : i64, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %hb = pd.add %h, %b1 {pd.op_id = 3 : i64, pd.stage = 0 : i64} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = pd.relu %hb {pd.op_id = 4 : i64, pd.stage = 0 : i64} : tensor<4x16xf32>
  %w2 = pd.param_ref @w2 {pd.op_id = 5 : i64, pd.stage = 1 : i64} : tensor<10x16xf32>
  %z = pd.matmul %r, %w2 {pd.op_id = 6 : i64, pd.stage = 1 : i64, transpose_rhs} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  %l = pd.softmax_cross_entropy %z, %y {pd.op_id = 7 : i64, pd.stage = 1 : i64} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %seed = pd.grad_seed {pd.grad_of = 7 : i64, pd.stage = 1 : i64} : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %seed, %z, %y {pd.grad_of = 7 : i64, pd.stage = 1 : i64} : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  %dr = pd.matmul %dz, %w2 {pd.grad_of = 6 : i64, pd.stage = 1 : i64} : tensor<4x10xf32>, tensor<10x16xf32> -> tensor<4x16xf32>
  %dw2 = pd.matmul %dz, %r {pd.grad_of = 6 : i64, pd.stage = 1 : i64, transpose_lhs} : tensor<4x10xf32>, tensor<4x16xf32> -> tensor<10x16xf32>
  pd.accumulate_grad @w2, %dw2 {pd.grad_of = 5 : i64, pd.stage = 1 : i64} : tensor<10x16xf32>
  %dh = pd.relu_grad %dr, %r {pd.grad_of = 4 : i64, pd.stage = 0 : i64} : tensor<4x16xf32>
  %db1 = pd.sum_to %dh {pd.grad_of = 3 : i64, pd.stage = 0 : i64} : tensor<4x16xf32> -> tensor<16xf32>
  %dw1 = pd.matmul %dh, %x {pd.grad_of = 2 : i64, pd.stage = 0 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @b1, %db1 {pd.grad_of = 1 : i64, pd.stage = 0 : i64} : tensor<16xf32>
  pd.accumulate_grad @w1, %dw1 {pd.grad_of = 0 : i64, pd.stage = 0 : i64} : tensor<16x8xf32>
  return %l : tensor<f32>
}
}

// CHECK-NOT: func.func @main
// CHECK-LABEL: func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x8xf32>)
// CHECK-SAME: pd.phase = #pd.phase<forward>, pd.stage = 0
// CHECK-NEXT: %[[X:.+]] = pd.input 0 "x" : tensor<4x8xf32>
// CHECK-NEXT: %[[W1:.+]] = pd.param_ref @w1
// CHECK-NEXT: %[[H:.+]] = pd.matmul %[[X]], %[[W1]]
// CHECK-NEXT: %[[B1:.+]] = pd.param_ref @b1
// CHECK-NEXT: %[[HB:.+]] = pd.add %[[H]], %[[B1]]
// CHECK-NEXT: %[[R:.+]] = pd.relu %[[HB]]
// CHECK-NEXT: pd.send %[[R]] to 1 channel 0 : tensor<4x16xf32>
// CHECK-NEXT: return %[[R]], %[[X]]

// CHECK-LABEL: func.func @stage0_backward(%arg0: tensor<4x16xf32>, %arg1: tensor<4x8xf32>)
// CHECK-NEXT: %[[DR:.+]] = pd.recv from 1 channel 1 : tensor<4x16xf32>
// CHECK-NEXT: %[[DH:.+]] = pd.relu_grad %[[DR]], %arg0
// CHECK-NEXT: pd.sum_to %[[DH]]
// CHECK-NEXT: pd.matmul %[[DH]], %arg1 {transpose_lhs}
// CHECK-NEXT: pd.accumulate_grad @b1
// CHECK-NEXT: pd.accumulate_grad @w1
// CHECK-NEXT: return

// CHECK-LABEL: func.func @stage1_forward() -> (tensor<4x10xf32>, tensor<4xi64>, tensor<4x16xf32>)
// CHECK-NEXT: %[[H:.+]] = pd.recv from 0 channel 0 : tensor<4x16xf32>
// CHECK-NEXT: %[[W2:.+]] = pd.param_ref @w2
// CHECK-NEXT: %[[Z:.+]] = pd.matmul %[[H]], %[[W2]]
// CHECK-NEXT: %[[Y:.+]] = pd.input 1 "y" : tensor<4xi64>
// CHECK-NEXT: %[[L:.+]] = pd.softmax_cross_entropy %[[Z]], %[[Y]]
// CHECK-NEXT: pd.report_loss %[[L]]
// CHECK-NEXT: return %[[Z]], %[[Y]], %[[H]]

// CHECK-LABEL: func.func @stage1_backward
// CHECK-NEXT: %[[S:.+]] = pd.grad_seed
// CHECK-NEXT: %[[DZ:.+]] = pd.softmax_cross_entropy_grad %[[S]], %arg0, %arg1
// CHECK-NEXT: %[[W2:.+]] = pd.param_ref @w2
// CHECK-NEXT: %[[DH1:.+]] = pd.matmul %[[DZ]], %[[W2]]
// CHECK-NEXT: pd.send %[[DH1]] to 0 channel 1
// CHECK-NEXT: pd.matmul %[[DZ]], %arg2 {transpose_lhs}
// CHECK-NEXT: pd.accumulate_grad @w2
// CHECK-NEXT: return
