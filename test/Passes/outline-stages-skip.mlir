// RUN: pd-opt %s --pd-outline-stages | FileCheck %s

// Tests that a value used two stages later (a skip connection from stage 0
// to stage 2) goes point to point, past stage 1: stage 0 sends it to stage 1
// and straight to stage 2. Its gradient contributions are summed where
// autodiff put the sum (with the last contributor, on stage 1), so stage 2
// sends its part to stage 1, which sends the sum on to stage 0.
// The input is the partitioned training function of
// x -> fc0 -> relu (h0) -> fc1 -> relu (h1) -> h1 + h0 -> fc2 -> loss on 3 stages.
module attributes {pd.num_stages = 3 : i64} {
pd.param @w0 {onnx_name = "w0"} : tensor<16x8xf32>
pd.param @w1 {onnx_name = "w1"} : tensor<16x16xf32>
pd.param @w2 {onnx_name = "w2"} : tensor<10x16xf32>
func.func @main(%x: tensor<4x8xf32> {pd.input_name = "x"}, %y: tensor<4xi64> {pd.input_name = "y"}) -> tensor<f32> {
  %w0 = pd.param_ref @w0 {pd.op_id = 0 : i64, pd.stage = 0 : i64} : tensor<16x8xf32>
  %h = pd.matmul %x, %w0 {pd.op_id = 1 : i64, pd.stage = 0 : i64, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %h0 = pd.relu %h {pd.op_id = 2 : i64, pd.stage = 0 : i64} : tensor<4x16xf32>
  %w1 = pd.param_ref @w1 {pd.op_id = 3 : i64, pd.stage = 1 : i64} : tensor<16x16xf32>
  %g = pd.matmul %h0, %w1 {pd.op_id = 4 : i64, pd.stage = 1 : i64, transpose_rhs} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %h1 = pd.relu %g {pd.op_id = 5 : i64, pd.stage = 2 : i64} : tensor<4x16xf32>
  %s = pd.add %h1, %h0 {pd.op_id = 6 : i64, pd.stage = 2 : i64} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %w2 = pd.param_ref @w2 {pd.op_id = 7 : i64, pd.stage = 2 : i64} : tensor<10x16xf32>
  %z = pd.matmul %s, %w2 {pd.op_id = 8 : i64, pd.stage = 2 : i64, transpose_rhs} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  %l = pd.softmax_cross_entropy %z, %y {pd.op_id = 9 : i64, pd.stage = 2 : i64} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %seed = pd.grad_seed {pd.grad_of = 9 : i64, pd.stage = 2 : i64} : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %seed, %z, %y {pd.grad_of = 9 : i64, pd.stage = 2 : i64} : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  %ds = pd.matmul %dz, %w2 {pd.grad_of = 8 : i64, pd.stage = 2 : i64} : tensor<4x10xf32>, tensor<10x16xf32> -> tensor<4x16xf32>
  %dw2 = pd.matmul %dz, %s {pd.grad_of = 8 : i64, pd.stage = 2 : i64, transpose_lhs} : tensor<4x10xf32>, tensor<4x16xf32> -> tensor<10x16xf32>
  pd.accumulate_grad @w2, %dw2 {pd.grad_of = 7 : i64, pd.stage = 2 : i64} : tensor<10x16xf32>
  %dg = pd.relu_grad %ds, %h1 {pd.grad_of = 5 : i64, pd.stage = 2 : i64} : tensor<4x16xf32>
  %dh0a = pd.matmul %dg, %w1 {pd.grad_of = 4 : i64, pd.stage = 1 : i64} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %dw1 = pd.matmul %dg, %h0 {pd.grad_of = 4 : i64, pd.stage = 1 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<16x16xf32>
  %dh0 = pd.add %ds, %dh0a {pd.grad_of = 4 : i64, pd.stage = 1 : i64} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  pd.accumulate_grad @w1, %dw1 {pd.grad_of = 3 : i64, pd.stage = 1 : i64} : tensor<16x16xf32>
  %dh = pd.relu_grad %dh0, %h0 {pd.grad_of = 2 : i64, pd.stage = 0 : i64} : tensor<4x16xf32>
  %dw0 = pd.matmul %dh, %x {pd.grad_of = 1 : i64, pd.stage = 0 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w0, %dw0 {pd.grad_of = 0 : i64, pd.stage = 0 : i64} : tensor<16x8xf32>
  return %l : tensor<f32>
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK: %[[H0:.+]] = pd.relu
// CHECK-NEXT: pd.send %[[H0]] to 1 channel 0
// CHECK-NEXT: pd.send %[[H0]] to 2 channel 1
// CHECK-LABEL: func.func @stage0_backward
// CHECK: pd.recv from 1 channel 5
// CHECK-LABEL: func.func @stage1_forward
// CHECK-NOT: channel 1
// CHECK-LABEL: func.func @stage1_backward
// CHECK: %[[SKIP:.+]] = pd.recv from 2 channel 3
// CHECK-NEXT: %[[SUM:.+]] = pd.add %[[SKIP]],
// CHECK-NEXT: pd.send %[[SUM]] to 0 channel 5
// CHECK-LABEL: func.func @stage2_forward
// CHECK: %[[FROM1:.+]] = pd.recv from 1 channel 2
// CHECK: %[[R:.+]] = pd.relu %[[FROM1]]
// CHECK-NEXT: %[[FROM0:.+]] = pd.recv from 0 channel 1
// CHECK-NEXT: pd.add %[[R]], %[[FROM0]]
// CHECK-LABEL: func.func @stage2_backward
// CHECK: pd.send %{{.+}} to 1 channel 3
