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
// Each joins along axis 1 after a batch dim of 2, so that its inputs are
// not contiguous runs of its result either.
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
func.func @shared_part(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<2x12x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 1 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x8x4xf32>
  %r = pd.relu %1 : tensor<2x4x4xf32>
  %s = pd.concat %c, %r {axis = 1 : i64} : (tensor<2x8x4xf32>, tensor<2x4x4xf32>) -> tensor<2x12x4xf32>
  %t = pd.relu %s : tensor<2x12x4xf32>
  return %t : tensor<2x12x4xf32>
}
func.func @not_a_gemm(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>, %x: tensor<2x4x4xf32>) -> tensor<2x8x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.relu %x : tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 1 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x8x4xf32>
  %r = pd.relu %c : tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}
func.func @unequal_parts(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>, %a6: tensor<2x6x8xf32>) -> tensor<2x10x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a6, %b : tensor<2x6x8xf32>, tensor<2x8x4xf32> -> tensor<2x6x4xf32>
  %c = pd.concat %0, %1 {axis = 1 : i64} : (tensor<2x4x4xf32>, tensor<2x6x4xf32>) -> tensor<2x10x4xf32>
  %r = pd.relu %c : tensor<2x10x4xf32>
  return %r : tensor<2x10x4xf32>
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
func.func @returned(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 1 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x8x4xf32>
  return %c : tensor<2x8x4xf32>
}
func.func @sent(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %c = pd.concat %0, %1 {axis = 1 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x8x4xf32>
  pd.send %c to 1 channel 0 : tensor<2x8x4xf32>
  return
}

// -----

// Contiguous inputs (a row concat: no dim before the axis, or only dims of
// extent 1): any op computing an input writes it at its offset, parts of
// different sizes, a received part, through a reshape; the result may be
// returned (a forward's stash) or sent. No pd.concat_part: the allocator
// homes each part at its offset. This is the join at a pipeline cut
// inside a GEMM that pd-split-matmul-rows split.
// CHECK-LABEL: func.func @split_gemm_halves
// CHECK:      pd.matmul
// CHECK-NOT:  pd.concat_part
// CHECK:      pd.concat {{.+}} {axis = 0 : i64, pd.in_place_parts}
// CHECK-LABEL: func.func @received_part_returned
// CHECK:      pd.concat {{.+}} {axis = 0 : i64, pd.in_place_parts}
// CHECK-LABEL: func.func @leading_ones_sent
// CHECK:      pd.concat {{.+}} {axis = 1 : i64, pd.in_place_parts}
// CHECK-LABEL: func.func @through_reshape
// CHECK:      pd.concat {{.+}} {axis = 0 : i64, pd.in_place_parts}
func.func @split_gemm_halves(%x1: tensor<3x4xf32>, %x2: tensor<5x4xf32>, %w: tensor<6x4xf32>) -> tensor<8x6xf32> {
  %y1 = pd.matmul %x1, %w {transpose_rhs} : tensor<3x4xf32>, tensor<6x4xf32> -> tensor<3x6xf32>
  %y2 = pd.matmul %x2, %w {transpose_rhs} : tensor<5x4xf32>, tensor<6x4xf32> -> tensor<5x6xf32>
  %y = pd.concat %y1, %y2 {axis = 0 : i64} : (tensor<3x6xf32>, tensor<5x6xf32>) -> tensor<8x6xf32>
  %r = pd.relu %y : tensor<8x6xf32>
  return %r : tensor<8x6xf32>
}
func.func @received_part_returned(%x2: tensor<5x4xf32>, %w: tensor<6x4xf32>) -> tensor<8x6xf32> {
  %y1 = pd.recv from 0 channel 2 : tensor<3x6xf32>
  %y2 = pd.matmul %x2, %w {transpose_rhs} : tensor<5x4xf32>, tensor<6x4xf32> -> tensor<5x6xf32>
  %y = pd.concat %y1, %y2 {axis = 0 : i64} : (tensor<3x6xf32>, tensor<5x6xf32>) -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
func.func @leading_ones_sent(%a: tensor<1x3x4xf32>, %b: tensor<1x5x4xf32>) {
  %0 = pd.relu %a : tensor<1x3x4xf32>
  %1 = pd.relu %b : tensor<1x5x4xf32>
  %c = pd.concat %0, %1 {axis = 1 : i64} : (tensor<1x3x4xf32>, tensor<1x5x4xf32>) -> tensor<1x8x4xf32>
  pd.send %c to 1 channel 0 : tensor<1x8x4xf32>
  return
}
func.func @through_reshape(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>, %x: tensor<4x4xf32>) -> tensor<12x4xf32> {
  %0 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %r0 = pd.reshape %0 : tensor<2x4x4xf32> -> tensor<8x4xf32>
  %1 = pd.relu %x : tensor<4x4xf32>
  %c = pd.concat %r0, %1 {axis = 0 : i64} : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  %r = pd.relu %c : tensor<12x4xf32>
  return %r : tensor<12x4xf32>
}

// -----

// Contiguous inputs, not in place: an input read elsewhere too, a
// function argument, another concat (whose own parts are written in
// place: nested offsets are not planned), a slice, a constant.
// CHECK-LABEL: func.func @contiguous_not_in_place
// CHECK:      pd.concat {{[^{]+}} {axis = 0 : i64} :
// CHECK:      pd.concat {{[^{]+}} {axis = 0 : i64} :
// CHECK:      pd.concat {{[^{]+}} {axis = 0 : i64, pd.in_place_parts} :
// CHECK:      pd.concat {{[^{]+}} {axis = 0 : i64} :
// CHECK:      pd.concat {{[^{]+}} {axis = 0 : i64} :
// CHECK:      pd.concat {{[^{]+}} {axis = 0 : i64} :
func.func @contiguous_not_in_place(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %big: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>) {
  %0 = pd.relu %a : tensor<2x4xf32>
  %1 = pd.relu %b : tensor<2x4xf32>
  %shared = pd.concat %0, %1 {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %2 = pd.relu %b : tensor<2x4xf32>
  %arg = pd.concat %2, %a {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %3 = pd.relu %a : tensor<2x4xf32>
  %4 = pd.relu %b : tensor<2x4xf32>
  %inner = pd.concat %3, %4 {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %5 = pd.relu %b : tensor<2x4xf32>
  %nested = pd.concat %inner, %5 {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<6x4xf32>
  %6 = pd.relu %b : tensor<2x4xf32>
  %s = pd.slice %big {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<4x4xf32>
  %sliced = pd.concat %s, %6 {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<6x4xf32>
  %7 = pd.relu %b : tensor<2x4xf32>
  %c = pd.constant dense<1.0> : tensor<4x4xf32>
  %constant = pd.concat %c, %7 {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<6x4xf32>
  return %shared, %1, %arg, %nested, %sliced, %constant : tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>
}
