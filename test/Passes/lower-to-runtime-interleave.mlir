// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.interleave_begin and pd.interleave_end lower to
// pdrt_interleave_begin and pdrt_interleave_end (the context alone) around
// the group's kernel calls, which lower as they do alone.

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    return
  }
  func.func @stage0_backward(%dp: tensor<2x64x64xf32> {pd.buffer = #pd.buffer<stash, 0>}, %p: tensor<2x64x64xf32> {pd.buffer = #pd.buffer<stash, 32768>}) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    pd.interleave_begin
    %ds = pd.masked_softmax_grad %dp, %p {causal, diagonal_blocks, pd.buffer = #pd.buffer<workspace, 0>, scale = 1.250000e-01 : f32} : tensor<2x64x64xf32>
    %dk = pd.batch_matmul %ds, %p {pd.buffer = #pd.buffer<workspace, 32768>, transpose_lhs, triangle = #pd.triangle<lhs_upper>} : tensor<2x64x64xf32>, tensor<2x64x64xf32> -> tensor<2x64x64xf32>
    pd.interleave_end
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_backward
// CHECK-SAME: (%[[CTX:[^:]+]]: !llvm.ptr
// CHECK: llvm.call @pdrt_interleave_begin(%[[CTX]]) : (!llvm.ptr) -> ()
// CHECK: llvm.call @pdrt_masked_softmax_grad(%[[CTX]],
// CHECK: llvm.call @pdrt_batch_matmul_strided(%[[CTX]],
// CHECK: llvm.call @pdrt_interleave_end(%[[CTX]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
