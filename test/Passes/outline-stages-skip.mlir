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

// Stage 0 sends h0 to stage 1 (channel 0) and straight to stage 2 (channel 1).
// CHECK-LABEL: func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %[[X:.+]] = pd.input 0 "x" : tensor<4x8xf32>
// CHECK-NEXT:    %[[W0:.+]] = pd.param_ref @w0
// CHECK-NEXT:    %[[H:.+]] = pd.matmul %[[X]], %[[W0]] {transpose_rhs}
// CHECK-NEXT:    %[[H0:.+]] = pd.relu %[[H]]
// CHECK-NEXT:    pd.send %[[H0]] to 1 channel 0
// CHECK-NEXT:    pd.send %[[H0]] to 2 channel 1
// CHECK-NEXT:    return %[[H0]], %[[X]]
// CHECK-LABEL: func.func @stage0_backward(
// CHECK-SAME:      %[[H0S:[^:]+]]: tensor<4x16xf32>, %[[XS:[^:]+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[DH0:.+]] = pd.recv from 1 channel 5
// CHECK-NEXT:    %[[DH:.+]] = pd.relu_grad %[[DH0]], %[[H0S]]
// CHECK-NEXT:    %[[DW0:.+]] = pd.matmul %[[DH]], %[[XS]] {transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w0, %[[DW0]]
// CHECK-NEXT:    return

// Stage 1 neither receives nor forwards the skip value.
// CHECK-LABEL: func.func @stage1_forward() -> tensor<4x16xf32>
// CHECK-NEXT:    %[[H0:.+]] = pd.recv from 0 channel 0
// CHECK-NEXT:    %[[W1:.+]] = pd.param_ref @w1
// CHECK-NEXT:    %[[G:.+]] = pd.matmul %[[H0]], %[[W1]] {transpose_rhs}
// CHECK-NEXT:    pd.send %[[G]] to 2 channel 2
// CHECK-NEXT:    return %[[H0]]
// The skip's gradient from stage 2 (channel 3) is added to fc1's input
// gradient here and the sum sent to stage 0 (channel 5).
// CHECK-LABEL: func.func @stage1_backward(
// CHECK-SAME:      %[[H0S:[^:]+]]: tensor<4x16xf32>)
// CHECK-NEXT:    %[[DG:.+]] = pd.recv from 2 channel 4
// CHECK-NEXT:    %[[W1:.+]] = pd.param_ref @w1
// CHECK-NEXT:    %[[DH0A:.+]] = pd.matmul %[[DG]], %[[W1]] :
// CHECK-NEXT:    %[[DW1:.+]] = pd.matmul %[[DG]], %[[H0S]] {transpose_lhs}
// CHECK-NEXT:    %[[SKIP:.+]] = pd.recv from 2 channel 3
// CHECK-NEXT:    %[[SUM:.+]] = pd.add %[[SKIP]], %[[DH0A]]
// CHECK-NEXT:    pd.send %[[SUM]] to 0 channel 5
// CHECK-NEXT:    pd.accumulate_grad @w1, %[[DW1]]
// CHECK-NEXT:    return

// CHECK-LABEL: func.func @stage2_forward() -> (tensor<4x10xf32>, tensor<4xi64>, tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK-NEXT:    %[[FROM1:.+]] = pd.recv from 1 channel 2
// CHECK-NEXT:    %[[H1:.+]] = pd.relu %[[FROM1]]
// CHECK-NEXT:    %[[FROM0:.+]] = pd.recv from 0 channel 1
// CHECK-NEXT:    %[[S:.+]] = pd.add %[[H1]], %[[FROM0]]
// CHECK-NEXT:    %[[W2:.+]] = pd.param_ref @w2
// CHECK-NEXT:    %[[Z:.+]] = pd.matmul %[[S]], %[[W2]] {transpose_rhs}
// CHECK-NEXT:    %[[Y:.+]] = pd.input 1 "y"
// CHECK-NEXT:    %[[L:.+]] = pd.softmax_cross_entropy %[[Z]], %[[Y]]
// CHECK-NEXT:    pd.report_loss %[[L]]
// CHECK-NEXT:    return %[[Z]], %[[Y]], %[[S]], %[[H1]]
// CHECK-LABEL: func.func @stage2_backward(
// CHECK-SAME:      %[[ZS:[^:]+]]: tensor<4x10xf32>, %[[YS:[^:]+]]: tensor<4xi64>, %[[SS:[^:]+]]: tensor<4x16xf32>, %[[H1S:[^:]+]]: tensor<4x16xf32>)
// CHECK-NEXT:    %[[SEED:.+]] = pd.grad_seed
// CHECK-NEXT:    %[[DZ:.+]] = pd.softmax_cross_entropy_grad %[[SEED]], %[[ZS]], %[[YS]]
// CHECK-NEXT:    %[[W2:.+]] = pd.param_ref @w2
// CHECK-NEXT:    %[[DS:.+]] = pd.matmul %[[DZ]], %[[W2]] :
// CHECK-NEXT:    pd.send %[[DS]] to 1 channel 3
// CHECK-NEXT:    %[[DW2:.+]] = pd.matmul %[[DZ]], %[[SS]] {transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w2, %[[DW2]]
// CHECK-NEXT:    %[[DG:.+]] = pd.relu_grad %[[DS]], %[[H1S]]
// CHECK-NEXT:    pd.send %[[DG]] to 1 channel 4
// CHECK-NEXT:    return
