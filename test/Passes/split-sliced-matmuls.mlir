// RUN: pd-opt %s --pd-split-sliced-matmuls --split-input-file | FileCheck %s

// Phi-3's gate_up_proj: one GEMM whose two column halves are the SwiGLU's
// gate and up. Each half becomes a GEMM reading its rows of the weight
// (and of the bias) through a slice of the one parameter read.
// CHECK-LABEL: func.func @gate_up
// CHECK-SAME: (%[[X:.*]]: tensor<32x64xf32>)
// CHECK-DAG: %[[W:.*]] = pd.param_ref @w
// CHECK-DAG: %[[B:.*]] = pd.param_ref @b
// CHECK-DAG: %[[WG:.*]] = pd.slice %[[W]] {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<256x64xf32> -> tensor<128x64xf32>
// CHECK-DAG: %[[BG:.*]] = pd.slice %[[B]] {starts = array<i64: 0>, steps = array<i64: 1>} : tensor<256xf32> -> tensor<128xf32>
// CHECK-DAG: %[[G:.*]] = pd.matmul %[[X]], %[[WG]], %[[BG]] {transpose_rhs} : tensor<32x64xf32>, tensor<128x64xf32>, tensor<128xf32> -> tensor<32x128xf32>
// CHECK-DAG: %[[WU:.*]] = pd.slice %[[W]] {starts = array<i64: 128, 0>, steps = array<i64: 1, 1>} : tensor<256x64xf32> -> tensor<128x64xf32>
// CHECK-DAG: %[[U:.*]] = pd.matmul %[[X]], %[[WU]], %{{.*}} {transpose_rhs} : tensor<32x64xf32>, tensor<128x64xf32>, tensor<128xf32> -> tensor<32x128xf32>
// CHECK-DAG: %[[G3:.*]] = pd.reshape %[[G]] : tensor<32x128xf32> -> tensor<2x16x128xf32>
// CHECK-DAG: %[[U3:.*]] = pd.reshape %[[U]] : tensor<32x128xf32> -> tensor<2x16x128xf32>
// CHECK: pd.swiglu %[[G3]], %[[U3]]
// CHECK-NOT: tensor<32x256xf32>
pd.param @w {onnx_name = "w"} : tensor<256x64xf32>
pd.param @b {onnx_name = "b"} : tensor<256xf32>
func.func @gate_up(%x: tensor<32x64xf32>) -> tensor<2x16x128xf32> {
  %w = pd.param_ref @w : tensor<256x64xf32>
  %b = pd.param_ref @b : tensor<256xf32>
  %y = pd.matmul %x, %w, %b {transpose_rhs} : tensor<32x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<32x256xf32>
  %r = pd.reshape %y : tensor<32x256xf32> -> tensor<2x16x256xf32>
  %g = pd.slice %r {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x16x256xf32> -> tensor<2x16x128xf32>
  %u = pd.slice %r {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<2x16x256xf32> -> tensor<2x16x128xf32>
  %s = pd.swiglu %g, %u : tensor<2x16x128xf32>
  return %s : tensor<2x16x128xf32>
}

// -----

// Phi-3's qkv_proj with grouped-query heads: blocks of 64, 32 and 32
// columns (sliced in any order), read by other ops than batched GEMMs.
// CHECK-LABEL: func.func @qkv
// CHECK-DAG: pd.slice %{{.*}} {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<128x64xf32> -> tensor<64x64xf32>
// CHECK-DAG: pd.slice %{{.*}} {starts = array<i64: 64, 0>, steps = array<i64: 1, 1>} : tensor<128x64xf32> -> tensor<32x64xf32>
// CHECK-DAG: pd.slice %{{.*}} {starts = array<i64: 96, 0>, steps = array<i64: 1, 1>} : tensor<128x64xf32> -> tensor<32x64xf32>
// CHECK-DAG: pd.matmul %{{.*}} -> tensor<32x64xf32>
// CHECK-DAG: pd.matmul %{{.*}} -> tensor<32x32xf32>
// CHECK-DAG: pd.matmul %{{.*}} -> tensor<32x32xf32>
// CHECK-NOT: tensor<32x128xf32>
pd.param @wqkv {onnx_name = "wqkv"} : tensor<128x64xf32>
func.func @qkv(%x: tensor<32x64xf32>) -> (tensor<32x64xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
  %w = pd.param_ref @wqkv : tensor<128x64xf32>
  %y = pd.matmul %x, %w {transpose_rhs} : tensor<32x64xf32>, tensor<128x64xf32> -> tensor<32x128xf32>
  %v = pd.slice %y {starts = array<i64: 0, 96>, steps = array<i64: 1, 1>} : tensor<32x128xf32> -> tensor<32x32xf32>
  %q = pd.slice %y {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<32x128xf32> -> tensor<32x64xf32>
  %k = pd.slice %y {starts = array<i64: 0, 64>, steps = array<i64: 1, 1>} : tensor<32x128xf32> -> tensor<32x32xf32>
  %qn = pd.neg %q : tensor<32x64xf32>
  return %qn, %k, %v : tensor<32x64xf32>, tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// Left alone: blocks only batched GEMMs read (GPT-2's Q, K and V:
// pd-fold-slices-into-matmul reads them in place), blocks that leave a
// column unread, a product read whole too, and a weight not transposed
// (its column blocks are not contiguous).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: pd.matmul %{{.*}} -> tensor<32x128xf32>
func.func @left_alone(%x: tensor<32x64xf32>, %w: tensor<128x64xf32>, %wt: tensor<64x128xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x128xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
  %y = pd.matmul %x, %w {transpose_rhs} : tensor<32x64xf32>, tensor<128x64xf32> -> tensor<32x128xf32>
  %r = pd.reshape %y : tensor<32x128xf32> -> tensor<2x16x128xf32>
  %q = pd.slice %r {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x16x128xf32> -> tensor<2x16x64xf32>
  %k = pd.slice %r {starts = array<i64: 0, 0, 64>, steps = array<i64: 1, 1, 1>} : tensor<2x16x128xf32> -> tensor<2x16x64xf32>
  %qh = pd.reshape %q : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %kh = pd.reshape %k : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %qt = pd.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %kt = pd.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %s = pd.batch_matmul %qt, %kt : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32> -> tensor<2x4x16x16xf32>
  %sr = pd.reshape %s : tensor<2x4x16x16xf32> -> tensor<2x16x64xf32>
  %y2 = pd.matmul %x, %w {transpose_rhs} : tensor<32x64xf32>, tensor<128x64xf32> -> tensor<32x128xf32>
  %a = pd.slice %y2 {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<32x128xf32> -> tensor<32x64xf32>
  %y3 = pd.matmul %x, %w {transpose_rhs} : tensor<32x64xf32>, tensor<128x64xf32> -> tensor<32x128xf32>
  %c = pd.slice %y3 {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<32x128xf32> -> tensor<32x64xf32>
  %y4 = pd.matmul %x, %wt : tensor<32x64xf32>, tensor<64x128xf32> -> tensor<32x128xf32>
  %e = pd.slice %y4 {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<32x128xf32> -> tensor<32x64xf32>
  %f = pd.slice %y4 {starts = array<i64: 0, 64>, steps = array<i64: 1, 1>} : tensor<32x128xf32> -> tensor<32x64xf32>
  return %sr, %sr, %a, %c, %y3, %e, %f : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x128xf32>, tensor<32x64xf32>, tensor<32x64xf32>
}
