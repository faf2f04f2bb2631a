// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.add_layer_norm lowers to pdrt_add_layer_norm (a, b,
// b's bias, scale, bias, sum, y, rows, columns, epsilon), a null pointer
// without a rhs bias: 2 x 3 rows of 4.

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward(%a: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 0>}, %b: tensor<2x3x4xf32> {pd.buffer = #pd.buffer<stash, 96>}, %g: tensor<4xf32> {pd.buffer = #pd.buffer<stash, 192>}, %c: tensor<4xf32> {pd.buffer = #pd.buffer<stash, 208>}) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %s, %y = pd.add_layer_norm %a, %b, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32, pd.buffers = [#pd.buffer<workspace, 0>, #pd.buffer<workspace, 96>]} : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<2x3x4xf32>
    %s2, %y2 = pd.add_layer_norm %a, %b, %g, %g, %c {axis = 2 : i64, epsilon = 1.0e-5 : f32, pd.buffers = [#pd.buffer<workspace, 192>, #pd.buffer<workspace, 288>]} : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<2x3x4xf32>
    return
  }
  func.func @stage0_backward() -> () attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_forward
// CHECK-SAME: (%[[CTX:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %[[ST:[^:]+]]: !llvm.ptr, %[[WS:[^:]+]]: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK-DAG: %[[A:.+]] = llvm.getelementptr %[[ST]][0]
// CHECK-DAG: %[[B:.+]] = llvm.getelementptr %[[ST]][96]
// CHECK-DAG: %[[G:.+]] = llvm.getelementptr %[[ST]][192]
// CHECK-DAG: %[[C:.+]] = llvm.getelementptr %[[ST]][208]
// CHECK: %[[NOBIAS:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[ROWS:.+]] = llvm.mlir.constant(6 : i64)
// CHECK-NEXT: %[[COLS:.+]] = llvm.mlir.constant(4 : i64)
// CHECK: llvm.call @pdrt_add_layer_norm(%[[CTX]], %[[A]], %[[B]], %[[NOBIAS]], %[[G]], %[[G]], %{{.+}}, %{{.+}}, %[[ROWS]], %[[COLS]], %{{.+}})
// CHECK: llvm.call @pdrt_add_layer_norm(%[[CTX]], %[[A]], %[[B]], %[[C]], %[[G]], %[[G]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
