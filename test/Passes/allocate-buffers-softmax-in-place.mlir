// RUN: pd-opt %s --split-input-file --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s

// Tests that a stashed masked softmax is written over its scores: the
// scores' producer (through a reshape chain) is homed in the softmax's
// stash slot and the reshapes view it, so no workspace tensor holds the
// scores; scores another op also reads, or a softmax the backward does
// not read (not stashed), keep buffers of their own.

module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_forward() -> (tensor<2x4x4xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %q = pd.input 0 "q" : tensor<2x4x8xf32>
  %s = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %r = pd.reshape %s : tensor<2x4x4xf32> -> tensor<8x4xf32>
  %r2 = pd.reshape %r : tensor<8x4xf32> -> tensor<2x4x4xf32>
  %p = pd.masked_softmax %r2 {scale = 5.000000e-01 : f32} : tensor<2x4x4xf32>
  %o = pd.batch_matmul %p, %q : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %loss = pd.reduce_sum %o {axes = array<i64: 0, 1, 2>} : tensor<2x4x8xf32> -> tensor<f32>
  pd.report_loss %loss : tensor<f32>
  return %p : tensor<2x4x4xf32>
}
func.func @stage0_backward(%p: tensor<2x4x4xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  return
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK:      pd.batch_matmul %{{.+}}, %{{.+}} {pd.buffer = #pd.buffer<stash, [[SLOT:[0-9]+]]>, transpose_rhs}
// CHECK-NEXT: pd.reshape %{{.+}} {pd.buffer = #pd.buffer<stash, [[SLOT]]>, pd.view}
// CHECK-NEXT: pd.reshape %{{.+}} {pd.buffer = #pd.buffer<stash, [[SLOT]]>, pd.view}
// CHECK-NEXT: pd.masked_softmax {{.+}} {pd.buffer = #pd.buffer<stash, [[SLOT]]>, scale = 5.000000e-01 : f32}

// -----

// Scores also read by another op: the softmax cannot overwrite them.
module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_forward() -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %q = pd.input 0 "q" : tensor<2x4x8xf32>
  %s = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p = pd.masked_softmax %s {scale = 5.000000e-01 : f32} : tensor<2x4x4xf32>
  %e = pd.relu %s : tensor<2x4x4xf32>
  return %p, %e : tensor<2x4x4xf32>, tensor<2x4x4xf32>
}
func.func @stage0_backward(%p: tensor<2x4x4xf32>, %e: tensor<2x4x4xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  return
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK:      pd.batch_matmul %{{.+}}, %{{.+}} {pd.buffer = #pd.buffer<workspace, {{[0-9]+}}>, transpose_rhs}
// CHECK-NEXT: pd.masked_softmax {{.+}} {pd.buffer = #pd.buffer<stash,

// -----

// A softmax the backward does not read lives in the workspace, apart from
// its scores (both live at the softmax).
module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %q = pd.input 0 "q" : tensor<2x4x8xf32>
  %s = pd.batch_matmul %q, %q {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %p = pd.masked_softmax %s {scale = 5.000000e-01 : f32} : tensor<2x4x4xf32>
  %loss = pd.reduce_sum %p {axes = array<i64: 0, 1, 2>} : tensor<2x4x4xf32> -> tensor<f32>
  pd.report_loss %loss : tensor<f32>
  return
}
func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  return
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK:      pd.batch_matmul %{{.+}}, %{{.+}} {pd.buffer = #pd.buffer<workspace, [[S:[0-9]+]]>, transpose_rhs}
// CHECK-NOT:  pd.masked_softmax {{.+}} {pd.buffer = #pd.buffer<workspace, [[S]]>,
// CHECK:      pd.masked_softmax {{.+}} {pd.buffer = #pd.buffer<workspace, {{[0-9]+}}>,
