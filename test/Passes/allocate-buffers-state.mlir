// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=sgd" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s
// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s --check-prefix=IR

// Tests that the running statistics a batch_norm updates get one copy in the
// state region of the stage that runs it (not versioned, no gradient or
// optimizer state), listed in that forward function's pd.state. The input
// is the stage functions that pd-outline-stages and pd-accumulate-in-place
// make of fc1 -> batch_norm -> relu -> fc2 -> softmax cross-entropy on a
// 4 x 8 batch, split after the relu.

module attributes {pd.num_stages = 2 : i64} {
pd.param @w1 {onnx_name = "fc1.weight"} : tensor<16x8xf32>
pd.param @g {onnx_name = "bn.weight"} : tensor<16xf32>
pd.param @b {onnx_name = "bn.bias"} : tensor<16xf32>
pd.state @rm {onnx_name = "bn.running_mean"} : tensor<16xf32>
pd.state @rv {onnx_name = "bn.running_var"} : tensor<16xf32>
pd.param @w2 {onnx_name = "fc2.weight"} : tensor<10x16xf32>
func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x8xf32>
  %w1 = pd.param_ref @w1 : tensor<16x8xf32>
  %h = pd.matmul %x, %w1 {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %g = pd.param_ref @g : tensor<16xf32>
  %b = pd.param_ref @b : tensor<16xf32>
  %n = pd.batch_norm %h, %g, %b {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, running_mean = @rm, running_var = @rv} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = pd.relu %n : tensor<4x16xf32>
  pd.send %r to 1 channel 0 : tensor<4x16xf32>
  return %r, %h, %x : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8xf32>
}
func.func @stage0_backward(%r: tensor<4x16xf32>, %h: tensor<4x16xf32>, %x: tensor<4x8xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dr = pd.recv from 1 channel 1 : tensor<4x16xf32>
  %dn = pd.relu_grad %dr, %r : tensor<4x16xf32>
  %g = pd.param_ref @g : tensor<16xf32>
  %dh, %dg, %db = pd.batch_norm_grad %dn, %h, %g {epsilon = 1.0e-05 : f32} : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  pd.accumulate_grad @b, %db : tensor<16xf32>
  pd.accumulate_grad @g, %dg : tensor<16xf32>
  %dw1 = pd.matmul %dh, %x {pd.accumulate, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
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
  %dw2 = pd.matmul %dz, %r {pd.accumulate, transpose_lhs} : tensor<4x10xf32>, tensor<4x16xf32> -> tensor<10x16xf32>
  pd.accumulate_grad @w2, %dw2 : tensor<10x16xf32>
  return
}
}

// The statistics are symbols, not values: the batch_norm reads and updates
// them in place, and only its result gets a buffer (the workspace).
// CHECK:      stage = 0, func = forward, value = pd.input, region = stash, offset = 512, size = 128
// CHECK-NEXT: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 0, size = 512
// CHECK-NEXT: stage = 0, func = forward, value = pd.matmul, region = stash, offset = 256, size = 256
// CHECK-NEXT: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 512, size = 64
// CHECK-NEXT: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 576, size = 64
// CHECK-NEXT: stage = 0, func = forward, value = pd.batch_norm, region = workspace, offset = 0, size = 256, live = [5, 6]
// CHECK-NEXT: stage = 0, func = forward, value = pd.relu, region = stash, offset = 0, size = 256
// CHECK-NEXT: stage = 0, func = backward, value = arg0, region = stash, offset = 0, size = 256
// CHECK-NEXT: stage = 0, func = backward, value = arg1, region = stash, offset = 256, size = 256
// CHECK-NEXT: stage = 0, func = backward, value = arg2, region = stash, offset = 512, size = 128
// CHECK-NEXT: stage = 0, func = backward, value = pd.recv, region = workspace, offset = 0, size = 256, live = [0, 1]
// CHECK-NEXT: stage = 0, func = backward, value = pd.relu_grad, region = workspace, offset = 256, size = 256, live = [1, 3]
// CHECK-NEXT: stage = 0, func = backward, value = pd.param_ref, region = weights, offset = 512, size = 64
// CHECK-NEXT: stage = 0, func = backward, value = pd.batch_norm_grad, region = workspace, offset = 0, size = 256, live = [3, 6]
// CHECK-NEXT: stage = 0, func = backward, value = pd.batch_norm_grad, region = workspace, offset = 512, size = 64, live = [3, 5]
// CHECK-NEXT: stage = 0, func = backward, value = pd.batch_norm_grad, region = workspace, offset = 576, size = 64, live = [3, 4]
// CHECK-NEXT: stage = 0, func = backward, value = pd.matmul, region = grads, offset = 0, size = 512
// CHECK-NEXT: stage = 1, func = forward, value = pd.recv, region = stash, offset = 256, size = 256
// CHECK-NEXT: stage = 1, func = forward, value = pd.param_ref, region = weights, offset = 0, size = 640
// CHECK-NEXT: stage = 1, func = forward, value = pd.matmul, region = stash, offset = 0, size = 160
// CHECK-NEXT: stage = 1, func = forward, value = pd.input, region = stash, offset = 192, size = 32
// CHECK-NEXT: stage = 1, func = forward, value = pd.softmax_cross_entropy, region = workspace, offset = 0, size = 4, live = [4, 5]
// CHECK-NEXT: stage = 1, func = backward, value = arg0, region = stash, offset = 0, size = 160
// CHECK-NEXT: stage = 1, func = backward, value = arg1, region = stash, offset = 192, size = 32
// CHECK-NEXT: stage = 1, func = backward, value = arg2, region = stash, offset = 256, size = 256
// CHECK-NEXT: stage = 1, func = backward, value = pd.grad_seed, region = workspace, offset = 0, size = 4, live = [0, 1]
// CHECK-NEXT: stage = 1, func = backward, value = pd.softmax_cross_entropy_grad, region = workspace, offset = 64, size = 160, live = [1, 5]
// CHECK-NEXT: stage = 1, func = backward, value = pd.param_ref, region = weights, offset = 0, size = 640
// CHECK-NEXT: stage = 1, func = backward, value = pd.matmul, region = comm, offset = 0, size = 256
// CHECK-NEXT: stage = 1, func = backward, value = pd.matmul, region = grads, offset = 0, size = 640
// The state region is not versioned and has no gradient or optimizer part:
// 2BW keeps two weight versions (640 x 2) but one copy of the statistics,
// whose 128 bytes count once in the total (1280 + 640 + 1280 + 640 + 128).
// CHECK-NEXT: stage = 0, weights = 640 x 2, grads = 640, optimizer = 0, stash = 640 x 2, workspace = 640, comm = 0, tie_grads = 0, total = 3968
// CHECK-NEXT: stage = 0, param = bn.bias, weight = 576, grad = 576, optimizer = 0, owners = 0
// CHECK-NEXT: stage = 0, param = bn.weight, weight = 512, grad = 512, optimizer = 0, owners = 0
// CHECK-NEXT: stage = 0, param = fc1.weight, weight = 0, grad = 0, optimizer = 0, owners = 0
// The 64-byte tensors are aligned to 64; both live on stage 0 with the
// batch_norm; stage 1 has none.
// CHECK-NEXT: stage = 0, state = bn.running_mean, offset = 0, region bytes = 128
// CHECK-NEXT: stage = 0, state = bn.running_var, offset = 64, region bytes = 128
// CHECK-NEXT: stage = 1, weights = 640 x 2, grads = 640, optimizer = 0, stash = 512 x 1, workspace = 256, comm = 256, tie_grads = 0, total = 2944
// CHECK-NEXT: stage = 1, param = fc2.weight, weight = 0, grad = 0, optimizer = 0, owners = 1
// CHECK-NOT:  state = bn

// IR-LABEL: func.func @stage0_forward()
// IR-SAME:  pd.regions = {{{.*}}state = 128 : i64
// IR-SAME:  pd.state = {rm = 0 : i64, rv = 64 : i64}
// IR:       pd.batch_norm {{.+}}running_mean = @rm, running_var = @rv
// The backward's batch_norm_grad does not touch the statistics.
// IR-LABEL: func.func @stage0_backward(
// IR-NOT:   running_mean
// IR-LABEL: func.func @stage1_forward() {{.*}}state = 0 : i64, {{.*}}pd.stage = 1 : i64} {
