// RUN: pd-opt %s --pd-split-matmul-rows="op-ids=2 rows=3" --split-input-file --verify-diagnostics | FileCheck %s

// A Linear layer's matmul split after 3 of its 8 rows: the halves read
// their rows through slices, the second reads the weight and the bias
// through parameter reads of its own, and a concat joins the products.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>)
// CHECK-NEXT: %[[W:.*]] = pd.param_ref @w : tensor<6x4xf32>
// CHECK-NEXT: %[[B:.*]] = pd.param_ref @b : tensor<6xf32>
// CHECK-NEXT: %[[X1:.*]] = pd.slice %[[X]] {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[X2:.*]] = pd.slice %[[X]] {starts = array<i64: 3, 0>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<5x4xf32>
// CHECK-NEXT: %[[Y1:.*]] = pd.matmul %[[X1]], %[[W]], %[[B]] {alpha = 5.000000e-01 : f32, transpose_rhs} : tensor<3x4xf32>, tensor<6x4xf32>, tensor<6xf32> -> tensor<3x6xf32>
// CHECK-NEXT: %[[W2:.*]] = pd.param_ref @w : tensor<6x4xf32>
// CHECK-NEXT: %[[B2:.*]] = pd.param_ref @b : tensor<6xf32>
// CHECK-NEXT: %[[Y2:.*]] = pd.matmul %[[X2]], %[[W2]], %[[B2]] {alpha = 5.000000e-01 : f32, transpose_rhs} : tensor<5x4xf32>, tensor<6x4xf32>, tensor<6xf32> -> tensor<5x6xf32>
// CHECK-NEXT: %[[Y:.*]] = pd.concat %[[Y1]], %[[Y2]] {axis = 0 : i64} : (tensor<3x6xf32>, tensor<5x6xf32>) -> tensor<8x6xf32>
// CHECK-NEXT: %[[S:.*]] = pd.reduce_sum %[[Y]]
module {
  pd.param @w {onnx_name = "w"} : tensor<6x4xf32>
  pd.param @b {onnx_name = "b"} : tensor<6xf32>
  func.func @main(%x: tensor<8x4xf32>) -> tensor<f32> {
    %w = pd.param_ref @w : tensor<6x4xf32>
    %b = pd.param_ref @b : tensor<6xf32>
    %y = pd.matmul %x, %w, %b {transpose_rhs, alpha = 0.5 : f32} : tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32> -> tensor<8x6xf32>
    %s = pd.reduce_sum %y {axes = array<i64: 0, 1>} : tensor<8x6xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

// expected-error @+1 {{pd-split-matmul-rows: op 2 of @main is not a pd.matmul}}
module {
  pd.param @w {onnx_name = "w"} : tensor<4xf32>
  func.func @main(%x: tensor<8x4xf32>) -> tensor<f32> {
    %w = pd.param_ref @w : tensor<4xf32>
    %y = pd.mul %x, %w : tensor<8x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
    %z = pd.relu %y : tensor<8x4xf32>
    %s = pd.reduce_sum %z {axes = array<i64: 0, 1>} : tensor<8x4xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

module {
  pd.param @w {onnx_name = "w"} : tensor<2x3xf32>
  func.func @main(%x: tensor<2x4xf32>) -> tensor<f32> {
    %w = pd.param_ref @w : tensor<2x3xf32>
    %x2 = pd.relu %x : tensor<2x4xf32>
    // expected-error @+1 {{pd-split-matmul-rows: cannot split this matmul after 3 rows: its left operand is not a 2-D row-major matrix}}
    %y = pd.matmul %x2, %w {transpose_lhs} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
    %s = pd.reduce_sum %y {axes = array<i64: 0, 1>} : tensor<4x3xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

// A block of a fused projection (pd-split-sliced-matmuls) reads its rows of
// the weight through a slice of the parameter read: the second half reads
// the parameter again and slices it again.
// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = pd.param_ref @w : tensor<12x4xf32>
// CHECK: %[[WB:.*]] = pd.slice %[[W]] {starts = array<i64: 6, 0>
// CHECK: pd.matmul %{{.*}}, %[[WB]] {transpose_rhs} : tensor<3x4xf32>
// CHECK: %[[W2:.*]] = pd.param_ref @w : tensor<12x4xf32>
// CHECK-NEXT: %[[WB2:.*]] = pd.slice %[[W2]] {starts = array<i64: 6, 0>
// CHECK-NEXT: pd.matmul %{{.*}}, %[[WB2]] {transpose_rhs} : tensor<5x4xf32>
module {
  pd.param @w {onnx_name = "w"} : tensor<12x4xf32>
  func.func @main(%x: tensor<8x4xf32>) -> tensor<f32> {
    %w = pd.param_ref @w : tensor<12x4xf32>
    %wb = pd.slice %w {starts = array<i64: 6, 0>, steps = array<i64: 1, 1>} : tensor<12x4xf32> -> tensor<6x4xf32>
    %y = pd.matmul %x, %wb {transpose_rhs} : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
    %s = pd.reduce_sum %y {axes = array<i64: 0, 1>} : tensor<8x6xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}
