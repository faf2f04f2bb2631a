// RUN: pd-opt %s --split-input-file --pd-autodiff --pd-partition-stages=num-stages=2 | FileCheck %s
// RUN: pd-opt %s --split-input-file --pd-autodiff --pd-partition-stages=num-stages=3 | FileCheck %s --check-prefix=THREE

// Tests that stages balance forward+backward FLOPs: the first matmul
// (fwd 262144 + weight grad 262144 FLOPs) outweighs the rest of the model,
// so with two stages it is alone on stage 0; gradient ops follow the op they
// differentiate, parameter reads and gradient accumulation their users.

pd.param @w1 {onnx_name = "w1"} : tensor<256x64xf32>
pd.param @w2 {onnx_name = "w2"} : tensor<16x256xf32>
pd.param @w3 {onnx_name = "w3"} : tensor<10x16xf32>
// CHECK-LABEL: func.func @main
// THREE-LABEL: func.func @main
func.func @main(%x: tensor<8x64xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  // CHECK: pd.param_ref @w1 {pd.op_id = 0 : i64, pd.stage = 0 : i64}
  %w1 = pd.param_ref @w1 : tensor<256x64xf32>
  // CHECK: pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
  %h = pd.matmul %x, %w1 {transpose_rhs} : tensor<8x64xf32>, tensor<256x64xf32> -> tensor<8x256xf32>
  // CHECK: pd.relu {{.*}}pd.stage = 1 : i64
  // THREE: pd.relu {{.*}}pd.stage = 1 : i64
  %r = pd.relu %h : tensor<8x256xf32>
  // CHECK: pd.param_ref @w2 {pd.op_id = 3 : i64, pd.stage = 1 : i64}
  %w2 = pd.param_ref @w2 : tensor<16x256xf32>
  // CHECK: pd.matmul {{.*}}pd.op_id = 4 : i64, pd.stage = 1 : i64
  // THREE: pd.matmul {{.*}}pd.op_id = 4 : i64, pd.stage = 1 : i64
  %z = pd.matmul %r, %w2 {transpose_rhs} : tensor<8x256xf32>, tensor<16x256xf32> -> tensor<8x16xf32>
  %r2 = pd.relu %z : tensor<8x16xf32>
  %w3 = pd.param_ref @w3 : tensor<10x16xf32>
  // CHECK: pd.matmul {{.*}}pd.op_id = 7 : i64, pd.stage = 1 : i64
  // THREE: pd.matmul {{.*}}pd.op_id = 7 : i64, pd.stage = 1 : i64
  %o = pd.matmul %r2, %w3 {transpose_rhs} : tensor<8x16xf32>, tensor<10x16xf32> -> tensor<8x10xf32>
  // With three stages the bottleneck is still the first matmul; the last
  // stage must not be empty and gets the loss.
  // THREE: pd.softmax_cross_entropy {{.*}}pd.stage = 2 : i64
  %l = pd.softmax_cross_entropy %o, %y : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  // CHECK: pd.grad_seed {pd.grad_of = 8 : i64, pd.stage = 1 : i64}
  // CHECK: pd.accumulate_grad @w2, %{{.+}} {pd.grad_of = 3 : i64, pd.stage = 1 : i64}
  // CHECK: pd.matmul {{.*}}pd.grad_of = 1 : i64, pd.stage = 0 : i64
  // CHECK: pd.accumulate_grad @w1, %{{.+}} {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
  return %l : tensor<f32>
}
// CHECK: pd.num_stages = 2

// -----

// Tests that every stage gets at least one op when costs are very uneven.
pd.param @w {onnx_name = "w"} : tensor<512x512xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<8x512xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %w = pd.param_ref @w : tensor<512x512xf32>
  // CHECK: pd.matmul {{.*}}pd.stage = 0 : i64
  %h = pd.matmul %x, %w : tensor<8x512xf32>, tensor<512x512xf32> -> tensor<8x512xf32>
  // CHECK: pd.relu {{.*}}pd.stage = 1 : i64
  %r = pd.relu %h : tensor<8x512xf32>
  // THREE: pd.softmax_cross_entropy {{.*}}pd.stage = 2 : i64
  %l = pd.softmax_cross_entropy %r, %y : tensor<8x512xf32>, tensor<8xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that a tied parameter is allowed: @w is read by the first matmul
// and again (through its own pd.param_ref) by the last one, which lands on
// the last stage; each read and its gradient accumulation follow their
// users, so both stages own a copy.
pd.param @w {onnx_name = "w"} : tensor<16x8xf32>
pd.param @v {onnx_name = "v"} : tensor<16x16xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  // CHECK: pd.param_ref @w {pd.op_id = 0 : i64, pd.stage = 0 : i64}
  // THREE: pd.param_ref @w {pd.op_id = 0 : i64, pd.stage = 0 : i64}
  %w = pd.param_ref @w : tensor<16x8xf32>
  %h = pd.matmul %x, %w {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %r = pd.relu %h : tensor<4x16xf32>
  %v = pd.param_ref @v : tensor<16x16xf32>
  %h2 = pd.matmul %r, %v : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %r2 = pd.relu %h2 : tensor<4x16xf32>
  // CHECK: pd.param_ref @w {pd.op_id = 6 : i64, pd.stage = 1 : i64}
  // THREE: pd.param_ref @w {pd.op_id = 6 : i64, pd.stage = 2 : i64}
  %w2 = pd.param_ref @w : tensor<16x8xf32>
  %z = pd.matmul %r2, %w2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  // CHECK: pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 6 : i64, pd.stage = 1 : i64}
  // CHECK: pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
  // THREE: pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 6 : i64, pd.stage = 2 : i64}
  // THREE: pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
  return %l : tensor<f32>
}
