// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 --split-input-file | FileCheck %s

// Attention's Q K^T read in place from the QKV projection: one
// pdrt_batch_matmul_strided whose operands start at their part of the
// stored [2, 8, 3, 4, 16] (Q at element 0, K at 64, 256 bytes on) and
// whose descriptor carries the strides of the stored tensor: batch dims
// [2, 4], A's batch strides [1536, 16] and B's the same, C's [256, 64];
// m = n = 8, k = 16; A as stored (row stride 192 = 3 * 4 * 16), B read
// transposed through the same row stride; C's rows 8 apart; dense (the
// last word, PDRT_DENSE).

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

// CHECK: llvm.mlir.global internal constant @[[DESC:__pd_desc_[0-9]+]](dense<[2, 2, 4, 1536, 16, 1536, 16, 256, 64, 8, 8, 16, 0, 1, 192, 192, 8, 0]> : tensor<18xi64>)
// CHECK: llvm.func @pd_stage_forward(%[[CTX:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %[[S:.+]]: !llvm.ptr, %[[WS:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK: llvm.call @pdrt_load_input
// CHECK-NEXT: %[[QKV:.+]] = llvm.getelementptr %[[S]][0]
// CHECK-NEXT: %[[K:.+]] = llvm.getelementptr %[[QKV]][256]
// CHECK: %[[OUT:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK: %[[D:.+]] = llvm.mlir.addressof @[[DESC]]
// CHECK: llvm.call @pdrt_batch_matmul_strided(%[[CTX]], %[[QKV]], %[[K]], %[[OUT]], %[[D]])

// -----

