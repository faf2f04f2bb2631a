// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Attention's Q K^T read in place from the QKV projection: one
// pdrt_batch_matmul_strided whose operands start at their part of the
// stored [2, 8, 3, 4, 16] (Q at element 0, K at 64, 256 bytes on) and
// whose descriptor carries the strides of the stored tensor: batch dims
// [2, 4], A's batch strides [1536, 16] and B's the same, C's [256, 64];
// m = n = 8, k = 16; A as stored (row stride 192 = 3 * 4 * 16), B read
// transposed through the same row stride; C's rows 8 apart.

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %0 = pd.input 0 "qkv" {pd.buffer = #pd.buffer<stash, 0>} : tensor<2x8x192xf32>
    %1 = pd.reshape %0 {pd.buffer = #pd.buffer<stash, 0>, pd.view} : tensor<2x8x192xf32> -> tensor<2x8x3x4x16xf32>
    %2 = pd.batch_matmul %1, %1 {lhs_perm = array<i64: 0, 2, 1, 3>, lhs_select = array<i64: 2, 0>, pd.buffer = #pd.buffer<workspace, 0>, rhs_perm = array<i64: 0, 2, 3, 1>, rhs_select = array<i64: 2, 1>} : tensor<2x8x3x4x16xf32>, tensor<2x8x3x4x16xf32> -> tensor<2x4x8x8xf32>
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %0 = pd.grad_seed {pd.buffer = #pd.buffer<workspace, 0>} : tensor<f32>
    pd.report_loss %0 : tensor<f32>
    return
  }
}

// CHECK: llvm.mlir.global internal constant @[[DESC:__pd_desc_[0-9]+]](dense<[2, 2, 4, 1536, 16, 1536, 16, 256, 64, 8, 8, 16, 0, 1, 192, 192, 8]> : tensor<17xi64>)
// CHECK: llvm.func @pd_stage_forward(%[[CTX:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %[[S:.+]]: !llvm.ptr, %[[WS:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK: llvm.call @pdrt_load_input
// CHECK-NEXT: %[[QKV:.+]] = llvm.getelementptr %[[S]][0]
// CHECK-NEXT: %[[K:.+]] = llvm.getelementptr %[[QKV]][256]
// CHECK: %[[OUT:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK: %[[D:.+]] = llvm.mlir.addressof @[[DESC]]
// CHECK: llvm.call @pdrt_batch_matmul_strided(%[[CTX]], %[[QKV]], %[[K]], %[[OUT]], %[[D]])
