// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s

// Tests that the Conv family's ops become pdrt_* calls: window geometry as a
// 19-word constant descriptor, a null bias pointer for a conv without bias,
// and a batch_norm with running statistics followed by their update at
// their pd.state offsets in the state region (pdrt_state_region); the
// pd.state symbols are removed like the params.

// CHECK-DAG: llvm.mlir.global internal constant @__pd_desc_{{[0-9]+}}(dense<[2, 2, 8, 8, 4, 3, 3, 4, 4, 2, 2, 1, 1, 0, 0, 1, 1, 1, 0]> : tensor<19xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[POOL:__pd_desc_[0-9]+]](dense<[2, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 4, 1]> : tensor<19xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[PAD:__pd_desc_[0-9]+]](dense<[4, 2, 2, 6, 6, 2, 2, 8, 8, 0, 0, 1, 1]> : tensor<13xi64>)
module attributes {pd.num_stages = 1 : i64} {
  pd.param @w {onnx_name = "w", pd.grad_offset = 0 : i64, pd.stage = 0 : i64} : tensor<4x2x3x3xf32>
  pd.param @g {onnx_name = "g", pd.grad_offset = 320 : i64, pd.stage = 0 : i64} : tensor<4xf32>
  // CHECK-NOT: pd.state
  pd.state @rm {onnx_name = "rm"} : tensor<4xf32>
  pd.state @rv {onnx_name = "rv"} : tensor<4xf32>
  // CHECK-LABEL: llvm.func @pd_stage_forward
  func.func @stage0_forward() -> () attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64, pd.state = {rm = 0 : i64, rv = 64 : i64}} {
    %x = pd.input 0 "x" {pd.buffer = #pd.buffer<stash, 0>} : tensor<2x2x6x6xf32>
    %w = pd.param_ref @w {pd.buffer = #pd.buffer<weights, 0>} : tensor<4x2x3x3xf32>
    %g = pd.param_ref @g {pd.buffer = #pd.buffer<weights, 320>} : tensor<4xf32>
    // CHECK: %[[PD:.+]] = llvm.mlir.addressof @[[PAD]]
    // CHECK: llvm.call @pdrt_pad(%{{.+}}, %{{.+}}, %{{.+}}, %[[PD]])
    %p = pd.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x2x6x6xf32> -> tensor<2x2x8x8xf32>
    // CHECK: %[[CD:.+]] = llvm.mlir.addressof @__pd_desc_
    // CHECK: %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
    // CHECK: llvm.call @pdrt_conv2d(%{{.+}}, %{{.+}}, %{{.+}}, %[[NULL]], %{{.+}}, %[[CD]])
    %c = pd.conv2d %p, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>, pd.buffer = #pd.buffer<workspace, 1024>} : tensor<2x2x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<2x4x4x4xf32>
    // CHECK: llvm.call @pdrt_batch_norm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, f32) -> ()
    %n = pd.batch_norm %c, %g, %g {epsilon = 1.0e-05 : f32, pd.buffer = #pd.buffer<workspace, 2048>} : tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x4x4xf32>
    // CHECK: llvm.call @pdrt_batch_norm(%[[CTX:[^,]+]], %[[X:[^,]+]],
    // CHECK: %[[BASE:.+]] = llvm.call @pdrt_state_region(%[[CTX]]) : (!llvm.ptr) -> !llvm.ptr
    // CHECK: %[[RM:.+]] = llvm.getelementptr %[[BASE]][0] : (!llvm.ptr) -> !llvm.ptr, i8
    // CHECK: %[[BASE2:.+]] = llvm.call @pdrt_state_region(%[[CTX]])
    // CHECK: %[[RV:.+]] = llvm.getelementptr %[[BASE2]][64] : (!llvm.ptr) -> !llvm.ptr, i8
    // CHECK: %[[M:.+]] = llvm.mlir.constant(8.000000e-01 : f32) : f32
    // CHECK: llvm.call @pdrt_batch_norm_running_stats(%[[CTX]], %[[X]], %[[RM]], %[[RV]], %{{.+}}, %{{.+}}, %{{.+}}, %[[M]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, f32) -> ()
    %t = pd.batch_norm %c, %g, %g {epsilon = 1.0e-05 : f32, momentum = 0.8 : f32, running_mean = @rm, running_var = @rv, pd.buffer = #pd.buffer<workspace, 4096>} : tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x4x4xf32>
    // CHECK: %[[PL:.+]] = llvm.mlir.addressof @[[POOL]]
    // CHECK: llvm.call @pdrt_avg_pool2d(%{{.+}}, %{{.+}}, %{{.+}}, %[[PL]])
    %a = pd.avg_pool2d %n {count_include_pad, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x4x4x4xf32> -> tensor<2x4x2x2xf32>
    // CHECK: llvm.call @pdrt_max_pool2d(
    %m = pd.max_pool2d %n {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, pd.buffer = #pd.buffer<workspace, 128>} : tensor<2x4x4x4xf32> -> tensor<2x4x2x2xf32>
    return
  }
  // CHECK-LABEL: llvm.func @pd_stage_backward
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %dy = pd.input 0 "x" {pd.buffer = #pd.buffer<stash, 0>} : tensor<2x4x4x4xf32>
    %x = pd.input 0 "x" {pd.buffer = #pd.buffer<stash, 1024>} : tensor<2x2x8x8xf32>
    %w = pd.param_ref @w {pd.buffer = #pd.buffer<weights, 0>} : tensor<4x2x3x3xf32>
    %g = pd.param_ref @g {pd.buffer = #pd.buffer<weights, 320>} : tensor<4xf32>
    // CHECK: llvm.call @pdrt_conv2d_grad_input(
    %dx = pd.conv2d_grad_input %dy, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>, pd.buffer = #pd.buffer<workspace, 0>} : tensor<2x4x4x4xf32>, tensor<4x2x3x3xf32> -> tensor<2x2x8x8xf32>
    // CHECK: llvm.call @pdrt_conv2d_grad_filter(
    %dw = pd.conv2d_grad_filter %dy, %x {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>, pd.buffer = #pd.buffer<workspace, 2048>} : tensor<2x4x4x4xf32>, tensor<2x2x8x8xf32> -> tensor<4x2x3x3xf32>
    // CHECK: llvm.call @pdrt_batch_norm_grad(
    %d0, %d1, %d2 = pd.batch_norm_grad %dy, %dy, %g {epsilon = 1.0e-05 : f32, pd.buffers = [#pd.buffer<workspace, 4096>, #pd.buffer<workspace, 6144>, #pd.buffer<workspace, 6208>]} : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<4xf32> -> tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>
    // CHECK: llvm.call @pdrt_max_pool2d_grad(
    %dm = pd.max_pool2d_grad %d0, %dy {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, pd.buffer = #pd.buffer<workspace, 8192>} : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    // CHECK: llvm.call @pdrt_avg_pool2d_grad(
    %da = pd.avg_pool2d_grad %d0 {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, pd.buffer = #pd.buffer<workspace, 8192>} : tensor<2x4x4x4xf32> -> tensor<2x4x5x5xf32>
    return
  }
}
