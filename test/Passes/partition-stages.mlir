// RUN: pd-opt %s --split-input-file --pd-partition-stages=num-stages=2 | FileCheck %s
// RUN: pd-opt %s --split-input-file --pd-partition-stages=num-stages=3 | FileCheck %s --check-prefix=THREE

// Tests that stages balance forward+backward FLOPs: the first matmul
// (fwd 262144 + weight grad 262144 FLOPs) outweighs the rest of the model,
// so with two stages it is alone on stage 0; gradient ops follow the op they
// differentiate, parameter reads and gradient accumulation their users.
// With three stages the bottleneck is still the first matmul; the last
// stage must not be empty and gets the loss.
pd.param @w1 {onnx_name = "w1"} : tensor<256x64xf32>
pd.param @w2 {onnx_name = "w2"} : tensor<16x256xf32>
pd.param @w3 {onnx_name = "w3"} : tensor<10x16xf32>
func.func @main(%arg0: tensor<8x64xf32>, %arg1: tensor<8xi64>) -> tensor<f32> {
  %0 = pd.param_ref @w1 {pd.op_id = 0 : i64} : tensor<256x64xf32>
  %1 = pd.matmul %arg0, %0 {pd.op_id = 1 : i64, transpose_rhs} : tensor<8x64xf32>, tensor<256x64xf32> -> tensor<8x256xf32>
  %2 = pd.relu %1 {pd.op_id = 2 : i64} : tensor<8x256xf32>
  %3 = pd.param_ref @w2 {pd.op_id = 3 : i64} : tensor<16x256xf32>
  %4 = pd.matmul %2, %3 {pd.op_id = 4 : i64, transpose_rhs} : tensor<8x256xf32>, tensor<16x256xf32> -> tensor<8x16xf32>
  %5 = pd.relu %4 {pd.op_id = 5 : i64} : tensor<8x16xf32>
  %6 = pd.param_ref @w3 {pd.op_id = 6 : i64} : tensor<10x16xf32>
  %7 = pd.matmul %5, %6 {pd.op_id = 7 : i64, transpose_rhs} : tensor<8x16xf32>, tensor<10x16xf32> -> tensor<8x10xf32>
  %8 = pd.softmax_cross_entropy %7, %arg1 {pd.op_id = 8 : i64} : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  %9 = pd.grad_seed {pd.grad_of = 8 : i64} : tensor<f32>
  %10 = pd.softmax_cross_entropy_grad %9, %7, %arg1 {pd.grad_of = 8 : i64} : tensor<f32>, tensor<8x10xf32>, tensor<8xi64> -> tensor<8x10xf32>
  %11 = pd.matmul %10, %6 {pd.grad_of = 7 : i64} : tensor<8x10xf32>, tensor<10x16xf32> -> tensor<8x16xf32>
  %12 = pd.matmul %10, %5 {pd.grad_of = 7 : i64, transpose_lhs} : tensor<8x10xf32>, tensor<8x16xf32> -> tensor<10x16xf32>
  pd.accumulate_grad @w3, %12 {pd.grad_of = 6 : i64} : tensor<10x16xf32>
  %13 = pd.relu_grad %11, %5 {pd.grad_of = 5 : i64} : tensor<8x16xf32>
  %14 = pd.matmul %13, %3 {pd.grad_of = 4 : i64} : tensor<8x16xf32>, tensor<16x256xf32> -> tensor<8x256xf32>
  %15 = pd.matmul %13, %2 {pd.grad_of = 4 : i64, transpose_lhs} : tensor<8x16xf32>, tensor<8x256xf32> -> tensor<16x256xf32>
  pd.accumulate_grad @w2, %15 {pd.grad_of = 3 : i64} : tensor<16x256xf32>
  %16 = pd.relu_grad %14, %2 {pd.grad_of = 2 : i64} : tensor<8x256xf32>
  %17 = pd.matmul %16, %arg0 {pd.grad_of = 1 : i64, transpose_lhs} : tensor<8x256xf32>, tensor<8x64xf32> -> tensor<256x64xf32>
  pd.accumulate_grad @w1, %17 {pd.grad_of = 0 : i64} : tensor<256x64xf32>
  return %8 : tensor<f32>
}

// CHECK-LABEL: func.func @main
// THREE-LABEL: func.func @main
// CHECK: pd.param_ref @w1 {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// CHECK-NEXT: pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
// CHECK-NEXT: pd.relu {{.*}}pd.stage = 1 : i64
// THREE: pd.relu {{.*}}pd.stage = 1 : i64
// CHECK-NEXT: pd.param_ref @w2 {pd.op_id = 3 : i64, pd.stage = 1 : i64}
// CHECK-NEXT: pd.matmul {{.*}}pd.op_id = 4 : i64, pd.stage = 1 : i64
// THREE: pd.matmul {{.*}}pd.op_id = 4 : i64, pd.stage = 1 : i64
// CHECK: pd.matmul {{.*}}pd.op_id = 7 : i64, pd.stage = 1 : i64
// THREE: pd.matmul {{.*}}pd.op_id = 7 : i64, pd.stage = 1 : i64
// THREE: pd.softmax_cross_entropy {{.*}}pd.stage = 2 : i64
// CHECK: pd.grad_seed {pd.grad_of = 8 : i64, pd.stage = 1 : i64}
// CHECK: pd.accumulate_grad @w2, %{{.+}} {pd.grad_of = 3 : i64, pd.stage = 1 : i64}
// CHECK: pd.matmul {{.*}}pd.grad_of = 1 : i64, pd.stage = 0 : i64
// CHECK: pd.accumulate_grad @w1, %{{.+}} {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
// CHECK: pd.num_stages = 2

