// RUN: pd-opt %s --pd-autodiff --pd-partition-stages=num-stages=2 --pd-outline-stages | FileCheck %s

// Tests that a two-stage MLP becomes two forward and two backward functions:
// the activation crosses forward on channel 0 and its gradient backward on
// channel 1; each stage reads the graph input it consumes; the backward's
// saved values are the forward's results; weights are re-read, not stashed.

pd.param @w1 {onnx_name = "fc1.weight"} : tensor<16x8xf32>
pd.param @b1 {onnx_name = "fc1.bias"} : tensor<16xf32>
pd.param @w2 {onnx_name = "fc2.weight"} : tensor<10x16xf32>
func.func @main(%x: tensor<4x8xf32> {pd.input_name = "x"}, %y: tensor<4xi64> {pd.input_name = "y"}) -> tensor<f32> {
  %w1 = pd.param_ref @w1 : tensor<16x8xf32>
  %b1 = pd.param_ref @b1 : tensor<16xf32>
  %h = pd.matmul %x, %w1 {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %hb = pd.add %h, %b1 : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = pd.relu %hb : tensor<4x16xf32>
  %w2 = pd.param_ref @w2 : tensor<10x16xf32>
  %z = pd.matmul %r, %w2 {transpose_rhs} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-NOT: func.func @main
// CHECK-LABEL: func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x8xf32>)
// CHECK-SAME: pd.phase = #pd.phase<forward>, pd.stage = 0
// CHECK: %[[X:.+]] = pd.input 0 "x" : tensor<4x8xf32>
// CHECK: %[[W1:.+]] = pd.param_ref @w1
// CHECK: pd.matmul %[[X]], %[[W1]]
// CHECK: %[[R:.+]] = pd.relu
// CHECK-NEXT: pd.send %[[R]] to 1 channel 0 : tensor<4x16xf32>
// CHECK: return %[[R]], %[[X]]

// CHECK-LABEL: func.func @stage0_backward(%arg0: tensor<4x16xf32>, %arg1: tensor<4x8xf32>)
// CHECK: %[[DR:.+]] = pd.recv from 1 channel 1 : tensor<4x16xf32>
// CHECK: %[[DH:.+]] = pd.relu_grad %[[DR]], %arg0
// CHECK: pd.sum_to %[[DH]]
// CHECK: pd.matmul %[[DH]], %arg1 {transpose_lhs}
// CHECK: pd.accumulate_grad @b1
// CHECK: pd.accumulate_grad @w1
// CHECK: return

// CHECK-LABEL: func.func @stage1_forward() -> (tensor<4x10xf32>, tensor<4xi64>, tensor<4x16xf32>)
// CHECK: %[[H:.+]] = pd.recv from 0 channel 0 : tensor<4x16xf32>
// CHECK: %[[Z:.+]] = pd.matmul %[[H]]
// CHECK: %[[Y:.+]] = pd.input 1 "y" : tensor<4xi64>
// CHECK: %[[L:.+]] = pd.softmax_cross_entropy %[[Z]], %[[Y]]
// CHECK: pd.report_loss %[[L]]
// CHECK: return %[[Z]], %[[Y]], %[[H]]

// CHECK-LABEL: func.func @stage1_backward
// CHECK: %[[S:.+]] = pd.grad_seed
// CHECK: %[[DZ:.+]] = pd.softmax_cross_entropy_grad %[[S]], %arg0, %arg1
// CHECK: %[[W2:.+]] = pd.param_ref @w2
// CHECK: %[[DH1:.+]] = pd.matmul %[[DZ]], %[[W2]]
// CHECK-NEXT: pd.send %[[DH1]] to 0 channel 1
// CHECK: pd.matmul %[[DZ]], %arg2 {transpose_lhs}
// CHECK: pd.accumulate_grad @w2
