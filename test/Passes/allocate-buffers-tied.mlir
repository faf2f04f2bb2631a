// RUN: pd-opt %s --pd-autodiff --pd-partition-stages=num-stages=2 --pd-outline-stages --pd-accumulate-in-place --pd-allocate-buffers="schedule=2bw optimizer=adam" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s
// RUN: pd-opt %s --pd-autodiff --pd-partition-stages=num-stages=2 --pd-outline-stages --pd-accumulate-in-place --pd-allocate-buffers="schedule=2bw optimizer=adam" | FileCheck %s --check-prefix=IR

// Tests that a tied parameter (@w, read by the first and the last matmul,
// which are on stages 0 and 1) gets a full copy on each owner stage:
// weights in both versions, a gradient accumulator and Adam's two states,
// at each stage's own offsets, and lists both owners.
pd.param @w {onnx_name = "w"} : tensor<16x8xf32>
pd.param @v {onnx_name = "v"} : tensor<16x16xf32>
func.func @main(%x: tensor<4x8xf32> {pd.input_name = "x"}, %y: tensor<4xi64> {pd.input_name = "y"}) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<16x8xf32>
  %h = pd.matmul %x, %w {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %r = pd.relu %h : tensor<4x16xf32>
  %v = pd.param_ref @v : tensor<16x16xf32>
  %h2 = pd.matmul %r, %v : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %r2 = pd.relu %h2 : tensor<4x16xf32>
  %w2 = pd.param_ref @w : tensor<16x8xf32>
  %z = pd.matmul %r2, %w2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// Each owner reads its own copy and accumulates into its own gradient (in
// place, by the weight-gradient matmul).
// CHECK: stage = 0, func = forward, value = pd.param_ref, region = weights, offset = 0, size = 512
// CHECK: stage = 0, func = backward, value = pd.matmul, region = grads, offset = 0, size = 512
// CHECK: stage = 1, func = forward, value = pd.param_ref, region = weights, offset = 0, size = 512
// CHECK: stage = 1, func = backward, value = pd.matmul, region = grads, offset = 0, size = 512
// The copy counts in both stages' weights (x 2 versions), grads and Adam
// state (2 x 512 bytes).
// CHECK: stage = 0, weights = 1536 x 2, grads = 1536, optimizer = 3072,
// CHECK: stage = 0, param = v, weight = 512, grad = 512, optimizer = 1024, owners = 0
// CHECK: stage = 0, param = w, weight = 0, grad = 0, optimizer = 0, owners = 0 1
// CHECK: stage = 1, weights = 512 x 2, grads = 512, optimizer = 1024,
// CHECK: stage = 1, param = w, weight = 0, grad = 0, optimizer = 0, owners = 0 1

// IR: pd.param @w {onnx_name = "w", pd.owners = array<i64: 0, 1>}
// IR: pd.param @v {onnx_name = "v", pd.owners = array<i64: 0>}
// IR: func.func @stage0_forward() {{.*}}pd.params = {v = array<i64: 512, 512, 1024>, w = array<i64: 0, 0, 0>}
// IR: func.func @stage0_backward
// IR: pd.accumulate_grad @w, %{{.+}} {pd.grad_offset = 0 : i64}
// IR: func.func @stage1_forward() {{.*}}pd.params = {w = array<i64: 0, 0, 0>}
// IR: func.func @stage1_backward
// IR: pd.accumulate_grad @w, %{{.+}} {pd.grad_offset = 0 : i64}
