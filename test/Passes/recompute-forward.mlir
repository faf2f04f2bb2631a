// RUN: pd-opt %s --split-input-file --pd-recompute-forward=stages=0,1 | FileCheck %s
// RUN: pd-opt %s --split-input-file --pd-recompute-forward=stages=1 | FileCheck %s --check-prefix=ONE

// Tests full recomputation of a two-stage MLP: each forward returns (stashes)
// only its stage inputs; each backward starts by rerunning the forward ops
// whose values it reads (not the loss, not the sends) from those inputs.

pd.param @w1 {onnx_name = "w1"} : tensor<16x8xf32>
pd.param @w2 {onnx_name = "w2"} : tensor<10x16xf32>
func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x8xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x8xf32>
  %w1 = pd.param_ref @w1 : tensor<16x8xf32>
  %h = pd.matmul %x, %w1 {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %r = pd.relu %h : tensor<4x16xf32>
  pd.send %r to 1 channel 0 : tensor<4x16xf32>
  return %r, %x : tensor<4x16xf32>, tensor<4x8xf32>
}
func.func @stage0_backward(%r: tensor<4x16xf32>, %x: tensor<4x8xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dr = pd.recv from 1 channel 1 : tensor<4x16xf32>
  %dh = pd.relu_grad %dr, %r : tensor<4x16xf32>
  %dw1 = pd.matmul %dh, %x {transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w1, %dw1 : tensor<16x8xf32>
  return
}
func.func @stage1_forward() -> (tensor<4x10xf32>, tensor<4xi64>, tensor<4x16xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 1 : i64} {
  %r = pd.recv from 0 channel 0 : tensor<4x16xf32>
  %w2 = pd.param_ref @w2 : tensor<10x16xf32>
  %z = pd.matmul %r, %w2 {transpose_rhs} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  %y = pd.input 1 "y" : tensor<4xi64>
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  pd.report_loss %l : tensor<f32>
  return %z, %y, %r : tensor<4x10xf32>, tensor<4xi64>, tensor<4x16xf32>
}
func.func @stage1_backward(%z: tensor<4x10xf32>, %y: tensor<4xi64>, %r: tensor<4x16xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 1 : i64} {
  %seed = pd.grad_seed : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %seed, %z, %y : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  %w2 = pd.param_ref @w2 : tensor<10x16xf32>
  %dr = pd.matmul %dz, %w2 : tensor<4x10xf32>, tensor<10x16xf32> -> tensor<4x16xf32>
  pd.send %dr to 0 channel 1 : tensor<4x16xf32>
  %dw2 = pd.matmul %dz, %r {transpose_lhs} : tensor<4x10xf32>, tensor<4x16xf32> -> tensor<10x16xf32>
  pd.accumulate_grad @w2, %dw2 : tensor<10x16xf32>
  return
}

// CHECK-LABEL: func.func @stage0_forward() -> tensor<4x8xf32>
// CHECK-NEXT:    %[[X:.+]] = pd.input 0 "x"
// CHECK-NEXT:    pd.param_ref @w1
// CHECK-NEXT:    pd.matmul
// CHECK-NEXT:    %[[R:.+]] = pd.relu
// CHECK-NEXT:    pd.send %[[R]] to 1 channel 0
// CHECK-NEXT:    return %[[X]] : tensor<4x8xf32>
// CHECK-LABEL: func.func @stage0_backward(
// CHECK-SAME:      %[[ARG:.+]]: tensor<4x8xf32>) attributes {pd.phase = #pd.phase<backward>, pd.recompute, pd.stage = 0 : i64}
// CHECK-NEXT:    %[[W1:.+]] = pd.param_ref @w1
// CHECK-NEXT:    %[[H:.+]] = pd.matmul %[[ARG]], %[[W1]] {transpose_rhs}
// CHECK-NEXT:    %[[R2:.+]] = pd.relu %[[H]]
// CHECK-NEXT:    %[[DR:.+]] = pd.recv from 1 channel 1
// CHECK-NEXT:    %[[DH:.+]] = pd.relu_grad %[[DR]], %[[R2]]
// CHECK-NEXT:    pd.matmul %[[DH]], %[[ARG]] {transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w1
// CHECK-NEXT:    return

// The last stage stashes the activation it received and the labels; the
// loss itself is not recomputed (its gradient reads the logits).
// CHECK-LABEL: func.func @stage1_forward() -> (tensor<4x16xf32>, tensor<4xi64>)
// CHECK-NEXT:    %[[R:.+]] = pd.recv from 0 channel 0
// CHECK-NEXT:    pd.param_ref @w2
// CHECK-NEXT:    pd.matmul
// CHECK-NEXT:    %[[Y:.+]] = pd.input 1 "y"
// CHECK-NEXT:    pd.softmax_cross_entropy
// CHECK-NEXT:    pd.report_loss
// CHECK-NEXT:    return %[[R]], %[[Y]]
// CHECK-LABEL: func.func @stage1_backward(
// CHECK-SAME:      %[[RA:[^:]+]]: tensor<4x16xf32>, %[[YA:[^:]+]]: tensor<4xi64>) attributes {{.*}}pd.recompute
// CHECK-NEXT:    %[[W2:.+]] = pd.param_ref @w2
// CHECK-NEXT:    %[[Z:.+]] = pd.matmul %[[RA]], %[[W2]] {transpose_rhs}
// CHECK-NEXT:    %[[SEED:.+]] = pd.grad_seed
// CHECK-NEXT:    %[[DZ:.+]] = pd.softmax_cross_entropy_grad %[[SEED]], %[[Z]], %[[YA]]
// CHECK-NEXT:    pd.param_ref @w2
// CHECK-NEXT:    pd.matmul %[[DZ]]
// CHECK-NEXT:    pd.send
// CHECK-NEXT:    pd.matmul %[[DZ]], %[[RA]] {transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w2
// CHECK-NEXT:    return

// A stage that is not listed keeps its stash.
// ONE-LABEL: func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x8xf32>)
// ONE:         return %{{.+}}, %{{.+}} : tensor<4x16xf32>, tensor<4x8xf32>
// ONE-LABEL: func.func @stage0_backward(%{{.+}}: tensor<4x16xf32>, %{{.+}}: tensor<4x8xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64}
// ONE-LABEL: func.func @stage1_backward(%{{[^:]+}}: tensor<4x16xf32>, %{{[^:]+}}: tensor<4xi64>) attributes {{.*}}pd.recompute

// -----

// Tests that a recomputed dropout keeps its rng_id (the runtime redraws the
// same mask) and a recomputed batch_norm drops its running statistics (the
// forward updated them once for this microbatch).

pd.state @rm {onnx_name = "bn.running_mean"} : tensor<4xf32>
pd.state @rv {onnx_name = "bn.running_var"} : tensor<4xf32>
pd.param @g {onnx_name = "bn.weight"} : tensor<4xf32>
pd.param @b {onnx_name = "bn.bias"} : tensor<4xf32>
func.func @stage0_forward() -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<2x4x3x3xf32>
  %g = pd.param_ref @g : tensor<4xf32>
  %b = pd.param_ref @b : tensor<4xf32>
  %n = pd.batch_norm %x, %g, %b {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, running_mean = @rm, running_var = @rv} : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x3x3xf32>
  %d = pd.dropout %n {ratio = 1.000000e-01 : f32, rng_id = 3 : i64} : tensor<2x4x3x3xf32>
  pd.send %d to 1 channel 0 : tensor<2x4x3x3xf32>
  return %n, %x : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}
