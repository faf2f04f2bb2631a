// RUN: pd-opt %s --split-input-file --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s

// Tests that a stashed cross-entropy gradient is written over its logits:
// the logits' producer (through a reshape chain) is homed in the
// gradient's stash slot and the reshapes view it, so no workspace tensor
// holds the logits; logits another op also reads, or that arrive from
// another stage, keep a buffer of their own.

module attributes {pd.num_stages = 1 : i64} {
pd.param @w {onnx_name = "w"} : tensor<10x8xf32>
func.func @stage0_forward() -> (tensor<4x10xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x8xf32>
  %y = pd.input 1 "y" : tensor<4xi64>
  %w = pd.param_ref @w : tensor<10x8xf32>
  %z = pd.matmul %x, %w {transpose_rhs} : tensor<4x8xf32>, tensor<10x8xf32> -> tensor<4x10xf32>
  %r = pd.reshape %z : tensor<4x10xf32> -> tensor<2x2x10xf32>
  %l2 = pd.reshape %r : tensor<2x2x10xf32> -> tensor<4x10xf32>
  %loss, %d = pd.softmax_cross_entropy_with_grad %l2, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>, tensor<4x10xf32>
  pd.report_loss %loss : tensor<f32>
  return %d : tensor<4x10xf32>
}
func.func @stage0_backward(%d: tensor<4x10xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  return
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK:      pd.matmul %{{.+}}, %{{.+}} {pd.buffer = #pd.buffer<stash, [[SLOT:[0-9]+]]>, transpose_rhs}
// CHECK-NEXT: pd.reshape %{{.+}} {pd.buffer = #pd.buffer<stash, [[SLOT]]>, pd.view}
// CHECK-NEXT: pd.reshape %{{.+}} {pd.buffer = #pd.buffer<stash, [[SLOT]]>, pd.view}
// CHECK-NEXT: pd.softmax_cross_entropy_with_grad {{.+}} {pd.buffers = [#pd.buffer<workspace, {{[0-9]+}}>, #pd.buffer<stash, [[SLOT]]>]}

// -----

// Logits also read by another op: the gradient cannot overwrite them.
module attributes {pd.num_stages = 1 : i64} {
pd.param @w {onnx_name = "w"} : tensor<10x8xf32>
func.func @stage0_forward() -> (tensor<4x10xf32>, tensor<4x10xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x8xf32>
  %y = pd.input 1 "y" : tensor<4xi64>
  %w = pd.param_ref @w : tensor<10x8xf32>
  %z = pd.matmul %x, %w {transpose_rhs} : tensor<4x8xf32>, tensor<10x8xf32> -> tensor<4x10xf32>
  %loss, %d = pd.softmax_cross_entropy_with_grad %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>, tensor<4x10xf32>
  pd.report_loss %loss : tensor<f32>
  %e = pd.relu %z : tensor<4x10xf32>
  return %d, %e : tensor<4x10xf32>, tensor<4x10xf32>
}
func.func @stage0_backward(%d: tensor<4x10xf32>, %e: tensor<4x10xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  return
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK:      pd.matmul %{{.+}}, %{{.+}} {pd.buffer = #pd.buffer<workspace, {{[0-9]+}}>, transpose_rhs}
// CHECK-NEXT: pd.softmax_cross_entropy_with_grad {{.+}} {pd.buffers = [#pd.buffer<workspace, {{[0-9]+}}>, #pd.buffer<stash,

// -----

// Logits received from the previous stage stay in their own buffer.
module attributes {pd.num_stages = 2 : i64} {
func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x10xf32>
  %z = pd.relu %x : tensor<4x10xf32>
  pd.send %z to 1 channel 0 : tensor<4x10xf32>
  return
}
func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  return
}
func.func @stage1_forward() -> (tensor<4x10xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 1 : i64} {
  %z = pd.recv from 0 channel 0 : tensor<4x10xf32>
  %y = pd.input 1 "y" : tensor<4xi64>
  %loss, %d = pd.softmax_cross_entropy_with_grad %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>, tensor<4x10xf32>
  pd.report_loss %loss : tensor<f32>
  return %d : tensor<4x10xf32>
}
func.func @stage1_backward(%d: tensor<4x10xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 1 : i64} {
  return
}
}

// CHECK-LABEL: func.func @stage1_forward
// CHECK:      pd.recv from 0 channel 0 {pd.buffer = #pd.buffer<workspace,
// CHECK:      pd.softmax_cross_entropy_with_grad {{.+}} {pd.buffers = [#pd.buffer<workspace, {{[0-9]+}}>, #pd.buffer<stash,
