// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.geglu lowers to pdrt_geglu (tanh flag, gate, up, y,
// elements) and pd.geglu_grad to pdrt_geglu_grad (tanh flag, dy, gate, up,
// dgate, dup, elements).

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward(%g: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 0>}, %u: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 96>}) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %y = pd.geglu %g, %u {approximate = #pd.gelu<tanh>, pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x3x4xf32>
    %dg, %du = pd.geglu_grad %y, %g, %u {pd.buffer = #pd.buffer<workspace, 0>, pd.buffers = [#pd.buffer<workspace, 0>, #pd.buffer<workspace, 96>]} : tensor<2x3x4xf32>
    return
  }
  func.func @stage0_backward() -> () attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_forward
// CHECK-SAME: (%[[CTX:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %[[S:[^:]+]]: !llvm.ptr, %[[WS:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK-DAG: %[[G:.+]] = llvm.getelementptr %[[S]][0]
// CHECK-DAG: %[[U:.+]] = llvm.getelementptr %[[S]][96]
// CHECK: %[[TANH:.+]] = llvm.mlir.constant(1 : i32)
// CHECK: %[[Y:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK: %[[N:.+]] = llvm.mlir.constant(24 : i64)
// CHECK: llvm.call @pdrt_geglu(%[[CTX]], %[[TANH]], %[[G]], %[[U]], %[[Y]], %[[N]])
// CHECK: %[[ERF:.+]] = llvm.mlir.constant(0 : i32)
// CHECK: %[[DU:.+]] = llvm.getelementptr %[[WS]][96]
// CHECK: llvm.call @pdrt_geglu_grad(%[[CTX]], %[[ERF]], %{{.+}}, %[[G]], %[[U]], %{{.+}}, %[[DU]], %{{.+}})
