// RUN: pd-opt %s --pd-concat-in-place --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s
// RUN: pd-opt %s --pd-concat-in-place --pd-allocate-buffers="schedule=2bw optimizer=sgd" --pd-lower-to-runtime="stage=0" | FileCheck %s --check-prefix=LLVM0 --implicit-check-not=pdrt_permute --implicit-check-not=pdrt_scatter
// RUN: pd-opt %s --pd-concat-in-place --pd-allocate-buffers="schedule=2bw optimizer=sgd" --pd-lower-to-runtime="stage=1" | FileCheck %s --check-prefix=LLVM1 --implicit-check-not=pdrt_permute --implicit-check-not=pdrt_scatter

// Tests the copies at a pipeline cut inside a GEMM split by rows
// (pd-split-matmul-rows), as pdc compiles the small GPT at d = 2:
// - a contiguous slice (a run of rows) is a view of its input at the
//   window's offset;
// - a value that only such slices read is homed where they go: the
//   stage-0 layer norm's rows, one window stashed and one sent, are
//   written into the stash slot (the sent window is sent from it, the
//   backward's argument is the stashed window's offset); the stage-1 GELU
//   gradient, one window sent and one read here, into the comm buffer;
// - a row concat's parts are written at their offsets of its result: the
//   received half and the half computed here, in the stash slot of the
//   stashed concat (stage-1 forward) or in the workspace (stage-0
//   backward);
// - a kernel may write over a dying operand only where it starts its
//   slot (%tail, a window at 96 bytes, is not written over).
// The lowered stages copy neither the windows nor the concats.

