// RUN: pd-opt %s | pd-opt | FileCheck %s

// Tests that the tensor family's ops round-trip through their formats.

// CHECK-LABEL: func.func @tensor
func.func @tensor(%x: tensor<2x3x4xf32>, %t: tensor<7x4xf32>, %i: tensor<2x3xi64>) {
  // CHECK: pd.transpose %{{.+}} {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %tr = pd.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  // CHECK: pd.reshape %{{.+}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %r = pd.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK: pd.gather %{{.+}}, %{{.+}} : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %g = pd.gather %t, %i : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  // CHECK: pd.gather_grad %{{.+}}, %{{.+}} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  %gg = pd.gather_grad %g, %i : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  // CHECK: pd.batch_matmul %{{.+}}, %{{.+}} {transpose_rhs} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  %bm = pd.batch_matmul %x, %x {transpose_rhs} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  return
}
