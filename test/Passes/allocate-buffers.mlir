// RUN: pd-opt %s --pd-autodiff --pd-partition-stages=num-stages=2 --pd-outline-stages --pd-accumulate-in-place --pd-allocate-buffers="schedule=2bw optimizer=adam" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s
// RUN: pd-opt %s --pd-autodiff --pd-partition-stages=num-stages=2 --pd-outline-stages --pd-accumulate-in-place --pd-allocate-buffers="schedule=gpipe microbatches=4 optimizer=sgd" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s --check-prefix=GPIPE
// RUN: pd-opt %s --pd-autodiff --pd-partition-stages=num-stages=2 --pd-outline-stages --pd-accumulate-in-place --pd-allocate-buffers="schedule=flush optimizer=momentum" | FileCheck %s --check-prefix=IR

// Tests the 2BW memory plan of a two-stage MLP.

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

// Stage 0 forward: x (128 B) and relu's output (256 B) are stashed for the
// backward; matmul and add share the workspace by liveness; weights map
// onto the weight region without copies.
// CHECK: stage = 0, func = forward, value = pd.input, region = stash, offset = 256, size = 128
// CHECK: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 0, size = 512
// CHECK: stage = 0, func = forward, value = pd.matmul, region = workspace, offset = 0, size = 256
// CHECK: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 512, size = 64
// CHECK: stage = 0, func = forward, value = pd.add, region = workspace, offset = 256, size = 256
// CHECK: stage = 0, func = forward, value = pd.relu, region = stash, offset = 0, size = 256
// The backward reads its saved values from the same stash offsets.
// CHECK: stage = 0, func = backward, value = arg0, region = stash, offset = 0, size = 256
// CHECK: stage = 0, func = backward, value = arg1, region = stash, offset = 256, size = 128
// CHECK: stage = 0, func = backward, value = pd.recv, region = workspace
// The weight gradient is computed straight into its accumulator.
// CHECK: stage = 0, func = backward, value = pd.matmul, region = grads, offset = 0, size = 512
// Stage 1 sends dX from the comm region so the send overlaps the next forward.
// CHECK: stage = 1, func = backward, value = pd.matmul, region = comm, offset = 0, size = 256
// 2BW: two weight versions; Adam: two states per parameter; stage k of d
// keeps d - k microbatches in flight.
// CHECK: stage = 0, weights = 576 x 2, grads = 576, optimizer = 1152, stash = 384 x 2, workspace = 512, comm = 0, total = 4160
// CHECK: stage = 1, weights = 640 x 2, grads = 640, optimizer = 1280, stash = 512 x 1, workspace = 256, comm = 256, total = 4224

// GPipe stashes all m microbatches on every stage and keeps one version.
// GPIPE: stage = 0, weights = 576 x 1, grads = 576, optimizer = 0, stash = 384 x 4
// GPIPE: stage = 1, weights = 640 x 1, grads = 640, optimizer = 0, stash = 512 x 4

// Each parameter lists its owner stages; each stage's forward function has
// its parameter layout: [weight, gradient, optimizer-state] offsets.
// IR: pd.param @w1 {onnx_name = "fc1.weight", pd.owners = array<i64: 0>}
// IR: pd.param @b1 {onnx_name = "fc1.bias", pd.owners = array<i64: 0>}
// IR: pd.param @w2 {onnx_name = "fc2.weight", pd.owners = array<i64: 1>}
// IR: func.func @stage0_forward() {{.*}}pd.params = {b1 = array<i64: 512, 512, 512>, w1 = array<i64: 0, 0, 0>}
// IR-SAME: pd.regions = {comm = 0 : i64, grads = 576 : i64, optimizer = 576 : i64, stash_slot = 384 : i64, stash_slots = 2 : i64, state = 0 : i64, weight_versions = 1 : i64, weights = 576 : i64, workspace = 512 : i64}
// IR: pd.input 0 "x" {pd.buffer = #pd.buffer<stash, 256>}
// IR: func.func @stage0_backward(%arg0: tensor<4x16xf32> {pd.buffer = #pd.buffer<stash, 0>}, %arg1: tensor<4x8xf32> {pd.buffer = #pd.buffer<stash, 256>})
// IR: pd.matmul %{{.+}}, %arg1 {pd.accumulate, pd.buffer = #pd.buffer<grads, 0>, transpose_lhs}
// IR: pd.accumulate_grad @b1, %{{.+}} {pd.grad_offset = 512 : i64}
