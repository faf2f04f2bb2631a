// RUN: pd-opt %s --pd-fuse-rotary-embedding --split-input-file | FileCheck %s

// Llama's query: projected as [B, T, H, D], transposed to [B, H, T, D],
// rotated with [1, 1, T, D] tables: one pd.rotary of the transposed
// query (pd-sink-transposes moves the transpose behind it).
// CHECK-LABEL: func.func @llama_query
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x4x16xf32>, %[[C:.*]]: tensor<1x1x8x16xf32>, %[[S:.*]]: tensor<1x1x8x16xf32>)
// CHECK-NEXT: %[[X:.*]] = pd.transpose %[[Q]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT: %[[R:.*]] = pd.rotary %[[X]], %[[C]], %[[S]] : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @llama_query(%q: tensor<2x8x4x16xf32>, %cos: tensor<1x1x8x16xf32>, %sin: tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %x = pd.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %lo = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %hi = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %n = pd.neg %hi : tensor<2x4x8x8xf32>
  %r = pd.concat %n, %lo {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = pd.mul %x, %cos : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %b = pd.mul %r, %sin : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %y = pd.add %a, %b : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Every operand order of the multiplies and the add; tables of rank 2 (a
// [T, D] table over [B, T, D]) and computed in the step.
// CHECK-LABEL: func.func @operand_orders
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[P:.*]]: tensor<8x16xf32>)
// CHECK: %[[C:.*]] = pd.cos %[[P]]
// CHECK: %[[S:.*]] = pd.sin %[[P]]
// CHECK: %[[Y:.*]] = pd.rotary %[[X]], %[[C]], %[[S]] : tensor<2x8x16xf32>, tensor<8x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @operand_orders(%x: tensor<2x8x16xf32>, %p: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  %cos = pd.cos %p : tensor<8x16xf32>
  %sin = pd.sin %p : tensor<8x16xf32>
  %hi = pd.slice %x {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<2x8x16xf32> -> tensor<2x8x8xf32>
  %lo = pd.slice %x {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x16xf32> -> tensor<2x8x8xf32>
  %n = pd.neg %hi : tensor<2x8x8xf32>
  %r = pd.concat %n, %lo {axis = 2 : i64} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
  %b = pd.mul %sin, %r : tensor<8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %a = pd.mul %cos, %x : tensor<8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %y = pd.add %b, %a : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// Left alone: the halves swapped (concat(x[:h], -x[h:])), a slice that is
// not a half, the rotated half read elsewhere, and tables that do not
// broadcast as one run ([B, 1, T, D] over [B, H, T, D]).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: pd.rotary
// CHECK: return
func.func @left_alone(%x: tensor<2x4x8x16xf32>, %cos: tensor<1x1x8x16xf32>, %bad: tensor<2x1x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %lo = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %hi = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %n = pd.neg %hi : tensor<2x4x8x8xf32>
  %r = pd.concat %lo, %n {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = pd.mul %x, %cos : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %b = pd.mul %r, %cos : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %y = pd.add %a, %b : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>

  %lo2 = pd.slice %x {starts = array<i64: 0, 0, 0, 1>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %hi2 = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %n2 = pd.neg %hi2 : tensor<2x4x8x8xf32>
  %r2 = pd.concat %n2, %lo2 {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a2 = pd.mul %x, %cos : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %b2 = pd.mul %r2, %cos : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %y2 = pd.add %a2, %b2 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>

  %lo3 = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %hi3 = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %n3 = pd.neg %hi3 : tensor<2x4x8x8xf32>
  %r3 = pd.concat %n3, %lo3 {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a3 = pd.mul %x, %cos : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %b3 = pd.mul %r3, %cos : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %y3 = pd.add %a3, %b3 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>

  %lo4 = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %hi4 = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %n4 = pd.neg %hi4 : tensor<2x4x8x8xf32>
  %r4 = pd.concat %n4, %lo4 {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a4 = pd.mul %x, %bad : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %b4 = pd.mul %r4, %bad : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %y4 = pd.add %a4, %b4 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %y, %y2, %y3, %r3, %y4 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// -----

// GPT-NeoX's partial rotary: the rotation on the first 8 of the head's 16
// columns, concatenated with the other 8. One pd.rotary of the whole head
// with the 8-wide tables.
// CHECK-LABEL: func.func @neox_partial
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x16xf32>, %[[C:.*]]: tensor<1x1x8x8xf32>, %[[S:.*]]: tensor<1x1x8x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = pd.rotary %[[X]], %[[C]], %[[S]] : tensor<2x4x8x16xf32>, tensor<1x1x8x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @neox_partial(%x: tensor<2x4x8x16xf32>, %cos: tensor<1x1x8x8xf32>, %sin: tensor<1x1x8x8xf32>) -> tensor<2x4x8x16xf32> {
  %rot = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %pass = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %lo = pd.slice %rot {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x4xf32>
  %hi = pd.slice %rot {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x4xf32>
  %n = pd.neg %hi : tensor<2x4x8x4xf32>
  %r = pd.concat %n, %lo {axis = 3 : i64} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %a = pd.mul %rot, %cos : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %b = pd.mul %r, %sin : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %e = pd.add %a, %b : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %y = pd.concat %e, %pass {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Partial rotary left alone (the rotation of the slice still fuses): the
// passed-through columns first, a rotation read elsewhere too, and parts
// of two different tensors.
// CHECK-LABEL: func.func @partial_left_alone
// CHECK-COUNT-3: pd.concat
// CHECK: return
func.func @partial_left_alone(%x: tensor<2x4x8x16xf32>, %x2: tensor<2x4x8x16xf32>, %cos: tensor<1x1x8x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) {
  %rot = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %pass = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %e = pd.rotary %rot, %cos, %cos : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>
  %y = pd.concat %pass, %e {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>

  %rot2 = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %pass2 = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %e2 = pd.rotary %rot2, %cos, %cos : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>
  %y2 = pd.concat %e2, %pass2 {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>

  %rot3 = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %pass3 = pd.slice %x2 {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %e3 = pd.rotary %rot3, %cos, %cos : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>
  %y3 = pd.concat %e3, %pass3 {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %y, %y2, %e2, %y3 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>
}

// -----

// GPT-NeoX's attention: the QKV projection [B, T, H, 3 D] transposed whole
// to [B, H, T, 3 D], then Q, K and V sliced off, Q and K rotated on their
// first half. Q's and K's rotations fuse on the slices of the transpose.
// CHECK-LABEL: func.func @neox_qkv
// CHECK-SAME: (%[[QKV:.*]]: tensor<2x8x4x48xf32>, %[[C:.*]]: tensor<1x1x8x8xf32>, %[[S:.*]]: tensor<1x1x8x8xf32>)
// CHECK: %[[T:.*]] = pd.transpose %[[QKV]]
// CHECK-DAG: %[[Q:.*]] = pd.slice %[[T]] {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
// CHECK-DAG: %[[K:.*]] = pd.slice %[[T]] {starts = array<i64: 0, 0, 0, 16>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
// CHECK-DAG: %[[V:.*]] = pd.slice %[[T]] {starts = array<i64: 0, 0, 0, 32>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
// CHECK-DAG: %[[RQ:.*]] = pd.rotary %[[Q]], %[[C]], %[[S]] : tensor<2x4x8x16xf32>, tensor<1x1x8x8xf32>
// CHECK-DAG: %[[RK:.*]] = pd.rotary %[[K]], %[[C]], %[[S]] : tensor<2x4x8x16xf32>, tensor<1x1x8x8xf32>
// CHECK: return %[[RQ]], %[[RK]], %[[V]]
func.func @neox_qkv(%qkv: tensor<2x8x4x48xf32>, %cos: tensor<1x1x8x8xf32>, %sin: tensor<1x1x8x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %t = pd.transpose %qkv {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x48xf32> -> tensor<2x4x8x48xf32>
  %q = pd.slice %t {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
  %k = pd.slice %t {starts = array<i64: 0, 0, 0, 16>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
  %v = pd.slice %t {starts = array<i64: 0, 0, 0, 32>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
  %qr = pd.slice %q {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %qp = pd.slice %q {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %qlo = pd.slice %qr {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x4xf32>
  %qhi = pd.slice %qr {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x4xf32>
  %qn = pd.neg %qhi : tensor<2x4x8x4xf32>
  %qh = pd.concat %qn, %qlo {axis = 3 : i64} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %qa = pd.mul %qr, %cos : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %qb = pd.mul %qh, %sin : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %qe = pd.add %qa, %qb : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %qy = pd.concat %qe, %qp {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %kr = pd.slice %k {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %kp = pd.slice %k {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %klo = pd.slice %kr {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x4xf32>
  %khi = pd.slice %kr {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x4xf32>
  %kn = pd.neg %khi : tensor<2x4x8x4xf32>
  %kh = pd.concat %kn, %klo {axis = 3 : i64} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %ka = pd.mul %kr, %cos : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %kb = pd.mul %kh, %sin : tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %ke = pd.add %ka, %kb : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %ky = pd.concat %ke, %kp {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %qy, %ky, %v : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}
