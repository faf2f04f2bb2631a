// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that region offsets past +-256 MiB keep their value: the LLVM
// dialect stores a constant GEP index in 29 bits, so such offsets (the
// stash and weights of a GPT with n_embd 512 reach 300 MiB) must be i64
// values, not constant indices. 293617664 = 0x11800000 truncated to 29
// bits would be -243253248, 256 MiB below the region.

module attributes {pd.num_stages = 1 : i64} {
  pd.param @w {onnx_name = "w", pd.grad_offset = 0 : i64, pd.stage = 0 : i64} : tensor<4x4xf32>
  // CHECK-LABEL: llvm.func @pd_stage_forward
  // CHECK: %[[BIG:.+]] = llvm.mlir.constant(293617664 : i64) : i64
  // CHECK: llvm.getelementptr %{{.+}}[%[[BIG]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  // CHECK-NOT: -243253248
  // CHECK: llvm.getelementptr %{{.+}}[268435455] : (!llvm.ptr) -> !llvm.ptr, i8
  func.func @stage0_forward() -> tensor<4x4xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %0 = pd.param_ref @w {pd.buffer = #pd.buffer<weights, 0>} : tensor<4x4xf32>
    %1 = pd.relu %0 {pd.buffer = #pd.buffer<stash, 293617664>} : tensor<4x4xf32>
    %2 = pd.relu %1 {pd.buffer = #pd.buffer<workspace, 268435455>} : tensor<4x4xf32>
    return %1 : tensor<4x4xf32>
  }
  // The backward's stash argument at the same offset.
  // CHECK-LABEL: llvm.func @pd_stage_backward
  // CHECK: %[[ARG:.+]] = llvm.mlir.constant(293617664 : i64) : i64
  // CHECK: llvm.getelementptr %{{.+}}[%[[ARG]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  func.func @stage0_backward(%arg0: tensor<4x4xf32> {pd.buffer = #pd.buffer<stash, 293617664>}) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %0 = pd.relu_grad %arg0, %arg0 {pd.buffer = #pd.buffer<workspace, 0>} : tensor<4x4xf32>
    pd.accumulate_grad @w, %0 {pd.grad_offset = 0 : i64} : tensor<4x4xf32>
    return
  }
}
