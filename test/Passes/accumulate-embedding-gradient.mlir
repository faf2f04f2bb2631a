// RUN: pd-opt %s --pd-accumulate-in-place --pd-allocate-buffers="schedule=2bw optimizer=adam" | FileCheck %s --check-prefix=IR
// RUN: pd-opt %s --pd-accumulate-in-place --pd-allocate-buffers="schedule=2bw optimizer=adam" --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that an embedding's gradient (pd.gather_grad) whose only use is its
// table's accumulate_grad is homed in the table's gradient accumulator and
// adds its rows there (pdrt_gather_grad's zero_first = PDRT_SCATTER_INTO,
// 0), with no pdrt_accumulate after it; a gather_grad with another use is
// computed into the workspace, zeroed first (PDRT_SCATTER_ZERO_FIRST, 1),
// and accumulated by a call.

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
  %dt = pd.gather_grad %ds, %ids : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  pd.accumulate_grad @wte, %dt : tensor<7x4xf32>
  %dp = pd.gather_grad %ds, %ids : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  pd.accumulate_grad @wpe, %dp : tensor<7x4xf32>
  %twice = pd.add %dp, %dp : tensor<7x4xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
  return
}
}

// IR-LABEL: func.func @stage0_backward
// IR:      pd.gather_grad %{{.+}}, %{{.+}} {pd.accumulate, pd.buffer = #pd.buffer<grads, 0>}
// IR-NEXT: pd.accumulate_grad @wte, %{{.+}} {pd.grad_offset = 0 : i64}
// IR-NEXT: pd.gather_grad %{{.+}}, %{{.+}} {pd.buffer = #pd.buffer<workspace,
// IR-NEXT: pd.accumulate_grad @wpe, %{{.+}} {pd.grad_offset = 128 : i64}

// The stage functions' arguments: ctx, weights, grads, stash, workspace, comm.
// CHECK-LABEL: llvm.func @pd_stage_backward
// CHECK:      %[[GT:.+]] = llvm.getelementptr %arg2[0]
// CHECK:      %[[INTO:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.call @pdrt_gather_grad(%{{.+}}, %{{.+}}, %{{.+}}, %[[GT]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[INTO]])
// CHECK:      %[[WS:.+]] = llvm.getelementptr %arg4[0]
// CHECK:      %[[ZERO:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.call @pdrt_gather_grad(%{{.+}}, %{{.+}}, %{{.+}}, %[[WS]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ZERO]])
// CHECK:      %[[GP:.+]] = llvm.getelementptr %arg2[128]
// CHECK:      llvm.call @pdrt_accumulate(%{{.+}}, %[[WS]], %[[GP]], %{{.+}})
// CHECK-NOT:  llvm.call @pdrt_accumulate
// CHECK:      llvm.return
