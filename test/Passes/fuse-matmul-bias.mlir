// RUN: pd-opt %s --pd-fuse-matmul-bias --split-input-file | FileCheck %s

// A Linear layer as torch.onnx exports it at opset 13 for 3-D input: a
// matmul over the flattened rows, a reshape back, the bias added on the
// left. The bias moves into the matmul; the reshape stays, after it.
// CHECK-LABEL: func.func @linear_3d
// CHECK-SAME: (%[[X:.*]]: tensor<32x64xf32>, %[[W:.*]]: tensor<192x64xf32>, %[[B:.*]]: tensor<192xf32>)
// CHECK-NEXT: %[[P:.*]] = pd.matmul %[[X]], %[[W]], %[[B]] {transpose_rhs} : tensor<32x64xf32>, tensor<192x64xf32>, tensor<192xf32> -> tensor<32x192xf32>
// CHECK-NEXT: %[[Y:.*]] = pd.reshape %[[P]] : tensor<32x192xf32> -> tensor<2x16x192xf32>
// CHECK-NEXT: return %[[Y]]
func.func @linear_3d(%x: tensor<32x64xf32>, %w: tensor<192x64xf32>, %b: tensor<192xf32>) -> tensor<2x16x192xf32> {
  %p = pd.matmul %x, %w {transpose_rhs} : tensor<32x64xf32>, tensor<192x64xf32> -> tensor<32x192xf32>
  %r = pd.reshape %p : tensor<32x192xf32> -> tensor<2x16x192xf32>
  %y = pd.add %b, %r : tensor<192xf32>, tensor<2x16x192xf32> -> tensor<2x16x192xf32>
  return %y : tensor<2x16x192xf32>
}

// -----

// ONNX Gemm with a bias C (2-D, no reshape, bias on the right, alpha kept).
// CHECK-LABEL: func.func @gemm
// CHECK-NEXT: %[[P:.*]] = pd.matmul %arg0, %arg1, %arg2 {alpha = 2.000000e+00 : f32} : tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %[[P]]
func.func @gemm(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %p = pd.matmul %x, %w {alpha = 2.0 : f32} : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %y = pd.add %p, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Left alone: a bias over columns ([4, 1] broadcast along rows), a 2-D
// bias of full shape (a residual, not a bias), a product read twice, a
// reshape that changes the row length, an add of two products.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: pd.matmul {{.*}}, {{.*}}, {{.*}} :
// CHECK-COUNT-5: pd.add
func.func @left_alone(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %col: tensor<4x1xf32>, %full: tensor<4x3xf32>, %b: tensor<3xf32>, %b6: tensor<6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x6xf32>, tensor<4x3xf32>) {
  %p0 = pd.matmul %x, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %y0 = pd.add %p0, %col : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  %p1 = pd.matmul %x, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %y1 = pd.add %p1, %full : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %p2 = pd.matmul %x, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %y2 = pd.add %p2, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %p3 = pd.matmul %x, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %r3 = pd.reshape %p3 : tensor<4x3xf32> -> tensor<2x6xf32>
  %y3 = pd.add %r3, %b6 : tensor<2x6xf32>, tensor<6xf32> -> tensor<2x6xf32>
  %y4 = pd.add %p0, %p1 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %y0, %y1, %y2, %p2, %y3, %y4 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x6xf32>, tensor<4x3xf32>
}
