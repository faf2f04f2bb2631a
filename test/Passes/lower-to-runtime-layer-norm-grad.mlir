// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.layer_norm_grad lowers to pdrt_layer_norm_grad (dy, x,
// scale, addend, dx, dscale, dbias, input_grad_sum, rows, columns,
// epsilon): null pointers without an addend or an input_grad_sum, the
// sum's home with one (2 x 3 rows of 4).

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() -> () attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    return
  }
  func.func @stage0_backward(%dy: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 0>}, %x: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 96>}, %g: tensor<4xf32> {pd.buffer = #pd.buffer<stash, 192>}, %ds: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 208>}) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %dx, %dg, %db = pd.layer_norm_grad %dy, %x, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32, pd.buffers = [#pd.buffer<workspace, 0>, #pd.buffer<workspace, 96>, #pd.buffer<workspace, 112>]} : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>
    %dx2, %dg2, %db2, %dsum = pd.layer_norm_grad %dy, %x, %g, %ds {axis = 2 : i64, epsilon = 1.0e-5 : f32, pd.buffers = [#pd.buffer<workspace, 128>, #pd.buffer<workspace, 224>, #pd.buffer<workspace, 240>, #pd.buffer<workspace, 256>]} : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_backward
// CHECK-SAME: (%[[CTX:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %[[ST:[^:]+]]: !llvm.ptr, %[[WS:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK-DAG: %[[DY:.+]] = llvm.getelementptr %[[ST]][0]
// CHECK-DAG: %[[X:.+]] = llvm.getelementptr %[[ST]][96]
// CHECK-DAG: %[[G:.+]] = llvm.getelementptr %[[ST]][192]
// CHECK-DAG: %[[DS:.+]] = llvm.getelementptr %[[ST]][208]
// CHECK: %[[NOADD:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[DX:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK-NEXT: %[[DG:.+]] = llvm.getelementptr %[[WS]][96]
// CHECK-NEXT: %[[DB:.+]] = llvm.getelementptr %[[WS]][112]
// CHECK-NEXT: %[[NOSUM:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[ROWS:.+]] = llvm.mlir.constant(6 : i64)
// CHECK-NEXT: %[[COLS:.+]] = llvm.mlir.constant(4 : i64)
// CHECK: llvm.call @pdrt_layer_norm_grad(%[[CTX]], %[[DY]], %[[X]], %[[G]], %[[NOADD]], %[[DX]], %[[DG]], %[[DB]], %[[NOSUM]], %[[ROWS]], %[[COLS]], %{{.+}})
// CHECK: %[[DSUM:.+]] = llvm.getelementptr %[[WS]][256]
// CHECK: llvm.call @pdrt_layer_norm_grad(%[[CTX]], %[[DY]], %[[X]], %[[G]], %[[DS]], %{{.+}}, %{{.+}}, %{{.+}}, %[[DSUM]], %{{.+}}, %{{.+}}, %{{.+}})
