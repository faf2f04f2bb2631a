// RUN: pd-opt %s --pd-lower-to-runtime=stage=0 | FileCheck %s
// RUN: pd-opt %s --pd-lower-to-runtime=stage=1 | FileCheck %s --check-prefix=STAGE1

// Tests that buffer-assigned stage functions become pdrt_* calls on region
// base + offset pointers, with broadcast descriptors as constant globals.

module attributes {pd.num_stages = 2 : i64} {
  pd.param @w1 {onnx_name = "fc1.weight", pd.grad_offset = 0 : i64, pd.stage = 0 : i64} : tensor<16x8xf32>
  pd.param @b1 {onnx_name = "fc1.bias", pd.grad_offset = 512 : i64, pd.stage = 0 : i64} : tensor<16xf32>
  func.func @stage0_forward() -> tensor<4x8xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    %0 = pd.input 0 "x" {pd.buffer = #pd.buffer<stash, 0>} : tensor<4x8xf32>
    %1 = pd.param_ref @w1 {pd.buffer = #pd.buffer<weights, 0>} : tensor<16x8xf32>
    %2 = pd.matmul %0, %1 {pd.buffer = #pd.buffer<workspace, 0>, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
    %3 = pd.param_ref @b1 {pd.buffer = #pd.buffer<weights, 512>} : tensor<16xf32>
    %4 = pd.add %2, %3 {pd.buffer = #pd.buffer<comm, 0>} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    pd.send %4 to 1 channel 0 : tensor<4x16xf32>
    return %0 : tensor<4x8xf32>
  }
  func.func @stage0_backward(%arg0: tensor<4x8xf32> {pd.buffer = #pd.buffer<stash, 0>}) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %0 = pd.recv from 1 channel 1 {pd.buffer = #pd.buffer<workspace, 0>} : tensor<4x16xf32>
    %1 = pd.sum_to %0 {pd.buffer = #pd.buffer<workspace, 256>} : tensor<4x16xf32> -> tensor<16xf32>
    %2 = pd.matmul %0, %arg0 {pd.buffer = #pd.buffer<workspace, 512>, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
    %3 = pd.matmul %0, %arg0 {pd.accumulate, pd.buffer = #pd.buffer<grads, 0>, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
    pd.accumulate_grad @w1, %3 {pd.grad_offset = 0 : i64} : tensor<16x8xf32>
    pd.accumulate_grad @b1, %1 {pd.grad_offset = 512 : i64} : tensor<16xf32>
    pd.accumulate_grad @w1, %2 {pd.grad_offset = 0 : i64} : tensor<16x8xf32>
    return
  }
  func.func @stage1_forward() -> () attributes {pd.phase = #pd.phase<forward>, pd.stage = 1 : i64} {
    %0 = pd.recv from 0 channel 0 {pd.buffer = #pd.buffer<workspace, 0>} : tensor<4x16xf32>
    %1 = pd.relu %0 {pd.buffer = #pd.buffer<workspace, 256>} : tensor<4x16xf32>
    %2 = pd.scale %1, 2.0 {pd.buffer = #pd.buffer<workspace, 0>} : tensor<4x16xf32>
    return
  }
  func.func @stage1_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 1 : i64} {
    %0 = pd.grad_seed {pd.buffer = #pd.buffer<workspace, 0>} : tensor<f32>
    pd.report_loss %0 : tensor<f32>
    return
  }
}

// The add's descriptor: rank 2, dims [4,16], lhs strides [16,1], rhs [0,1].
// CHECK-DAG: llvm.mlir.global internal constant @[[ADD:__pd_desc_[0-9]+]](dense<[2, 4, 16, 16, 1, 0, 1]> : tensor<7xi64>)
// sum_to's descriptor: input dims [4,16], output strides [0,1].
// CHECK-DAG: llvm.mlir.global internal constant @[[SUM:__pd_desc_[0-9]+]](dense<[2, 4, 16, 0, 1]> : tensor<5xi64>)
// CHECK-NOT: func.func
// CHECK-NOT: pd.param
// CHECK: llvm.func @pd_stage_forward(%[[CTX:.+]]: !llvm.ptr, %[[W:.+]]: !llvm.ptr, %[[G:.+]]: !llvm.ptr, %[[S:.+]]: !llvm.ptr, %[[WS:.+]]: !llvm.ptr, %[[C:.+]]: !llvm.ptr)
// CHECK-NEXT: %[[I0:.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[X:.+]] = llvm.getelementptr %[[S]][0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %[[XB:.+]] = llvm.mlir.constant(128 : i64) : i64
// CHECK-NEXT: llvm.call @pdrt_load_input(%[[CTX]], %[[I0]], %[[X]], %[[XB]])
// CHECK-NEXT: %[[W1:.+]] = llvm.getelementptr %[[W]][0]
// CHECK-NEXT: %[[MM:.+]] = llvm.getelementptr %[[WS]][0]
// CHECK-NEXT: %[[M:.+]] = llvm.mlir.constant(4 : i64)
// CHECK-NEXT: %[[N:.+]] = llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[K:.+]] = llvm.mlir.constant(8 : i64)
// CHECK-NEXT: %[[TA:.+]] = llvm.mlir.constant(0 : i32)
// CHECK-NEXT: %[[TB:.+]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: %[[ALPHA:.+]] = llvm.mlir.constant(1.000000e+00 : f32)
// CHECK-NEXT: %[[BETA0:.+]] = llvm.mlir.constant(0.000000e+00 : f32)
// CHECK-NEXT: llvm.call @pdrt_matmul(%[[CTX]], %[[X]], %[[W1]], %[[MM]], %[[M]], %[[N]], %[[K]], %[[TA]], %[[TB]], %[[ALPHA]], %[[BETA0]])
// CHECK-NEXT: %[[B1:.+]] = llvm.getelementptr %[[W]][512]
// CHECK-NEXT: %[[D:.+]] = llvm.mlir.addressof @[[ADD]]
// CHECK-NEXT: %[[ADDCODE:.+]] = llvm.mlir.constant(0 : i32)
// CHECK-NEXT: %[[OUT:.+]] = llvm.getelementptr %[[C]][0]
// CHECK-NEXT: llvm.call @pdrt_binary(%[[CTX]], %[[ADDCODE]], %[[MM]], %[[B1]], %[[OUT]], %[[D]])
// CHECK-NEXT: %[[CH:.+]] = llvm.mlir.constant(0 : i64)
// CHECK-NEXT: %[[SB:.+]] = llvm.mlir.constant(256 : i64)
// CHECK-NEXT: llvm.call @pdrt_send(%[[CTX]], %[[CH]], %[[OUT]], %[[SB]])
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func @pd_stage_backward
// CHECK: llvm.call @pdrt_recv
// CHECK: llvm.call @pdrt_sum_to
// CHECK: llvm.call @pdrt_matmul
// Gradients accumulate into the grads region at the parameter's offset.
// A matmul marked pd.accumulate adds into the accumulator (beta = 1) and
// its accumulate_grad needs no call.
// CHECK: %[[GW1:.+]] = llvm.getelementptr %[[BG:arg[0-9]+]][0]
// CHECK: llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK: %[[BETA:.+]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK: llvm.call @pdrt_matmul(%{{.+}}, %{{.+}}, %{{.+}}, %[[GW1]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[BETA]])
// CHECK: %[[GB1:.+]] = llvm.getelementptr %[[BG]][512]
// CHECK: llvm.call @pdrt_accumulate(%{{.+}}, %{{.+}}, %[[GB1]], %{{.+}})
// CHECK: llvm.call @pdrt_accumulate
// CHECK-NOT: llvm.call @pdrt_accumulate
// CHECK: llvm.return

// STAGE1-LABEL: llvm.func @pd_stage_forward
// STAGE1: llvm.call @pdrt_recv
// STAGE1: llvm.call @pdrt_relu
// STAGE1: %[[F:.+]] = llvm.mlir.constant(2.000000e+00 : f32) : f32
// STAGE1: llvm.call @pdrt_scale(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[F]])
// STAGE1-LABEL: llvm.func @pd_stage_backward
// STAGE1: llvm.call @pdrt_grad_seed
// STAGE1: llvm.call @pdrt_report_loss