module attributes {pd.num_stages = 2 : i64} {
pd.param @w {onnx_name = "w"} : tensor<6x4xf32>
func.func @stage0_forward() -> tensor<5x4xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<8x4xf32>
  %h = pd.relu %x : tensor<8x4xf32>
  %h1 = pd.slice %h {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<3x4xf32>
  %h2 = pd.slice %h {starts = array<i64: 3, 0>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<5x4xf32>
  pd.send %h1 to 1 channel 1 : tensor<3x4xf32>
  %w = pd.param_ref @w : tensor<6x4xf32>
  %y2 = pd.matmul %h2, %w {transpose_rhs} : tensor<5x4xf32>, tensor<6x4xf32> -> tensor<5x6xf32>
  pd.send %y2 to 1 channel 2 : tensor<5x6xf32>
  return %h2 : tensor<5x4xf32>
}
func.func @stage0_backward(%h2: tensor<5x4xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %d1 = pd.recv from 1 channel 5 : tensor<3x4xf32>
  %g2 = pd.recv from 1 channel 4 : tensor<5x6xf32>
  %w = pd.param_ref @w : tensor<6x4xf32>
  %d2 = pd.matmul %g2, %w : tensor<5x6xf32>, tensor<6x4xf32> -> tensor<5x4xf32>
  %d = pd.concat %d1, %d2 {axis = 0 : i64} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<8x4xf32>
  %l = pd.reduce_sum %d {axes = array<i64: 0, 1>} : tensor<8x4xf32> -> tensor<f32>
  %m = pd.reduce_sum %h2 {axes = array<i64: 0, 1>} : tensor<5x4xf32> -> tensor<f32>
  %n = pd.add %l, %m : tensor<f32>, tensor<f32> -> tensor<f32>
  pd.report_loss %n : tensor<f32>
  return
}
func.func @stage1_forward() -> tensor<8x6xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 1 : i64} {
  %a1 = pd.recv from 0 channel 1 : tensor<3x4xf32>
  %w = pd.param_ref @w : tensor<6x4xf32>
  %y1 = pd.matmul %a1, %w {transpose_rhs} : tensor<3x4xf32>, tensor<6x4xf32> -> tensor<3x6xf32>
  %y2 = pd.recv from 0 channel 2 : tensor<5x6xf32>
  %y = pd.concat %y1, %y2 {axis = 0 : i64} : (tensor<3x6xf32>, tensor<5x6xf32>) -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
func.func @stage1_backward(%y: tensor<8x6xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 1 : i64} {
  %dy = pd.relu %y : tensor<8x6xf32>
  %dy1 = pd.slice %dy {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x6xf32> -> tensor<3x6xf32>
  %dy2 = pd.slice %dy {starts = array<i64: 3, 0>, steps = array<i64: 1, 1>} : tensor<8x6xf32> -> tensor<5x6xf32>
  pd.send %dy2 to 0 channel 4 : tensor<5x6xf32>
  %w = pd.param_ref @w : tensor<6x4xf32>
  %d1 = pd.matmul %dy1, %w : tensor<3x6xf32>, tensor<6x4xf32> -> tensor<3x4xf32>
  pd.send %d1 to 0 channel 5 : tensor<3x4xf32>
  %t = pd.relu %y : tensor<8x6xf32>
  %tail = pd.slice %t {starts = array<i64: 4, 0>, steps = array<i64: 1, 1>} : tensor<8x6xf32> -> tensor<4x6xf32>
  %z = pd.slice %y {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x6xf32> -> tensor<4x6xf32>
  %g = pd.gelu_grad %tail, %z : tensor<4x6xf32>
  %l = pd.reduce_sum %g {axes = array<i64: 0, 1>} : tensor<4x6xf32> -> tensor<f32>
  pd.report_loss %l : tensor<f32>
  return
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK:      pd.relu {{.+}} {pd.buffer = #pd.buffer<stash, 0>}
// CHECK-NEXT: pd.slice {{.+}} {pd.buffer = #pd.buffer<stash, 0>, pd.view,
// CHECK-NEXT: pd.slice {{.+}} {pd.buffer = #pd.buffer<stash, 48>, pd.view,
// CHECK-NEXT: pd.send
// CHECK:      pd.matmul {{.+}} {pd.buffer = #pd.buffer<comm, 0>,
// CHECK-LABEL: func.func @stage0_backward
// CHECK-SAME: pd.buffer = #pd.buffer<stash, 48>
// CHECK:      pd.recv from 1 channel 5 {pd.buffer = #pd.buffer<workspace, [[D:[0-9]+]]>}
// CHECK-NEXT: pd.recv from 1 channel 4 {pd.buffer = #pd.buffer<workspace, [[G:[0-9]+]]>}
// CHECK-NEXT: pd.param_ref
// CHECK-NEXT: pd.matmul {{.+}} {pd.buffer = #pd.buffer<workspace, 48>}
// CHECK-NEXT: pd.concat {{.+}} {axis = 0 : i64, pd.buffer = #pd.buffer<workspace, 0>, pd.in_place_parts}
// CHECK-LABEL: func.func @stage1_forward
// CHECK:      pd.matmul {{.+}} {pd.buffer = #pd.buffer<stash, 0>,
// CHECK-NEXT: pd.recv from 0 channel 2 {pd.buffer = #pd.buffer<stash, 72>}
// CHECK-NEXT: pd.concat {{.+}} {axis = 0 : i64, pd.buffer = #pd.buffer<stash, 0>, pd.in_place_parts}
// CHECK-LABEL: func.func @stage1_backward
// CHECK:      pd.relu {{.+}} {pd.buffer = #pd.buffer<comm, 0>}
// CHECK-NEXT: pd.slice {{.+}} {pd.buffer = #pd.buffer<comm, 0>, pd.view,
// CHECK-NEXT: pd.slice {{.+}} {pd.buffer = #pd.buffer<comm, 72>, pd.view,
// CHECK:      pd.relu {{.+}} {pd.buffer = #pd.buffer<workspace, [[T:[0-9]+]]>}
// CHECK-NEXT: pd.slice {{.+}} {pd.buffer = #pd.buffer<workspace, 96>, pd.view,
// CHECK-NEXT: pd.slice {{.+}} {pd.buffer = #pd.buffer<stash, 0>, pd.view,
// CHECK-NEXT: pd.gelu_grad
// CHECK-NOT:  pd.buffer<workspace, [[T]]>
// CHECK-SAME: : tensor<4x6xf32>

// The lowered stages: no copy for the windows or the concats (the
// implicit checks), the kernels in order.
// LLVM0:      llvm.call @pdrt_load_input
// LLVM0:      llvm.call @pdrt_relu
// LLVM0:      llvm.call @pdrt_send
// LLVM0:      llvm.call @pdrt_matmul
// LLVM0:      llvm.call @pdrt_recv
// LLVM0:      llvm.call @pdrt_recv
// LLVM0:      llvm.call @pdrt_matmul
// LLVM0:      llvm.call @pdrt_sum_to
// LLVM1:      llvm.call @pdrt_recv
// LLVM1:      llvm.call @pdrt_matmul
// LLVM1:      llvm.call @pdrt_recv
// LLVM1:      llvm.call @pdrt_relu
// LLVM1:      llvm.call @pdrt_send
// LLVM1:      llvm.call @pdrt_gelu_grad