// Causal attention's P V and its softmax gradient: the GEMM's descriptor
// ends in its triangle (PDRT_LHS_LOWER = 2) even for contiguous operands,
// and the causal gradient passes its rows' matrix size (8) as
// causal_rows.

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %0 = pd.input 0 "p" {pd.buffer = #pd.buffer<stash, 0>} : tensor<2x8x8xf32>
    %1 = pd.input 1 "v" {pd.buffer = #pd.buffer<stash, 512>} : tensor<2x8x16xf32>
    %2 = pd.batch_matmul %0, %1 {pd.buffer = #pd.buffer<workspace, 0>, triangle = #pd.triangle<lhs_lower>} : tensor<2x8x8xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    %3 = pd.masked_softmax_grad %0, %0 {causal, pd.buffer = #pd.buffer<workspace, 1024>, scale = 5.000000e-01 : f32} : tensor<2x8x8xf32>
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %0 = pd.grad_seed {pd.buffer = #pd.buffer<workspace, 0>} : tensor<f32>
    pd.report_loss %0 : tensor<f32>
    return
  }
}

// CHECK: llvm.mlir.global internal constant @[[DESC:__pd_desc_[0-9]+]](dense<[1, 2, 64, 128, 128, 8, 16, 8, 0, 0, 8, 16, 16, 2]> : tensor<14xi64>)
// CHECK: llvm.call @pdrt_batch_matmul_strided(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK: %[[ROWS:.+]] = llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[DIM:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[SCALE:.+]] = llvm.mlir.constant(5.000000e-01 : f32)
// CHECK-NEXT: %[[CAUSAL:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[BLOCK:.+]] = llvm.mlir.constant(0 : i64)
// CHECK-NEXT: llvm.call @pdrt_masked_softmax_grad(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ROWS]], %[[DIM]], %[[SCALE]], %[[CAUSAL]], %[[BLOCK]])

// -----

// pd-concat-in-place: two GEMMs write their [B, T, H, D] results as the
// parts of the [2, 8, 128] concat (parts' dim at axis 2: [2, 8, 2, 4,
// 16]), which emits no call. Each descriptor carries C's strides in the
// concat's result (batch [1024, 16], rows 128 apart); the second part
// starts 64 elements (256 bytes) in.

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %0 = pd.input 0 "ds" {pd.buffer = #pd.buffer<stash, 0>} : tensor<2x4x8x8xf32>
    %1 = pd.input 1 "x" {pd.buffer = #pd.buffer<stash, 2048>} : tensor<2x4x8x16xf32>
    %2 = pd.batch_matmul %0, %1 {pd.buffer = #pd.buffer<workspace, 0>, pd.concat_part = array<i64: 2, 0, 2>, result_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
    %3 = pd.batch_matmul %0, %1 {pd.buffer = #pd.buffer<workspace, 0>, pd.concat_part = array<i64: 2, 1, 2>, result_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
    %4 = pd.reshape %2 {pd.buffer = #pd.buffer<workspace, 0>, pd.view} : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
    %5 = pd.reshape %3 {pd.buffer = #pd.buffer<workspace, 0>, pd.view} : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
    %6 = pd.concat %4, %5 {axis = 2 : i64, pd.buffer = #pd.buffer<workspace, 0>, pd.in_place_parts} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x128xf32>
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %0 = pd.grad_seed {pd.buffer = #pd.buffer<workspace, 0>} : tensor<f32>
    pd.report_loss %0 : tensor<f32>
    return
  }
}

// CHECK: llvm.mlir.global internal constant @[[PART:__pd_desc_[0-9]+]](dense<[2, 2, 4, 256, 64, 512, 128, 1024, 16, 8, 16, 8, 0, 0, 8, 16, 128, 0]> : tensor<18xi64>)
// CHECK: llvm.func @pd_stage_forward(%[[CTX:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %[[WS:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK: %[[C0:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK: llvm.call @pdrt_batch_matmul_strided(%[[CTX]], %{{.+}}, %{{.+}}, %[[C0]], %{{.+}})
// CHECK: %[[C:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK-NEXT: %[[C1:.+]] = llvm.getelementptr %[[C]][256]
// CHECK: llvm.call @pdrt_batch_matmul_strided(%[[CTX]], %{{.+}}, %{{.+}}, %[[C1]], %{{.+}})
// CHECK-NOT: pdrt_scatter
// CHECK: llvm.return

// -----

// Grouped-query attention: S = Q K^T with K shared by groups of 2 heads
// (rhs_groups) and dK = dS^T Q summed over them (result_groups). The batch
// [2, 4] is split into [2, 2, 2]: the grouped operand steps 0 along the
// groups, and so does the summed result (the runtime accumulates C along
// a dim it steps 0); the other operands step one head there.
// CHECK-DAG: llvm.mlir.global internal constant @{{__pd_desc_[0-9]+}}(dense<[3, 2, 2, 2, 512, 256, 128, 256, 128, 0, 256, 128, 64, 8, 8, 16, 0, 1, 16, 16, 8, 0]> : tensor<22xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @{{__pd_desc_[0-9]+}}(dense<[3, 2, 2, 2, 256, 128, 64, 512, 256, 128, 256, 128, 0, 8, 16, 8, 1, 0, 8, 16, 16, 0]> : tensor<22xi64>)

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %q = pd.input 0 "q" {pd.buffer = #pd.buffer<stash, 0>} : tensor<2x4x8x16xf32>
    %k = pd.input 1 "k" {pd.buffer = #pd.buffer<stash, 4096>} : tensor<2x2x8x16xf32>
    %ds = pd.input 2 "ds" {pd.buffer = #pd.buffer<stash, 6144>} : tensor<2x4x8x8xf32>
    %s = pd.batch_matmul %q, %k {pd.buffer = #pd.buffer<workspace, 0>, rhs_groups = 2 : i64, transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x8xf32>
    %dk = pd.batch_matmul %ds, %q {pd.buffer = #pd.buffer<workspace, 2048>, result_groups = 2 : i64, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x2x8x16xf32>
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %0 = pd.grad_seed {pd.buffer = #pd.buffer<workspace, 0>} : tensor<f32>
    pd.report_loss %0 : tensor<f32>
    return
  }
}
