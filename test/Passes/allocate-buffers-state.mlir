// RUN: pd-opt %s --pd-autodiff --pd-partition-stages=num-stages=2 --pd-outline-stages --pd-accumulate-in-place --pd-allocate-buffers="schedule=2bw optimizer=sgd" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s
// RUN: pd-opt %s --pd-autodiff --pd-partition-stages=num-stages=2 --pd-outline-stages --pd-accumulate-in-place --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s --check-prefix=IR

// Tests that the running statistics a batch_norm updates get one copy in the
// state region of the stage that runs it (not versioned, no gradient or
// optimizer state), listed in that forward function's pd.state.

pd.param @w1 {onnx_name = "fc1.weight"} : tensor<16x8xf32>
pd.param @g {onnx_name = "bn.weight"} : tensor<16xf32>
pd.param @b {onnx_name = "bn.bias"} : tensor<16xf32>
pd.state @rm {onnx_name = "bn.running_mean"} : tensor<16xf32>
pd.state @rv {onnx_name = "bn.running_var"} : tensor<16xf32>
pd.param @w2 {onnx_name = "fc2.weight"} : tensor<10x16xf32>
func.func @main(%x: tensor<4x8xf32> {pd.input_name = "x"}, %y: tensor<4xi64> {pd.input_name = "y"}) -> tensor<f32> {
  %w1 = pd.param_ref @w1 : tensor<16x8xf32>
  %h = pd.matmul %x, %w1 {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %g = pd.param_ref @g : tensor<16xf32>
  %b = pd.param_ref @b : tensor<16xf32>
  %n = pd.batch_norm %h, %g, %b {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, running_mean = @rm, running_var = @rv} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = pd.relu %n : tensor<4x16xf32>
  %w2 = pd.param_ref @w2 : tensor<10x16xf32>
  %z = pd.matmul %r, %w2 {transpose_rhs} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// The 64-byte tensors are aligned to 64; both live on stage 0 with the
// batch_norm; stage 1 has none.
// CHECK: stage = 0, state = bn.running_mean, offset = 0, region bytes = 128
// CHECK: stage = 0, state = bn.running_var, offset = 64, region bytes = 128
// CHECK-NOT: state = bn

// IR: func.func @stage0_forward()
// IR-SAME: pd.regions = {{{.*}}state = 128 : i64
// IR-SAME: pd.state = {rm = 0 : i64, rv = 64 : i64}
// IR: pd.batch_norm {{.+}}running_mean = @rm, running_var = @rv
// IR: func.func @stage0_backward(
// IR-NOT: running_mean
// IR: func.func @stage1_forward() {{.*}}state = 0 : i64, {{.*}}pd.stage = 1 : i64} {
