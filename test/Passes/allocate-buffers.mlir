// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=adam" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s
// RUN: pd-opt %s --pd-allocate-buffers="schedule=gpipe microbatches=4 optimizer=sgd" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s --check-prefix=GPIPE
// RUN: pd-opt %s --pd-allocate-buffers="schedule=flush optimizer=momentum" | FileCheck %s --check-prefix=IR

// Tests the 2BW memory plan of a two-stage MLP (the stage functions that
// pd-outline-stages and pd-accumulate-in-place make of fc1 -> relu -> fc2
// -> softmax cross-entropy on a 4 x 8 batch).

module attributes {pd.num_stages = 2 : i64} {
pd.param @w1 {onnx_name = "fc1.weight"} : tensor<16x8xf32>
pd.param @b1 {onnx_name = "fc1.bias"} : tensor<16xf32>
pd.param @w2 {onnx_name = "fc2.weight"} : tensor<10x16xf32>
func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x8xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x8xf32>
  %w1 = pd.param_ref @w1 : tensor<16x8xf32>
  %h = pd.matmul %x, %w1 {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %b1 = pd.param_ref @b1 : tensor<16xf32>
  %hb = pd.add %h, %b1 : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = pd.relu %hb : tensor<4x16xf32>
  pd.send %r to 1 channel 0 : tensor<4x16xf32>
  return %r, %x : tensor<4x16xf32>, tensor<4x8xf32>
}
func.func @stage0_backward(%r: tensor<4x16xf32>, %x: tensor<4x8xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dr = pd.recv from 1 channel 1 : tensor<4x16xf32>
  %dh = pd.relu_grad %dr, %r : tensor<4x16xf32>
  %db1 = pd.sum_to %dh : tensor<4x16xf32> -> tensor<16xf32>
  %dw1 = pd.matmul %dh, %x {pd.accumulate, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @b1, %db1 : tensor<16xf32>
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

// Stage 0 forward: x (128 B) and relu's output (256 B) are stashed for the
// backward; matmul and add share the workspace by liveness (live ranges in
// op indices); weights map onto the weight region without copies.
// CHECK:      stage = 0, func = forward, value = pd.input, region = stash, offset = 256, size = 128
// CHECK-NEXT: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 0, size = 512
// CHECK-NEXT: stage = 0, func = forward, value = pd.matmul, region = workspace, offset = 0, size = 256, live = [2, 4]
// CHECK-NEXT: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 512, size = 64
// CHECK-NEXT: stage = 0, func = forward, value = pd.add, region = workspace, offset = 256, size = 256, live = [4, 5]
// CHECK-NEXT: stage = 0, func = forward, value = pd.relu, region = stash, offset = 0, size = 256
// The backward reads its saved values from the same stash offsets; values
// whose ranges do not overlap reuse offset 0.
// CHECK-NEXT: stage = 0, func = backward, value = arg0, region = stash, offset = 0, size = 256
// CHECK-NEXT: stage = 0, func = backward, value = arg1, region = stash, offset = 256, size = 128
// CHECK-NEXT: stage = 0, func = backward, value = pd.recv, region = workspace, offset = 0, size = 256, live = [0, 1]
// CHECK-NEXT: stage = 0, func = backward, value = pd.relu_grad, region = workspace, offset = 256, size = 256, live = [1, 3]
// CHECK-NEXT: stage = 0, func = backward, value = pd.sum_to, region = workspace, offset = 0, size = 64, live = [2, 4]
// The weight gradient marked pd.accumulate is computed straight into its
// accumulator.
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
// Stage 1 sends dX from the comm region so the send overlaps the next forward.
// CHECK-NEXT: stage = 1, func = backward, value = pd.matmul, region = comm, offset = 0, size = 256
// CHECK-NEXT: stage = 1, func = backward, value = pd.matmul, region = grads, offset = 0, size = 640
// 2BW: two weight versions; Adam: two states per parameter; stage k of d
// keeps d - k microbatches in flight.
// CHECK-NEXT: stage = 0, weights = 576 x 2, grads = 576, optimizer = 1152, stash = 384 x 2, workspace = 512, comm = 0, tie_grads = 0, total = 4160
// CHECK-NEXT: stage = 0, param = fc1.bias, weight = 512, grad = 512, optimizer = 1024, owners = 0
// CHECK-NEXT: stage = 0, param = fc1.weight, weight = 0, grad = 0, optimizer = 0, owners = 0
// CHECK-NEXT: stage = 1, weights = 640 x 2, grads = 640, optimizer = 1280, stash = 512 x 1, workspace = 256, comm = 256, tie_grads = 0, total = 4224
// CHECK-NEXT: stage = 1, param = fc2.weight, weight = 0, grad = 0, optimizer = 0, owners = 1

// GPipe stashes all m microbatches on every stage and keeps one version.
// GPIPE:      stage = 0, weights = 576 x 1, grads = 576, optimizer = 0, stash = 384 x 4, workspace = 512, comm = 0, tie_grads = 0, total = 3200
// GPIPE-NEXT: stage = 0, param = fc1.bias, weight = 512, grad = 512, optimizer = 0, owners = 0
// GPIPE-NEXT: stage = 0, param = fc1.weight, weight = 0, grad = 0, optimizer = 0, owners = 0
// GPIPE-NEXT: stage = 1, weights = 640 x 1, grads = 640, optimizer = 0, stash = 512 x 4, workspace = 256, comm = 256, tie_grads = 0, total = 3840
// GPIPE-NEXT: stage = 1, param = fc2.weight, weight = 0, grad = 0, optimizer = 0, owners = 1

// Each parameter lists its owner stages; each stage's forward function has
// its parameter layout: [weight, gradient, optimizer-state] offsets.
// IR:      module attributes {pd.num_stages = 2 : i64, pd.optimizer = #pd.optimizer<momentum>, pd.schedule = #pd.schedule<"flush">}
// IR-NEXT: pd.param @w1 {onnx_name = "fc1.weight", pd.owners = array<i64: 0>}
// IR-NEXT: pd.param @b1 {onnx_name = "fc1.bias", pd.owners = array<i64: 0>}
// IR-NEXT: pd.param @w2 {onnx_name = "fc2.weight", pd.owners = array<i64: 1>}
// IR-NEXT: func.func @stage0_forward() {{.*}}pd.params = {b1 = array<i64: 512, 512, 512>, w1 = array<i64: 0, 0, 0>}
// IR-SAME: pd.regions = {comm = 0 : i64, grads = 576 : i64, optimizer = 576 : i64, stash_slot = 384 : i64, stash_slots = 2 : i64, state = 0 : i64, tie_grads = 0 : i64, weight_versions = 1 : i64, weights = 576 : i64, workspace = 512 : i64}
// IR-NEXT: pd.input 0 "x" {pd.buffer = #pd.buffer<stash, 256>}
// IR-LABEL: func.func @stage0_backward(%arg0: tensor<4x16xf32> {pd.buffer = #pd.buffer<stash, 0>}, %arg1: tensor<4x8xf32> {pd.buffer = #pd.buffer<stash, 256>})
// IR:      pd.matmul %{{.+}}, %arg1 {pd.accumulate, pd.buffer = #pd.buffer<grads, 0>, transpose_lhs}
// IR-NEXT: pd.accumulate_grad @b1, %{{.+}} {pd.grad_offset = 512 : i64}
// IR-NEXT: pd.accumulate_grad @w1, %{{.+}} {pd.grad_offset = 0 : i64}
// IR-NEXT: return
