// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.gelu lowers to pdrt_gelu (x, y, elements), and with the
// bias pd-fuse-bias-into-consumers moved into it to pdrt_gelu_bias (x,
// bias, y, rows, columns): 2 x 3 rows of 4.

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward(%x: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 0>}, %b: tensor<4xf32> {pd.buffer = #pd.buffer<stash, 96>}) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %y = pd.gelu %x {approximate = #pd.gelu<tanh>, pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x3x4xf32>
    %z = pd.gelu %x, %b {pd.buffer = #pd.buffer<workspace, 96>} : tensor<2x3x4xf32>, tensor<4xf32>
    return
  }
  func.func @stage0_backward() -> () attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_forward
// CHECK-SAME: (%[[CTX:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %[[S:[^:]+]]: !llvm.ptr, %[[WS:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK-DAG: %[[X:.+]] = llvm.getelementptr %[[S]][0]
// CHECK-DAG: %[[B:.+]] = llvm.getelementptr %[[S]][96]
// CHECK: %[[TANH:.+]] = llvm.mlir.constant(1 : i32)
// CHECK: %[[Y:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK: %[[N:.+]] = llvm.mlir.constant(24 : i64)
// CHECK: llvm.call @pdrt_gelu(%[[CTX]], %[[TANH]], %[[X]], %[[Y]], %[[N]])
// CHECK: %[[ERF:.+]] = llvm.mlir.constant(0 : i32)
// CHECK: %[[Z:.+]] = llvm.getelementptr %[[WS]][96]
// CHECK: %[[ROWS:.+]] = llvm.mlir.constant(6 : i64)
// CHECK: %[[COLS:.+]] = llvm.mlir.constant(4 : i64)
// CHECK: llvm.call @pdrt_gelu_bias(%[[CTX]], %[[ERF]], %[[X]], %[[B]], %[[Z]], %[[ROWS]], %[[COLS]])
