// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.rotary lowers to pdrt_rotary (x, cos, sin, y, rows, dim,
// rotated columns, table rows, repeat, adjoint): [2, 8, 4, 16]
// tokens-first with a [1, 8, 1, 16] table (64 rows, all 16 columns
// rotated, table rows 8, repeat 4), the adjoint over [2, 4, 8, 16]
// heads-first with a [8, 16] table (repeat 1), and partial rotary: a
// [1, 1, 8, 8] table over [2, 4, 8, 16] rotates 8 of the 16 columns.

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward(%x: tensor<2x8x4x16xf32> {pd.buffer = #pd.buffer<stash, 0>}, %c: tensor<1x8x1x16xf32> {pd.buffer = #pd.buffer<stash, 4096>}, %s: tensor<1x8x1x16xf32> {pd.buffer = #pd.buffer<stash, 4608>}, %t: tensor<2x4x8x16xf32> {pd.buffer = #pd.buffer<stash, 5120>}, %c2: tensor<8x16xf32> {pd.buffer = #pd.buffer<stash, 9216>}, %c3: tensor<1x1x8x8xf32> {pd.buffer = #pd.buffer<stash, 9728>}) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %y = pd.rotary %x, %c, %s {pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x8x4x16xf32>, tensor<1x8x1x16xf32>
    %z = pd.rotary %t, %c2, %c2 {adjoint, pd.buffer = #pd.buffer<workspace, 4096>} : tensor<2x4x8x16xf32>, tensor<8x16xf32>
    %p = pd.rotary %t, %c3, %c3 {pd.buffer = #pd.buffer<workspace, 8192>} : tensor<2x4x8x16xf32>, tensor<1x1x8x8xf32>
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_forward
// CHECK: %[[ROWS:.+]] = llvm.mlir.constant(64 : i64)
// CHECK-NEXT: %[[DIM:.+]] = llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[ROT:.+]] = llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[TROWS:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[REPEAT:.+]] = llvm.mlir.constant(4 : i64)
// CHECK-NEXT: %[[PLAIN:.+]] = llvm.mlir.constant(0 : i32)
// CHECK-NEXT: llvm.call @pdrt_rotary(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ROWS]], %[[DIM]], %[[ROT]], %[[TROWS]], %[[REPEAT]], %[[PLAIN]])
// CHECK: %[[ROWS2:.+]] = llvm.mlir.constant(64 : i64)
// CHECK-NEXT: %[[DIM2:.+]] = llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[ROT2:.+]] = llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[TROWS2:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[REPEAT2:.+]] = llvm.mlir.constant(1 : i64)
// CHECK-NEXT: %[[ADJ:.+]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.call @pdrt_rotary(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ROWS2]], %[[DIM2]], %[[ROT2]], %[[TROWS2]], %[[REPEAT2]], %[[ADJ]])
// CHECK: %[[ROWS3:.+]] = llvm.mlir.constant(64 : i64)
// CHECK-NEXT: %[[DIM3:.+]] = llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[ROT3:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[TROWS3:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[REPEAT3:.+]] = llvm.mlir.constant(1 : i64)
// CHECK-NEXT: %[[PLAIN3:.+]] = llvm.mlir.constant(0 : i32)
// CHECK-NEXT: llvm.call @pdrt_rotary(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ROWS3]], %[[DIM3]], %[[ROT3]], %[[TROWS3]], %[[REPEAT3]], %[[PLAIN3]])
