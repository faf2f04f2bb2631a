// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that pd.add_rms_norm lowers to pdrt_add_rms_norm (a, b, g, sum, y,
// rows, cols, eps) and pd.rms_norm_grad to pdrt_rms_norm_grad (dy, x, g,
// addend or null, dx, dg, rows, cols, eps).

module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward(%a: tensor<2x4x8xf32> {pd.buffer = #pd.buffer<stash, 0>}, %b: tensor<2x4x8xf32> {pd.buffer = #pd.buffer<stash, 256>}, %g: tensor<8xf32> {pd.buffer = #pd.buffer<stash, 512>}) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %s, %y = pd.add_rms_norm %a, %b, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32, pd.buffers = [#pd.buffer<workspace, 0>, #pd.buffer<workspace, 256>]} : tensor<2x4x8xf32>, tensor<8xf32>
    return
  }
  func.func @stage0_backward(%dy: tensor<2x4x8xf32> {pd.buffer = #pd.buffer<stash, 0>}, %x: tensor<2x4x8xf32> {pd.buffer = #pd.buffer<stash, 256>}, %g: tensor<8xf32> {pd.buffer = #pd.buffer<stash, 512>}, %ds: tensor<2x4x8xf32> {pd.buffer = #pd.buffer<stash, 544>}) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %dx, %dg = pd.rms_norm_grad %dy, %x, %g, %ds {axis = 2 : i64, epsilon = 9.99999997E-7 : f32, pd.buffers = [#pd.buffer<workspace, 0>, #pd.buffer<workspace, 256>]} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<8xf32>
    %dx2, %dg2 = pd.rms_norm_grad %dy, %x, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32, pd.buffers = [#pd.buffer<workspace, 288>, #pd.buffer<workspace, 544>]} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>, tensor<8xf32>
    return
  }
}

// CHECK-LABEL: llvm.func @pd_stage_forward
// CHECK: %[[ROWS:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[COLS:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[EPS:.+]] = llvm.mlir.constant(9.99999997E-7 : f32)
// CHECK-NEXT: llvm.call @pdrt_add_rms_norm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ROWS]], %[[COLS]], %[[EPS]])
// CHECK-LABEL: llvm.func @pd_stage_backward
// CHECK: llvm.call @pdrt_rms_norm_grad(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ADDEND:.+]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK: %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @pdrt_rms_norm_grad(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[NULL]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
