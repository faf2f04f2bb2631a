// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=sgd" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s
// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s --check-prefix=IR

// Tests that the running statistics a batch_norm updates get one copy in the
// state region of the stage that runs it (not versioned, no gradient or
// optimizer state), listed in that forward function's pd.state.

module attributes {pd.num_stages = 2 : i64} {
pd.param @w1 {onnx_name = "fc1.weight"} : tensor<16x8xf32>
pd.param @g {onnx_name = "bn.weight"} : tensor<16xf32>
pd.param @b {onnx_name = "bn.bias"} : tensor<16xf32>
pd.state @rm {onnx_name = "bn.running_mean"} : tensor<16xf32>
pd.state @rv {onnx_name = "bn.running_var"} : tensor<16xf32>
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
func.func @stage1_forward() -> tensor<4x16xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 1 : i64} {
  %r = pd.recv from 0 channel 0 : tensor<4x16xf32>
  %s = pd.reduce_sum %r {axes = array<i64: 0, 1>} : tensor<4x16xf32> -> tensor<f32>
  pd.report_loss %s : tensor<f32>
  return %r : tensor<4x16xf32>
}
func.func @stage1_backward(%r: tensor<4x16xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 1 : i64} {
  %seed = pd.grad_seed : tensor<f32>
  %dr = pd.broadcast_to %seed : tensor<f32> -> tensor<4x16xf32>
  pd.send %dr to 0 channel 1 : tensor<4x16xf32>
  return
}
}

// The 64-byte tensors are aligned to 64; both live on stage 0 with the
// batch_norm; stage 1 has none.
// CHECK:      stage = 0, state = bn.running_mean, offset = 0, region bytes = 128
// CHECK-NEXT: stage = 0, state = bn.running_var, offset = 64, region bytes = 128
// CHECK-NOT:  state = bn

// IR-LABEL: func.func @stage0_forward()
// IR-SAME:  pd.regions = {{{.*}}state = 128 : i64
// IR-SAME:  pd.state = {rm = 0 : i64, rv = 64 : i64}
// IR:       pd.batch_norm {{.+}}running_mean = @rm, running_var = @rv
// IR-LABEL: func.func @stage1_forward() {{.*}}state = 0 : i64, {{.*}}pd.stage = 1 : i64} {
