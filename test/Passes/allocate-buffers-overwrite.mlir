// RUN: pd-opt %s --split-input-file --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s

// Tests that a GELU, masked-softmax or layer-norm gradient whose incoming gradient
// dies at it is written over that gradient (getOverwritableOperand): the
// result takes the operand's workspace slot, also through a reshape of
// it, and keeps it live for its own readers; an incoming gradient read
// later, or a stashed operand (not in the workspace), keeps its own home.

module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  return
}
func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %z = pd.input 0 "z" : tensor<4x16xf32>
  %p = pd.input 1 "p" : tensor<2x4x4xf32>
  %dy = pd.relu %z : tensor<4x16xf32>
  %dz = pd.gelu_grad %dy, %z : tensor<4x16xf32>
  %ds = pd.relu %p : tensor<2x4x4xf32>
  %r = pd.reshape %ds : tensor<2x4x4xf32> -> tensor<8x4xf32>
  %r2 = pd.reshape %r : tensor<8x4xf32> -> tensor<2x4x4xf32>
  %dx = pd.masked_softmax_grad %r2, %p {scale = 5.000000e-01 : f32} : tensor<2x4x4xf32>
  %g = pd.input 2 "g" : tensor<16xf32>
  %dn, %dgam, %dbet = pd.layer_norm_grad %dz, %z, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %a = pd.reduce_sum %dn {axes = array<i64: 0, 1>} : tensor<4x16xf32> -> tensor<f32>
  %b = pd.reduce_sum %dx {axes = array<i64: 0, 1, 2>} : tensor<2x4x4xf32> -> tensor<f32>
  %c = pd.reduce_sum %dgam {axes = array<i64: 0>} : tensor<16xf32> -> tensor<f32>
  %d = pd.reduce_sum %dbet {axes = array<i64: 0>} : tensor<16xf32> -> tensor<f32>
  %l = pd.add %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %l2 = pd.add %l, %c : tensor<f32>, tensor<f32> -> tensor<f32>
  %l3 = pd.add %l2, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  pd.report_loss %l3 : tensor<f32>
  return
}
}

// CHECK-LABEL: func.func @stage0_backward
// CHECK:      pd.relu {{.+}} {pd.buffer = #pd.buffer<workspace, [[DY:[0-9]+]]>}
// CHECK-NEXT: pd.gelu_grad {{.+}} {pd.buffer = #pd.buffer<workspace, [[DY]]>}
// CHECK-NEXT: pd.relu {{.+}} {pd.buffer = #pd.buffer<workspace, [[DS:[0-9]+]]>}
// CHECK-NEXT: pd.reshape {{.+}} {pd.buffer = #pd.buffer<workspace, [[DS]]>, pd.view}
// CHECK-NEXT: pd.reshape {{.+}} {pd.buffer = #pd.buffer<workspace, [[DS]]>, pd.view}
// CHECK-NEXT: pd.masked_softmax_grad {{.+}} {pd.buffer = #pd.buffer<workspace, [[DS]]>, scale
// CHECK-NEXT: pd.input
// CHECK-NEXT: pd.layer_norm_grad {{.+}} pd.buffers = [#pd.buffer<workspace, [[DY]]>,

// -----

// The incoming gradient read after the GELU gradient (by the reduce), and
// one from the stash: the gradient gets a slot of its own.
module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_forward() -> tensor<4x16xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %z = pd.input 0 "z" : tensor<4x16xf32>
  %s = pd.relu %z : tensor<4x16xf32>
  return %s : tensor<4x16xf32>
}
func.func @stage0_backward(%s: tensor<4x16xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %z = pd.input 0 "z" : tensor<4x16xf32>
  %dy = pd.relu %z : tensor<4x16xf32>
  %dz = pd.gelu_grad %dy, %z : tensor<4x16xf32>
  %dw = pd.gelu_grad %s, %z : tensor<4x16xf32>
  %a = pd.reduce_sum %dz {axes = array<i64: 0, 1>} : tensor<4x16xf32> -> tensor<f32>
  %b = pd.reduce_sum %dy {axes = array<i64: 0, 1>} : tensor<4x16xf32> -> tensor<f32>
  %c = pd.reduce_sum %dw {axes = array<i64: 0, 1>} : tensor<4x16xf32> -> tensor<f32>
  %l = pd.add %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %m = pd.add %l, %c : tensor<f32>, tensor<f32> -> tensor<f32>
  pd.report_loss %m : tensor<f32>
  return
}
}

// CHECK-LABEL: func.func @stage0_backward
// CHECK:      pd.relu {{.+}} {pd.buffer = #pd.buffer<workspace, [[DY:[0-9]+]]>}
// CHECK-NOT:  pd.gelu_grad {{.+}} {pd.buffer = #pd.buffer<workspace, [[DY]]>}
// CHECK:      pd.gelu_grad {{.+}} {pd.buffer = #pd.buffer<workspace,
// CHECK-NEXT: pd.gelu_grad %arg0, {{.+}} {pd.buffer = #pd.buffer<workspace,

// -----

// A SwiGLU gradient whose incoming gradient dies at it: the gate's
// gradient takes that slot, the up projection's one of its own.
module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  return
}
func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %z = pd.input 0 "z" : tensor<4x16xf32>
  %u = pd.input 1 "u" : tensor<4x16xf32>
  %dy = pd.relu %z : tensor<4x16xf32>
  %dg, %du = pd.swiglu_grad %dy, %z, %u : tensor<4x16xf32>
  %a = pd.reduce_sum %dg {axes = array<i64: 0, 1>} : tensor<4x16xf32> -> tensor<f32>
  %b = pd.reduce_sum %du {axes = array<i64: 0, 1>} : tensor<4x16xf32> -> tensor<f32>
  %l = pd.add %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  pd.report_loss %l : tensor<f32>
  return
}
}

// CHECK-LABEL: func.func @stage0_backward
// CHECK:      pd.relu {{.+}} {pd.buffer = #pd.buffer<workspace, [[DY:[0-9]+]]>}
// CHECK-NEXT: pd.swiglu_grad {{.+}} {pd.buffers = [#pd.buffer<workspace, [[DY]]>, #pd.buffer<workspace, {{[0-9]+}}>]}
