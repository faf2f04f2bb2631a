// RUN: pd-opt %s --split-input-file --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s

// Tests that the GEMMs pd-concat-in-place marked are homed in the
// workspace slot of the concat that joins their results, through the
// reshapes between them: every part, every view of one and the concat
// share one offset, and the slot is live from the first part's GEMM on,
// so a value computed between two parts (%t, read after the concat) lies
// elsewhere.

module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  return
}
func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %ds = pd.input 0 "ds" : tensor<2x4x8x8xf32>
  %x = pd.input 1 "x" : tensor<2x4x8x16xf32>
  %dv = pd.batch_matmul %ds, %x {pd.concat_part = array<i64: 2, 2, 3>, result_perm = array<i64: 0, 2, 1, 3>, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %t = pd.relu %ds : tensor<2x4x8x8xf32>
  %dq = pd.batch_matmul %t, %x {pd.concat_part = array<i64: 2, 0, 3>, result_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %dk = pd.batch_matmul %ds, %x {pd.concat_part = array<i64: 2, 1, 3>, result_perm = array<i64: 0, 2, 1, 3>, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %q = pd.reshape %dq : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %k = pd.reshape %dk : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %v = pd.reshape %dv : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %c = pd.concat %q, %k, %v {axis = 2 : i64, pd.in_place_parts} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x192xf32>
  %r = pd.reshape %c : tensor<2x8x192xf32> -> tensor<16x192xf32>
  %s = pd.sum_to %r : tensor<16x192xf32> -> tensor<192xf32>
  %u = pd.relu %t : tensor<2x4x8x8xf32>
  %l = pd.reduce_sum %u {axes = array<i64: 0, 1, 2, 3>} : tensor<2x4x8x8xf32> -> tensor<f32>
  %m = pd.reduce_sum %s {axes = array<i64: 0>} : tensor<192xf32> -> tensor<f32>
  %n = pd.add %l, %m : tensor<f32>, tensor<f32> -> tensor<f32>
  pd.report_loss %n : tensor<f32>
  return
}
}

// CHECK-LABEL: func.func @stage0_backward
// CHECK:      pd.batch_matmul {{.+}} {pd.buffer = #pd.buffer<workspace, [[C:[0-9]+]]>, pd.concat_part = array<i64: 2, 2, 3>
// CHECK-NEXT: pd.relu {{.+}} {pd.buffer = #pd.buffer<workspace, [[T:[0-9]+]]>}
// CHECK-NEXT: pd.batch_matmul {{.+}} {pd.buffer = #pd.buffer<workspace, [[C]]>, pd.concat_part = array<i64: 2, 0, 3>
// CHECK-NEXT: pd.batch_matmul {{.+}} {pd.buffer = #pd.buffer<workspace, [[C]]>, pd.concat_part = array<i64: 2, 1, 3>
// CHECK-NEXT: pd.reshape {{.+}} {pd.buffer = #pd.buffer<workspace, [[C]]>, pd.view}
// CHECK-NEXT: pd.reshape {{.+}} {pd.buffer = #pd.buffer<workspace, [[C]]>, pd.view}
// CHECK-NEXT: pd.reshape {{.+}} {pd.buffer = #pd.buffer<workspace, [[C]]>, pd.view}
// CHECK-NEXT: pd.concat {{.+}} {axis = 2 : i64, pd.buffer = #pd.buffer<workspace, [[C]]>, pd.in_place_parts}
// CHECK-NEXT: pd.reshape {{.+}} {pd.buffer = #pd.buffer<workspace, [[C]]>, pd.view}
// CHECK-NOT:  pd.buffer<workspace, [[T]]>
// CHECK:      pd.relu {{.+}} {pd.buffer = #pd.buffer<workspace,