func.func @stage0_backward(%n: tensor<2x4x3x3xf32>, %x: tensor<2x4x3x3xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dd = pd.recv from 1 channel 1 : tensor<2x4x3x3xf32>
  %dn = pd.dropout %dd {ratio = 1.000000e-01 : f32, rng_id = 3 : i64} : tensor<2x4x3x3xf32>
  %s = pd.add %dn, %n : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %g = pd.param_ref @g : tensor<4xf32>
  %dx, %dg, %db = pd.batch_norm_grad %s, %x, %g {epsilon = 1.0e-05 : f32} : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<4xf32> -> tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>
  pd.accumulate_grad @g, %dg : tensor<4xf32>
  pd.accumulate_grad @b, %db : tensor<4xf32>
  return
}
func.func @stage1_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 1 : i64} {
  return
}
func.func @stage1_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 1 : i64} {
  return
}

// CHECK-LABEL: func.func @stage0_forward() -> tensor<2x4x3x3xf32>
// CHECK:         pd.batch_norm {{.*}}running_mean = @rm, running_var = @rv
// CHECK:         return %{{.+}} : tensor<2x4x3x3xf32>
// CHECK-LABEL: func.func @stage0_backward(
// CHECK-SAME:      %[[X:.+]]: tensor<2x4x3x3xf32>)
// CHECK-NEXT:    %[[G:.+]] = pd.param_ref @g
// CHECK-NEXT:    %[[B:.+]] = pd.param_ref @b
// CHECK-NEXT:    %[[N:.+]] = pd.batch_norm %[[X]], %[[G]], %[[B]] {epsilon = 9.99999974E-6 : f32} :
// CHECK-NEXT:    %[[DD:.+]] = pd.recv from 1 channel 1
// CHECK-NEXT:    pd.dropout %[[DD]] {ratio = 1.000000e-01 : f32, rng_id = 3 : i64}
// CHECK-NEXT:    pd.add %{{.+}}, %[[N]]
// CHECK:         pd.batch_norm_grad %{{.+}}, %[[X]]
