// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=adam" | FileCheck %s

// Tests that an embedding's gradient marked pd.accumulate
// (pd-accumulate-in-place) is homed in its table's gradient accumulator;
// an unmarked gather_grad (another op reads it) is computed into the
// workspace.

module attributes {pd.num_stages = 1 : i64} {
pd.param @wte {onnx_name = "wte"} : tensor<7x4xf32>
pd.param @wpe {onnx_name = "wpe"} : tensor<7x4xf32>
func.func @stage0_forward() -> (tensor<2x3xi64>, tensor<2x3x4xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %ids = pd.input 0 "ids" : tensor<2x3xi64>
  %wte = pd.param_ref @wte : tensor<7x4xf32>
  %e = pd.gather %wte, %ids : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %wpe = pd.param_ref @wpe : tensor<7x4xf32>
  %p = pd.gather %wpe, %ids : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %s = pd.add %e, %p : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %l = pd.reduce_sum %s {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
  pd.report_loss %l : tensor<f32>
  return %ids, %s : tensor<2x3xi64>, tensor<2x3x4xf32>
}
func.func @stage0_backward(%ids: tensor<2x3xi64>, %ds: tensor<2x3x4xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dt = pd.gather_grad %ds, %ids {pd.accumulate} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  pd.accumulate_grad @wte, %dt : tensor<7x4xf32>
  %dp = pd.gather_grad %ds, %ids : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  pd.accumulate_grad @wpe, %dp : tensor<7x4xf32>
  %twice = pd.add %dp, %dp : tensor<7x4xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
  return
}
}


// CHECK-LABEL: func.func @stage0_backward
// CHECK:      pd.gather_grad %{{.+}}, %{{.+}} {pd.accumulate, pd.buffer = #pd.buffer<grads, 0>}
// CHECK-NEXT: pd.accumulate_grad @wte, %{{.+}} {pd.grad_offset = 0 : i64}
// CHECK-NEXT: pd.gather_grad %{{.+}}, %{{.+}} {pd.buffer = #pd.buffer<workspace,
// CHECK-NEXT: pd.accumulate_grad @wpe, %{{.+}} {pd.grad_offset = 128 : i64}
