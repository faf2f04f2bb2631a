// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.masked_softmax lowers to pdrt_masked_softmax (x, mask, y,
// rows, dim, mask rows, mask groups, scale, block, flags) and
// pd.masked_softmax_grad to pdrt_masked_softmax_grad (dy, y, dx, rows,
// dim, scale, causal rows, block), the block 32 (PDRT_CAUSAL_BLOCK) with
// `diagonal_blocks` and 0 without: [2, 64, 64] causal scores; a padding
// mask of one [1, 2048] block per batch entry ([2, 1, 2048]: 2 groups of
// 1 row) with zero_nan_rows and uniform_empty_rows (flags 1 | 2).

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward(%s: tensor<2x64x64xf32> {pd.buffer = #pd.buffer<stash, 0>}, %mask: tensor<64x64xi1> {pd.buffer = #pd.buffer<stash, 32768>}, %s2: tensor<2x2x2048xf32> {pd.buffer = #pd.buffer<stash, 36864>}, %pad: tensor<2x1x2048xi1> {pd.buffer = #pd.buffer<stash, 69632>}) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %p = pd.masked_softmax %s, %mask {diagonal_blocks, pd.buffer = #pd.buffer<workspace, 0>, scale = 1.250000e-01 : f32} : tensor<2x64x64xf32>, tensor<64x64xi1>
    %q = pd.masked_softmax %s, %mask {pd.buffer = #pd.buffer<workspace, 32768>, scale = 1.250000e-01 : f32} : tensor<2x64x64xf32>, tensor<64x64xi1>
    %r = pd.masked_softmax %s2, %pad {pd.buffer = #pd.buffer<workspace, 65536>, uniform_empty_rows, zero_nan_rows} : tensor<2x2x2048xf32>, tensor<2x1x2048xi1>
    return
  }
  func.func @stage0_backward(%dp: tensor<2x64x64xf32> {pd.buffer = #pd.buffer<stash, 0>}, %p: tensor<2x64x64xf32> {pd.buffer = #pd.buffer<stash, 32768>}) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %ds = pd.masked_softmax_grad %dp, %p {causal, diagonal_blocks, pd.buffer = #pd.buffer<workspace, 0>, scale = 1.250000e-01 : f32} : tensor<2x64x64xf32>
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_forward
// CHECK: %[[ROWS:.+]] = llvm.mlir.constant(128 : i64)
// CHECK-NEXT: %[[DIM:.+]] = llvm.mlir.constant(64 : i64)
// CHECK-NEXT: %[[MROWS:.+]] = llvm.mlir.constant(64 : i64)
// CHECK-NEXT: %[[GROUPS:.+]] = llvm.mlir.constant(1 : i64)
// CHECK-NEXT: %[[SCALE:.+]] = llvm.mlir.constant(1.250000e-01 : f32)
// CHECK-NEXT: %[[BLOCK:.+]] = llvm.mlir.constant(32 : i64)
// CHECK-NEXT: %[[NAN:.+]] = llvm.mlir.constant(0 : i64)
// CHECK-NEXT: llvm.call @pdrt_masked_softmax(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ROWS]], %[[DIM]], %[[MROWS]], %[[GROUPS]], %[[SCALE]], %[[BLOCK]], %[[NAN]])
// CHECK: %[[WHOLE:.+]] = llvm.mlir.constant(0 : i64)
// CHECK-NEXT: %{{.+}} = llvm.mlir.constant(0 : i64)
// CHECK-NEXT: llvm.call @pdrt_masked_softmax(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[WHOLE]], %{{.+}})
// CHECK: %[[PROWS:.+]] = llvm.mlir.constant(4 : i64)
// CHECK-NEXT: %[[PDIM:.+]] = llvm.mlir.constant(2048 : i64)
// CHECK-NEXT: %[[PMROWS:.+]] = llvm.mlir.constant(1 : i64)
// CHECK-NEXT: %[[PGROUPS:.+]] = llvm.mlir.constant(2 : i64)
// CHECK-NEXT: %[[PSCALE:.+]] = llvm.mlir.constant(1.000000e+00 : f32)
// CHECK-NEXT: %[[PBLOCK:.+]] = llvm.mlir.constant(0 : i64)
// CHECK-NEXT: %[[PNAN:.+]] = llvm.mlir.constant(3 : i64)
// CHECK-NEXT: llvm.call @pdrt_masked_softmax(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[PROWS]], %[[PDIM]], %[[PMROWS]], %[[PGROUPS]], %[[PSCALE]], %[[PBLOCK]], %[[PNAN]])
// CHECK-LABEL: llvm.func @pd_stage_backward
// CHECK: llvm.mlir.constant(1.250000e-01 : f32)
// CHECK-NEXT: %[[CAUSAL:.+]] = llvm.mlir.constant(64 : i64)
// CHECK-NEXT: %[[GBLOCK:.+]] = llvm.mlir.constant(32 : i64)
// CHECK-NEXT: llvm.call @pdrt_masked_softmax_grad(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[CAUSAL]], %[[GBLOCK]])