// -----

// Tests that every stage gets at least one op when costs are very uneven.
pd.param @w {onnx_name = "w"} : tensor<512x512xf32>
func.func @main(%arg0: tensor<8x512xf32>, %arg1: tensor<8xi64>) -> tensor<f32> {
  %0 = pd.param_ref @w {pd.op_id = 0 : i64} : tensor<512x512xf32>
  %1 = pd.matmul %arg0, %0 {pd.op_id = 1 : i64} : tensor<8x512xf32>, tensor<512x512xf32> -> tensor<8x512xf32>
  %2 = pd.relu %1 {pd.op_id = 2 : i64} : tensor<8x512xf32>
  %3 = pd.softmax_cross_entropy %2, %arg1 {pd.op_id = 3 : i64} : tensor<8x512xf32>, tensor<8xi64> -> tensor<f32>
  %4 = pd.grad_seed {pd.grad_of = 3 : i64} : tensor<f32>
  %5 = pd.softmax_cross_entropy_grad %4, %2, %arg1 {pd.grad_of = 3 : i64} : tensor<f32>, tensor<8x512xf32>, tensor<8xi64> -> tensor<8x512xf32>
  %6 = pd.relu_grad %5, %2 {pd.grad_of = 2 : i64} : tensor<8x512xf32>
  %7 = pd.matmul %arg0, %6 {pd.grad_of = 1 : i64, transpose_lhs} : tensor<8x512xf32>, tensor<8x512xf32> -> tensor<512x512xf32>
  pd.accumulate_grad @w, %7 {pd.grad_of = 0 : i64} : tensor<512x512xf32>
  return %3 : tensor<f32>
}

// CHECK-LABEL: func.func @main
// CHECK: pd.matmul {{.*}}pd.stage = 0 : i64
// CHECK: pd.relu {{.*}}pd.stage = 1 : i64
// THREE: pd.softmax_cross_entropy {{.*}}pd.stage = 2 : i64

// -----

// Tests that a tied parameter is allowed: @w is read by the first matmul
// and again (through its own pd.param_ref) by the last one, which lands on
// the last stage; each read and its gradient accumulation follow their
// users, so both stages own a copy.
pd.param @w {onnx_name = "w"} : tensor<16x8xf32>
pd.param @v {onnx_name = "v"} : tensor<16x16xf32>
func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4xi64>) -> tensor<f32> {
  %0 = pd.param_ref @w {pd.op_id = 0 : i64} : tensor<16x8xf32>
  %1 = pd.matmul %arg0, %0 {pd.op_id = 1 : i64, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %2 = pd.relu %1 {pd.op_id = 2 : i64} : tensor<4x16xf32>
  %3 = pd.param_ref @v {pd.op_id = 3 : i64} : tensor<16x16xf32>
  %4 = pd.matmul %2, %3 {pd.op_id = 4 : i64} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %5 = pd.relu %4 {pd.op_id = 5 : i64} : tensor<4x16xf32>
  %6 = pd.param_ref @w {pd.op_id = 6 : i64} : tensor<16x8xf32>
  %7 = pd.matmul %5, %6 {pd.op_id = 7 : i64} : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %8 = pd.softmax_cross_entropy %7, %arg1 {pd.op_id = 8 : i64} : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  %9 = pd.grad_seed {pd.grad_of = 8 : i64} : tensor<f32>
  %10 = pd.softmax_cross_entropy_grad %9, %7, %arg1 {pd.grad_of = 8 : i64} : tensor<f32>, tensor<4x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %11 = pd.matmul %10, %6 {pd.grad_of = 7 : i64, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %12 = pd.matmul %5, %10 {pd.grad_of = 7 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %12 {pd.grad_of = 6 : i64} : tensor<16x8xf32>
  %13 = pd.relu_grad %11, %5 {pd.grad_of = 5 : i64} : tensor<4x16xf32>
  %14 = pd.matmul %13, %3 {pd.grad_of = 4 : i64, transpose_rhs} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %15 = pd.matmul %2, %13 {pd.grad_of = 4 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<16x16xf32>
  pd.accumulate_grad @v, %15 {pd.grad_of = 3 : i64} : tensor<16x16xf32>
  %16 = pd.relu_grad %14, %2 {pd.grad_of = 2 : i64} : tensor<4x16xf32>
  %17 = pd.matmul %16, %arg0 {pd.grad_of = 1 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %17 {pd.grad_of = 0 : i64} : tensor<16x8xf32>
  return %8 : tensor<f32>
}

// CHECK-LABEL: func.func @main
// CHECK: pd.param_ref @w {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// THREE: pd.param_ref @w {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// CHECK: pd.param_ref @w {pd.op_id = 6 : i64, pd.stage = 1 : i64}
// THREE: pd.param_ref @w {pd.op_id = 6 : i64, pd.stage = 2 : i64}
// CHECK: pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 6 : i64, pd.stage = 1 : i64}
// CHECK: pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
// THREE: pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 6 : i64, pd.stage = 2 : i64}
// THREE: pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
