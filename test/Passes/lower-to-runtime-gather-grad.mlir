// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that a gather_grad homed in its table's gradient accumulator
// (pd.accumulate) adds its rows there: pdrt_gather_grad's zero_first is
// PDRT_SCATTER_INTO (0) and its accumulate_grad emits no call; an
// unmarked gather_grad in the workspace is zeroed first
// (PDRT_SCATTER_ZERO_FIRST, 1) and added by pdrt_accumulate.

module attributes {pd.num_stages = 1 : i64, pd.optimizer = #pd.optimizer<adam>, pd.schedule = #pd.schedule<"2bw">} {
  pd.param @wte {onnx_name = "wte", pd.owners = array<i64: 0>} : tensor<7x4xf32>
  pd.param @wpe {onnx_name = "wpe", pd.owners = array<i64: 0>} : tensor<7x4xf32>
  func.func @stage0_forward() -> (tensor<2x3xi64>, tensor<2x3x4xf32>) attributes {pd.params = {wpe = array<i64: 128, 128, 256>, wte = array<i64: 0, 0, 0>}, pd.phase = #pd.phase<forward>, pd.regions = {comm = 0 : i64, grads = 256 : i64, optimizer = 512 : i64, stash_slot = 192 : i64, stash_slots = 1 : i64, state = 0 : i64, tie_grads = 0 : i64, weight_versions = 2 : i64, weights = 256 : i64, workspace = 256 : i64}, pd.stage = 0 : i64} {
    %0 = pd.input 0 "ids" {pd.buffer = #pd.buffer<stash, 0>} : tensor<2x3xi64>
    %1 = pd.param_ref @wte {pd.buffer = #pd.buffer<weights, 0>} : tensor<7x4xf32>
    %2 = pd.gather %1, %0 {pd.buffer = #pd.buffer<workspace, 0>} : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
    %3 = pd.param_ref @wpe {pd.buffer = #pd.buffer<weights, 128>} : tensor<7x4xf32>
    %4 = pd.gather %3, %0 {pd.buffer = #pd.buffer<workspace, 128>} : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
    %5 = pd.add %2, %4 {pd.buffer = #pd.buffer<stash, 64>} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
    %6 = pd.reduce_sum %5 {axes = array<i64: 0, 1, 2>, pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x3x4xf32> -> tensor<f32>
    pd.report_loss %6 : tensor<f32>
    return %0, %5 : tensor<2x3xi64>, tensor<2x3x4xf32>
  }
  func.func @stage0_backward(%arg0: tensor<2x3xi64> {pd.buffer = #pd.buffer<stash, 0>}, %arg1: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 64>}) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %0 = pd.gather_grad %arg1, %arg0 {pd.accumulate, pd.buffer = #pd.buffer<grads, 0>} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
    pd.accumulate_grad @wte, %0 {pd.grad_offset = 0 : i64} : tensor<7x4xf32>
    %1 = pd.gather_grad %arg1, %arg0 {pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
    pd.accumulate_grad @wpe, %1 {pd.grad_offset = 128 : i64} : tensor<7x4xf32>
    %2 = pd.add %1, %1 {pd.buffer = #pd.buffer<workspace, 128>} : tensor<7x4xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
    return
  }
}

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
