// RUN: pd-opt %s --pd-concat-in-place --split-input-file | FileCheck %s

// Attention's dQ, dK and dV, each [B, T, H, D] through result_perm, merged
// to [B, T, H * D] and joined along axis 2 into the QKV projection's
// gradient: each GEMM writes its part of the concat's result (the parts'
// dim inserted at axis 2 of its stored [2, 8, 4, 16]: [2, 8, 3, 4, 16]),
// and the concat, whose result the projection's backward reads, is in
// place.
// CHECK-LABEL: func.func @stage0_backward
// CHECK:      pd.batch_matmul {{.+}} {pd.concat_part = array<i64: 2, 2, 3>, result_perm
// CHECK:      pd.batch_matmul {{.+}} {pd.concat_part = array<i64: 2, 0, 3>, result_perm
// CHECK:      pd.batch_matmul {{.+}} {pd.concat_part = array<i64: 2, 1, 3>, result_perm
// CHECK:      pd.concat {{.+}} {axis = 2 : i64, pd.in_place_parts}
module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_backward(%ds: tensor<2x4x8x8xf32>, %x: tensor<2x4x8x16xf32>) -> tensor<2x8x384xf32> attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dv = pd.batch_matmul %ds, %x {result_perm = array<i64: 0, 2, 1, 3>, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %dq = pd.batch_matmul %ds, %x {result_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %dk = pd.batch_matmul %ds, %x {result_perm = array<i64: 0, 2, 1, 3>, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %q = pd.reshape %dq : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %k = pd.reshape %dk : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %v = pd.reshape %dv : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %c = pd.concat %q, %k, %v {axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x192xf32>
  %r = pd.reshape %c : tensor<2x8x192xf32> -> tensor<16x192xf32>
  %g = pd.matmul %r, %r {transpose_lhs} : tensor<16x192xf32>, tensor<16x192xf32> -> tensor<192x192xf32>
  %y = pd.concat %c, %c {axis = 2 : i64} : (tensor<2x8x192xf32>, tensor<2x8x192xf32>) -> tensor<2x8x384xf32>
  return %y : tensor<2x8x384xf32>
}
}

// -----

// Along the outermost axis, straight from the GEMMs (no reshape): each
// part is a contiguous block.
// CHECK-LABEL: func.func @outer
// CHECK:      pd.batch_matmul {{.+}} {pd.concat_part = array<i64: 0, 0, 2>}
// CHECK:      pd.batch_matmul {{.+}} {pd.concat_part = array<i64: 0, 1, 2>}
// CHECK:      pd.concat {{.+}} {axis = 0 : i64, pd.in_place_parts}
func.func @outer(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<4x4x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 0 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
  %r = pd.relu %c : tensor<4x4x4xf32>
  return %r : tensor<4x4x4xf32>
}

// -----

// Not in place: a part another op reads too; an input no GEMM computes;
// parts of different shapes; a reshape that merges the dims before the
// axis (the GEMM's [2, 4, 8] as [8, 8], joined along axis 1: its rows
// are not the result's); the result returned (a forward's stash) or sent.
// CHECK-LABEL: func.func @shared_part
// CHECK-NOT:  pd.concat_part
// CHECK-NOT:  pd.in_place_parts
// CHECK-LABEL: func.func @not_a_gemm
// CHECK-NOT:  pd.concat_part
// CHECK-NOT:  pd.in_place_parts
// CHECK-LABEL: func.func @unequal_parts
// CHECK-NOT:  pd.concat_part
// CHECK-NOT:  pd.in_place_parts
// CHECK-LABEL: func.func @merged_prefix
// CHECK-NOT:  pd.concat_part
// CHECK-NOT:  pd.in_place_parts
// CHECK-LABEL: func.func @returned
// CHECK-NOT:  pd.concat_part
// CHECK-NOT:  pd.in_place_parts
// CHECK-LABEL: func.func @sent
// CHECK-NOT:  pd.concat_part
// CHECK-NOT:  pd.in_place_parts
func.func @shared_part(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<6x4x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 0 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
  %r = pd.relu %1 : tensor<2x4x4xf32>
  %s = pd.concat %c, %r {axis = 0 : i64} : (tensor<4x4x4xf32>, tensor<2x4x4xf32>) -> tensor<6x4x4xf32>
  %t = pd.relu %s : tensor<6x4x4xf32>
  return %t : tensor<6x4x4xf32>
}
func.func @not_a_gemm(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>, %x: tensor<2x4x4xf32>) -> tensor<4x4x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.relu %x : tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 0 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
  %r = pd.relu %c : tensor<4x4x4xf32>
  return %r : tensor<4x4x4xf32>
}
func.func @unequal_parts(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>, %a3: tensor<3x4x8xf32>, %b3: tensor<3x8x4xf32>) -> tensor<5x4x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a3, %b3 : tensor<3x4x8xf32>, tensor<3x8x4xf32> -> tensor<3x4x4xf32>
  %c = pd.concat %0, %1 {axis = 0 : i64} : (tensor<2x4x4xf32>, tensor<3x4x4xf32>) -> tensor<5x4x4xf32>
  %r = pd.relu %c : tensor<5x4x4xf32>
  return %r : tensor<5x4x4xf32>
}
func.func @merged_prefix(%a: tensor<2x4x8xf32>, %b: tensor<2x8x8xf32>) -> tensor<8x16xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x8xf32> -> tensor<2x4x8xf32>
  %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x8xf32> -> tensor<2x4x8xf32>
  %r0 = pd.reshape %0 : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %r1 = pd.reshape %1 : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %c = pd.concat %r0, %r1 {axis = 1 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %r = pd.relu %c : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
func.func @returned(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<4x4x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 0 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
  return %c : tensor<4x4x4xf32>
}
func.func @sent(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 0 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
  pd.send %c to 1 channel 0 : tensor<4x4x4xf32>
  return
}
