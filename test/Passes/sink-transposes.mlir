// RUN: pd-opt %s --pd-sink-transposes --split-input-file | FileCheck %s

// Llama's query, its rotation fused: [B, T, H, D] transposed to
// [B, H, T, D] and rotated with [1, 1, T, D] tables. The rotation reads the
// tokens-first layout with the tables reshaped to [1, T, 1, D], and the
// transpose moves behind it (where pd-fold-transposes-into-matmul folds it
// into the GEMM).
// CHECK-LABEL: func.func @llama_query
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x4x16xf32>, %[[C:.*]]: tensor<1x1x8x16xf32>, %[[S:.*]]: tensor<1x1x8x16xf32>)
// CHECK-DAG: %[[C2:.*]] = pd.reshape %[[C]] : tensor<1x1x8x16xf32> -> tensor<1x8x1x16xf32>
// CHECK-DAG: %[[S2:.*]] = pd.reshape %[[S]] : tensor<1x1x8x16xf32> -> tensor<1x8x1x16xf32>
// CHECK: %[[R:.*]] = pd.rotary %[[Q]], %[[C2]], %[[S2]] : tensor<2x8x4x16xf32>, tensor<1x8x1x16xf32>
// CHECK-NEXT: %[[T:.*]] = pd.transpose %[[R]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[T]]
func.func @llama_query(%q: tensor<2x8x4x16xf32>, %cos: tensor<1x1x8x16xf32>, %sin: tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %x = pd.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %y = pd.rotary %x, %cos, %sin : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// The adjoint rotation sinks the same way, with rank-2 tables ([T, D]
// broadcast over [B, H, T, D]).
// CHECK-LABEL: func.func @adjoint_rank2_tables
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x4x16xf32>, %[[C:.*]]: tensor<8x16xf32>, %[[S:.*]]: tensor<8x16xf32>)
// CHECK-DAG: %[[C2:.*]] = pd.reshape %[[C]] : tensor<8x16xf32> -> tensor<1x8x1x16xf32>
// CHECK: %[[R:.*]] = pd.rotary %[[Q]], %[[C2]], %{{.*}} {adjoint} : tensor<2x8x4x16xf32>, tensor<1x8x1x16xf32>
// CHECK-NEXT: pd.transpose %[[R]]
func.func @adjoint_rank2_tables(%q: tensor<2x8x4x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>) -> tensor<2x4x8x16xf32> {
  %x = pd.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %y = pd.rotary %x, %cos, %sin {adjoint} : tensor<2x4x8x16xf32>, tensor<8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// A transpose stays in front of a rotation when the tables do not reshape
// to the layout before it ([1, H, T, D] is no reshape of [1, T, H, D]),
// or when it is read elsewhere too.
// CHECK-LABEL: func.func @transpose_stays
// CHECK: %[[X:.*]] = pd.transpose
// CHECK: pd.rotary %[[X]]
// CHECK: %[[X2:.*]] = pd.transpose
// CHECK: pd.rotary %[[X2]]
// CHECK-NOT: pd.reshape
func.func @transpose_stays(%q: tensor<2x8x4x16xf32>, %cos: tensor<1x4x8x16xf32>, %c2: tensor<1x1x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %x = pd.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %y = pd.rotary %x, %cos, %cos : tensor<2x4x8x16xf32>, tensor<1x4x8x16xf32>
  %x2 = pd.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %y2 = pd.rotary %x2, %c2, %c2 : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
  return %y, %y2, %x2 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// -----

// GPT-NeoX's attention after pd-fuse-rotary-embedding: the QKV projection
// [B, T, H, 3 D] transposed whole to [B, H, T, 3 D], Q, K and V sliced off,
// Q and K rotated on their first half. The transpose moves behind the
// slices (one per part, none of the whole tensor), then below Q's and K's
// rotations (tables reshaped to [1, T, 1, R]); V's stays for
// pd-fold-transposes-into-matmul.
// CHECK-LABEL: func.func @neox_qkv
// CHECK-SAME: (%[[QKV:.*]]: tensor<2x8x4x48xf32>, %[[C:.*]]: tensor<1x1x8x8xf32>, %[[S:.*]]: tensor<1x1x8x8xf32>)
// CHECK-NOT: tensor<2x4x8x48xf32>
// CHECK-DAG: %[[Q:.*]] = pd.slice %[[QKV]] {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x8x4x48xf32> -> tensor<2x8x4x16xf32>
// CHECK-DAG: %[[K:.*]] = pd.slice %[[QKV]] {starts = array<i64: 0, 0, 0, 16>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x8x4x48xf32> -> tensor<2x8x4x16xf32>
// CHECK-DAG: %[[V:.*]] = pd.slice %[[QKV]] {starts = array<i64: 0, 0, 0, 32>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x8x4x48xf32> -> tensor<2x8x4x16xf32>
// CHECK-DAG: %[[C2:.*]] = pd.reshape %[[C]] : tensor<1x1x8x8xf32> -> tensor<1x8x1x8xf32>
// CHECK-DAG: %[[S2:.*]] = pd.reshape %[[S]] : tensor<1x1x8x8xf32> -> tensor<1x8x1x8xf32>
// CHECK-DAG: %[[RQ:.*]] = pd.rotary %[[Q]], %[[C2]], %[[S2]] : tensor<2x8x4x16xf32>, tensor<1x8x1x8xf32>
// CHECK-DAG: %[[RK:.*]] = pd.rotary %[[K]], %{{.*}}, %{{.*}} : tensor<2x8x4x16xf32>, tensor<1x8x1x8xf32>
// CHECK-DAG: %[[TQ:.*]] = pd.transpose %[[RQ]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-DAG: %[[TK:.*]] = pd.transpose %[[RK]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-DAG: %[[TV:.*]] = pd.transpose %[[V]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: return %[[TQ]], %[[TK]], %[[TV]]
func.func @neox_qkv(%qkv: tensor<2x8x4x48xf32>, %cos: tensor<1x1x8x8xf32>, %sin: tensor<1x1x8x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %t = pd.transpose %qkv {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x48xf32> -> tensor<2x4x8x48xf32>
  %q = pd.slice %t {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
  %k = pd.slice %t {starts = array<i64: 0, 0, 0, 16>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
  %v = pd.slice %t {starts = array<i64: 0, 0, 0, 32>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
  %qy = pd.rotary %q, %cos, %sin : tensor<2x4x8x16xf32>, tensor<1x1x8x8xf32>
  %ky = pd.rotary %k, %cos, %sin : tensor<2x4x8x16xf32>, tensor<1x1x8x8xf32>
  return %qy, %ky, %v : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// -----

// A slice with steps and offsets on several axes: each goes to the axis it
// reads before the transpose (the slice's dim d is the input's perm[d]).
// CHECK-LABEL: func.func @strided_slice
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x4x6xf32>)
// CHECK: %[[S:.*]] = pd.slice %[[X]] {starts = array<i64: 1, 2, 1, 3>, steps = array<i64: 1, 2, 1, 1>} : tensor<2x8x4x6xf32> -> tensor<1x3x3x3xf32>
// CHECK-NEXT: %[[T:.*]] = pd.transpose %[[S]] {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x3x3xf32> -> tensor<1x3x3x3xf32>
// CHECK-NEXT: return %[[T]]
func.func @strided_slice(%x: tensor<2x8x4x6xf32>) -> tensor<1x3x3x3xf32> {
  %t = pd.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x6xf32> -> tensor<2x4x8x6xf32>
  %s = pd.slice %t {starts = array<i64: 1, 1, 2, 3>, steps = array<i64: 1, 1, 2, 1>} : tensor<2x4x8x6xf32> -> tensor<1x3x3x3xf32>
  return %s : tensor<1x3x3x3xf32>
}

// -----

// A transpose read by something other than slices stays whole.
// CHECK-LABEL: func.func @transpose_read_whole
// CHECK: %[[T:.*]] = pd.transpose
// CHECK: pd.slice %[[T]]
// CHECK: return
func.func @transpose_read_whole(%x: tensor<2x8x4x48xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x48xf32>) {
  %t = pd.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x48xf32> -> tensor<2x4x8x48xf32>
  %q = pd.slice %t {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
  return %q, %t : tensor<2x4x8x16xf32>, tensor<2x4x8x48xf32>
}
