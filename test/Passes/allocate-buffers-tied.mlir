// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=adam" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s
// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=adam" | FileCheck %s --check-prefix=IR

// Tests that a tied parameter (@w, read by the first matmul on stage 0 and
// the last on stage 1) gets a full copy on each owner stage: weights in both
// versions, a gradient accumulator and Adam's two states, at each stage's
// own offsets, and lists both owners.

module attributes {pd.num_stages = 2 : i64} {
pd.param @w {onnx_name = "w"} : tensor<16x8xf32>
pd.param @v {onnx_name = "v"} : tensor<16x16xf32>
func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x8xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x8xf32>
  %w = pd.param_ref @w : tensor<16x8xf32>
  %h = pd.matmul %x, %w {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %r = pd.relu %h : tensor<4x16xf32>
  %v = pd.param_ref @v : tensor<16x16xf32>
  %h2 = pd.matmul %r, %v : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  pd.send %h2 to 1 channel 0 : tensor<4x16xf32>
  return %r, %x : tensor<4x16xf32>, tensor<4x8xf32>
}
func.func @stage0_backward(%r: tensor<4x16xf32>, %x: tensor<4x8xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dh2 = pd.recv from 1 channel 1 : tensor<4x16xf32>
  %v = pd.param_ref @v : tensor<16x16xf32>
  %dr = pd.matmul %dh2, %v {transpose_rhs} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %dv = pd.matmul %r, %dh2 {pd.accumulate, transpose_lhs} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<16x16xf32>
  pd.accumulate_grad @v, %dv : tensor<16x16xf32>
  %dh = pd.relu_grad %dr, %r : tensor<4x16xf32>
  %dw = pd.matmul %dh, %x {pd.accumulate, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %dw : tensor<16x8xf32>
  return
}
func.func @stage1_forward() -> (tensor<4x8xf32>, tensor<4xi64>, tensor<4x16xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 1 : i64} {
  %h2 = pd.recv from 0 channel 0 : tensor<4x16xf32>
  %r2 = pd.relu %h2 : tensor<4x16xf32>
  %w = pd.param_ref @w : tensor<16x8xf32>
  %z = pd.matmul %r2, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %y = pd.input 1 "y" : tensor<4xi64>
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  pd.report_loss %l : tensor<f32>
  return %z, %y, %r2 : tensor<4x8xf32>, tensor<4xi64>, tensor<4x16xf32>
}
func.func @stage1_backward(%z: tensor<4x8xf32>, %y: tensor<4xi64>, %r2: tensor<4x16xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 1 : i64} {
  %seed = pd.grad_seed : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %seed, %z, %y : tensor<f32>, tensor<4x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %w = pd.param_ref @w : tensor<16x8xf32>
  %dr2 = pd.matmul %dz, %w {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %dw = pd.matmul %r2, %dz {pd.accumulate, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %dw : tensor<16x8xf32>
  %dh2 = pd.relu_grad %dr2, %r2 : tensor<4x16xf32>
  pd.send %dh2 to 0 channel 1 : tensor<4x16xf32>
  return
}
}

// Each owner reads its own copy and accumulates into its own gradient (in
// place, by the weight-gradient matmul): @w at offset 0 of stage 0's weights
// and grads (before @v at 512) and at offset 0 of stage 1's.
// CHECK:      stage = 0, func = forward, value = pd.input, region = stash, offset = 256, size = 128
// CHECK-NEXT: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 0, size = 512
// CHECK-NEXT: stage = 0, func = forward, value = pd.matmul, region = workspace, offset = 0, size = 256, live = [2, 3]
// CHECK-NEXT: stage = 0, func = forward, value = pd.relu, region = stash, offset = 0, size = 256
// CHECK-NEXT: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 512, size = 1024
// CHECK-NEXT: stage = 0, func = forward, value = pd.matmul, region = comm, offset = 0, size = 256
// CHECK-NEXT: stage = 0, func = backward, value = arg0, region = stash, offset = 0, size = 256
// CHECK-NEXT: stage = 0, func = backward, value = arg1, region = stash, offset = 256, size = 128
// CHECK-NEXT: stage = 0, func = backward, value = pd.recv, region = workspace, offset = 0, size = 256, live = [0, 3]
// CHECK-NEXT: stage = 0, func = backward, value = pd.param_ref, region = weights, offset = 512, size = 1024
// CHECK-NEXT: stage = 0, func = backward, value = pd.matmul, region = workspace, offset = 256, size = 256, live = [2, 5]
// CHECK-NEXT: stage = 0, func = backward, value = pd.matmul, region = grads, offset = 512, size = 1024
// CHECK-NEXT: stage = 0, func = backward, value = pd.relu_grad, region = workspace, offset = 0, size = 256, live = [5, 6]
// CHECK-NEXT: stage = 0, func = backward, value = pd.matmul, region = grads, offset = 0, size = 512
// CHECK-NEXT: stage = 1, func = forward, value = pd.recv, region = workspace, offset = 0, size = 256, live = [0, 1]
// CHECK-NEXT: stage = 1, func = forward, value = pd.relu, region = stash, offset = 192, size = 256
// CHECK-NEXT: stage = 1, func = forward, value = pd.param_ref, region = weights, offset = 0, size = 512
// CHECK-NEXT: stage = 1, func = forward, value = pd.matmul, region = stash, offset = 0, size = 128
// CHECK-NEXT: stage = 1, func = forward, value = pd.input, region = stash, offset = 128, size = 32
// CHECK-NEXT: stage = 1, func = forward, value = pd.softmax_cross_entropy, region = workspace, offset = 0, size = 4, live = [5, 6]
// CHECK-NEXT: stage = 1, func = backward, value = arg0, region = stash, offset = 0, size = 128
// CHECK-NEXT: stage = 1, func = backward, value = arg1, region = stash, offset = 128, size = 32
// CHECK-NEXT: stage = 1, func = backward, value = arg2, region = stash, offset = 192, size = 256
// CHECK-NEXT: stage = 1, func = backward, value = pd.grad_seed, region = workspace, offset = 0, size = 4, live = [0, 1]
// CHECK-NEXT: stage = 1, func = backward, value = pd.softmax_cross_entropy_grad, region = workspace, offset = 64, size = 128, live = [1, 4]
// CHECK-NEXT: stage = 1, func = backward, value = pd.param_ref, region = weights, offset = 0, size = 512
// CHECK-NEXT: stage = 1, func = backward, value = pd.matmul, region = workspace, offset = 192, size = 256, live = [3, 6]
// CHECK-NEXT: stage = 1, func = backward, value = pd.matmul, region = grads, offset = 0, size = 512
// CHECK-NEXT: stage = 1, func = backward, value = pd.relu_grad, region = comm, offset = 0, size = 256
// The copy counts in both stages' weights (x 2 versions), grads and Adam
// state (2 x 512 bytes), and under 2bw in the staging copy of its gradient
// that the owners sum while the next batch runs (tie_grads).
// CHECK-NEXT: stage = 0, weights = 1536 x 2, grads = 1536, optimizer = 3072, stash = 384 x 2, workspace = 512, comm = 256, tie_grads = 512, total = 9728
// CHECK-NEXT: stage = 0, param = v, weight = 512, grad = 512, optimizer = 1024, owners = 0
// CHECK-NEXT: stage = 0, param = w, weight = 0, grad = 0, optimizer = 0, owners = 0 1
// CHECK-NEXT: stage = 1, weights = 512 x 2, grads = 512, optimizer = 1024, stash = 448 x 1, workspace = 448, comm = 256, tie_grads = 512, total = 4224
// CHECK-NEXT: stage = 1, param = w, weight = 0, grad = 0, optimizer = 0, owners = 0 1

// IR:      pd.param @w {onnx_name = "w", pd.owners = array<i64: 0, 1>}
// IR-NEXT: pd.param @v {onnx_name = "v", pd.owners = array<i64: 0>}
// IR-NEXT: func.func @stage0_forward() {{.*}}pd.params = {v = array<i64: 512, 512, 1024>, w = array<i64: 0, 0, 0>}
// IR-LABEL: func.func @stage0_backward
// IR:      pd.accumulate_grad @v, %{{.+}} {pd.grad_offset = 512 : i64}
// IR:      pd.accumulate_grad @w, %{{.+}} {pd.grad_offset = 0 : i64}
// IR-NEXT: return
// IR-LABEL: func.func @stage1_forward() {{.*}}pd.params = {w = array<i64: 0, 0, 0>}
// IR-LABEL: func.func @stage1_backward
// IR:      pd.accumulate_grad @w, %{{.+}} {pd.grad_offset = 0 : i64}
// IR-NEXT: pd.relu_grad {{.+}}pd.buffer = #pd.buffer<comm, 0>
// IR-NEXT: pd.send
// IR-NEXT: return
