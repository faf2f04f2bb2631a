// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.gelu_grad lowers to pdrt_gelu_grad (dy, x, dx, elements),
// and with its bias gradient (pd-fuse-bias-gradients) or the forward's
// bias (pd-fuse-bias-into-consumers) to pdrt_gelu_grad_bias (dy, x, bias,
// dx, db, rows, columns), a null pointer for the one it lacks: 2 x 3 rows
// of 4.

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() -> () attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    return
  }
  func.func @stage0_backward(%dy: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 0>}, %x: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 96>}, %b: tensor<4xf32> {pd.buffer = #pd.buffer<stash, 192>}) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %dx = pd.gelu_grad %dy, %x {approximate = #pd.gelu<tanh>, pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x3x4xf32>
    %dh, %db = pd.gelu_grad %dy, %x {pd.buffers = [#pd.buffer<workspace, 96>, #pd.buffer<workspace, 192>]} : tensor<2x3x4xf32> -> tensor<4xf32>
    %dz = pd.gelu_grad %dy, %x, %b {pd.buffer = #pd.buffer<workspace, 208>} : tensor<2x3x4xf32>, tensor<4xf32>
    %du, %dc = pd.gelu_grad %dy, %x, %b {pd.buffers = [#pd.buffer<workspace, 304>, #pd.buffer<workspace, 400>]} : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<4xf32>
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_backward
// CHECK-SAME: (%[[CTX:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %[[S:[^:]+]]: !llvm.ptr, %[[WS:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK-DAG: %[[DY:.+]] = llvm.getelementptr %[[S]][0]
// CHECK-DAG: %[[X:.+]] = llvm.getelementptr %[[S]][96]
// CHECK-DAG: %[[B:.+]] = llvm.getelementptr %[[S]][192]
// CHECK: %[[TANH:.+]] = llvm.mlir.constant(1 : i32)
// CHECK: %[[DX:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK: %[[N:.+]] = llvm.mlir.constant(24 : i64)
// CHECK: llvm.call @pdrt_gelu_grad(%[[CTX]], %[[TANH]], %[[DY]], %[[X]], %[[DX]], %[[N]])
// CHECK: %[[ERF:.+]] = llvm.mlir.constant(0 : i32)
// CHECK: %[[NOBIAS:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[DH:.+]] = llvm.getelementptr %[[WS]][96]
// CHECK: %[[DB:.+]] = llvm.getelementptr %[[WS]][192]
// CHECK: %[[ROWS:.+]] = llvm.mlir.constant(6 : i64)
// CHECK: %[[COLS:.+]] = llvm.mlir.constant(4 : i64)
// CHECK: llvm.call @pdrt_gelu_grad_bias(%[[CTX]], %[[ERF]], %[[DY]], %[[X]], %[[NOBIAS]], %[[DH]], %[[DB]], %[[ROWS]], %[[COLS]])
// CHECK: %[[DZ:.+]] = llvm.getelementptr %[[WS]][208]
// CHECK: %[[NODB:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @pdrt_gelu_grad_bias(%[[CTX]], %{{.+}}, %[[DY]], %[[X]], %[[B]], %[[DZ]], %[[NODB]], %{{.+}}, %{{.+}})
// CHECK: %[[DU:.+]] = llvm.getelementptr %[[WS]][304]
// CHECK: %[[DC:.+]] = llvm.getelementptr %[[WS]][400]
// CHECK: llvm.call @pdrt_gelu_grad_bias(%[[CTX]], %{{.+}}, %[[DY]], %[[X]], %[[B]], %[[DU]], %[[DC]], %{{.+}}, %{{.+}})
