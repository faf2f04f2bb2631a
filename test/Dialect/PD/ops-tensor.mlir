// RUN: pd-opt %s | pd-opt | FileCheck %s

// Tests that the tensor family's ops round-trip through their formats.

// CHECK-LABEL: func.func @tensor
func.func @tensor(%x: tensor<2x3x4xf32>, %t: tensor<7x4xf32>, %i: tensor<2x3xi64>, %s3: tensor<3x2x2x4xf32>, %s1: tensor<1x2x3x4xf32>, %q6: tensor<1x6x2x4xf32>, %p6: tensor<1x6x2x2xf32>) {
  // CHECK: pd.transpose %{{.+}} {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %tr = pd.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  // CHECK: pd.reshape %{{.+}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %r = pd.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK: pd.gather %{{.+}}, %{{.+}} : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %g = pd.gather %t, %i : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  // CHECK: pd.gather_grad %{{.+}}, %{{.+}} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  %gg = pd.gather_grad %g, %i : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  // CHECK: pd.gather %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<2x2x3x4xf32>
  %ga = pd.gather %x, %i {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<2x2x3x4xf32>
  // CHECK: pd.gather_grad %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x2x3x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %gga = pd.gather_grad %ga, %i {axis = 1 : i64} : tensor<2x2x3x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  // CHECK: pd.broadcast_to %{{.+}} : tensor<7x4xf32> -> tensor<2x7x4xf32>
  %b = pd.broadcast_to %t : tensor<7x4xf32> -> tensor<2x7x4xf32>
  // CHECK: pd.batch_matmul %{{.+}}, %{{.+}} {transpose_rhs} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  %bm = pd.batch_matmul %x, %x {transpose_rhs} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  // CHECK: pd.batch_matmul %{{.+}}, %{{.+}} {lhs_perm = array<i64: 1, 0, 2>, result_perm = array<i64: 1, 0, 2>, rhs_perm = array<i64: 1, 0, 2>, transpose_rhs} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  %bp = pd.batch_matmul %x, %x {lhs_perm = array<i64: 1, 0, 2>, rhs_perm = array<i64: 1, 0, 2>, result_perm = array<i64: 1, 0, 2>, transpose_rhs} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  // CHECK: pd.batch_matmul %{{.+}}, %{{.+}} {lhs_perm = array<i64: 1, 0, 2>, lhs_select = array<i64: 2, 1>, rhs_select = array<i64: 0, 0>, transpose_rhs} : tensor<3x2x2x4xf32>, tensor<1x2x3x4xf32> -> tensor<2x3x3xf32>
  %bs = pd.batch_matmul %s3, %s1 {lhs_select = array<i64: 2, 1>, lhs_perm = array<i64: 1, 0, 2>, rhs_select = array<i64: 0, 0>, transpose_rhs} : tensor<3x2x2x4xf32>, tensor<1x2x3x4xf32> -> tensor<2x3x3xf32>
  // CHECK: pd.batch_matmul %{{.+}}, %{{.+}} {rhs_groups = 3 : i64, transpose_rhs} : tensor<1x6x2x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x6x2x3xf32>
  %gq = pd.batch_matmul %q6, %s1 {rhs_groups = 3 : i64, transpose_rhs} : tensor<1x6x2x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x6x2x3xf32>
  // CHECK: pd.batch_matmul %{{.+}}, %{{.+}} {result_groups = 3 : i64, result_perm = array<i64: 0, 2, 1, 3>, transpose_lhs} : tensor<1x6x2x2xf32>, tensor<1x6x2x4xf32> -> tensor<1x2x2x4xf32>
  %gs = pd.batch_matmul %p6, %q6 {result_groups = 3 : i64, result_perm = array<i64: 0, 2, 1, 3>, transpose_lhs} : tensor<1x6x2x2xf32>, tensor<1x6x2x4xf32> -> tensor<1x2x2x4xf32>
  // CHECK: pd.slice %{{.+}} {starts = array<i64: 1, 2, 0>, steps = array<i64: 1, -2, 3>} : tensor<2x3x4xf32> -> tensor<1x2x2xf32>
  %s = pd.slice %x {starts = array<i64: 1, 2, 0>, steps = array<i64: 1, -2, 3>} : tensor<2x3x4xf32> -> tensor<1x2x2xf32>
  // CHECK: pd.slice_grad %{{.+}} {starts = array<i64: 1, 2, 0>, steps = array<i64: 1, -2, 3>} : tensor<1x2x2xf32> -> tensor<2x3x4xf32>
  %sg = pd.slice_grad %s {starts = array<i64: 1, 2, 0>, steps = array<i64: 1, -2, 3>} : tensor<1x2x2xf32> -> tensor<2x3x4xf32>
  // CHECK: pd.concat %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<6x4xf32>, tensor<7x4xf32>) -> tensor<13x4xf32>
  %c = pd.concat %r, %t {axis = 0 : i64} : (tensor<6x4xf32>, tensor<7x4xf32>) -> tensor<13x4xf32>
  // CHECK: pd.compare %{{.+}}, %{{.+}} {predicate = "eq"} : tensor<2x3xi64>, tensor<i64> -> tensor<2x3xi1>
  %zero = pd.constant dense<0> : tensor<i64>
  %m = pd.compare %i, %zero {predicate = "eq"} : tensor<2x3xi64>, tensor<i64> -> tensor<2x3xi1>
  // CHECK: pd.cast %{{.+}} : tensor<2x3xi64> -> tensor<2x3xf32>
  %f = pd.cast %i : tensor<2x3xi64> -> tensor<2x3xf32>
  // CHECK: pd.where %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x3x1xi1>, tensor<2x3x1xf32>, tensor<1x4xf32> -> tensor<2x3x4xf32>
  %cond = pd.reshape %m : tensor<2x3xi1> -> tensor<2x3x1xi1>
  %row = pd.slice %t {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<7x4xf32> -> tensor<1x4xf32>
  %fr = pd.reshape %f : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %w = pd.where %cond, %fr, %row : tensor<2x3x1xi1>, tensor<2x3x1xf32>, tensor<1x4xf32> -> tensor<2x3x4xf32>
  // CHECK: pd.where_grad %{{.+}}, %{{.+}} {negate} : tensor<2x3x4xf32>, tensor<2x3x1xi1> -> tensor<2x3x4xf32>
  %wg = pd.where_grad %w, %cond {negate} : tensor<2x3x4xf32>, tensor<2x3x1xi1> -> tensor<2x3x4xf32>
  return
}

// Tests that compare, not, gather_elements, gather_elements_grad and pad
// with a fill value round-trip.

// CHECK-LABEL: func.func @int_tensors
func.func @int_tensors(%i: tensor<2x5xi64>, %j: tensor<2x3xi64>, %x: tensor<2x5xf32>) {
  // CHECK: pd.compare %{{.+}}, %{{.+}} {predicate = "le"} : tensor<2x5xi64>, tensor<2x5xi64> -> tensor<2x5xi1>
  %m = pd.compare %i, %i {predicate = "le"} : tensor<2x5xi64>, tensor<2x5xi64> -> tensor<2x5xi1>
  // CHECK: pd.compare %{{.+}}, %{{.+}} {predicate = "xor"} : tensor<2x5xi1>, tensor<2x5xi1> -> tensor<2x5xi1>
  %x2 = pd.compare %m, %m {predicate = "xor"} : tensor<2x5xi1>, tensor<2x5xi1> -> tensor<2x5xi1>
  // CHECK: pd.not %{{.+}} : tensor<2x5xi1>
  %n = pd.not %x2 : tensor<2x5xi1>
  // CHECK: pd.gather_elements %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x5xi64>, tensor<2x3xi64> -> tensor<2x3xi64>
  %g = pd.gather_elements %i, %j {axis = 1 : i64} : tensor<2x5xi64>, tensor<2x3xi64> -> tensor<2x3xi64>
  // CHECK: pd.gather_elements %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  %gf = pd.gather_elements %x, %j {axis = 1 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  // CHECK: pd.gather_elements_grad %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
  %dg = pd.gather_elements_grad %gf, %j {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
  // CHECK: pd.pad %{{.+}} {pads = array<i64: 0, 0, 0, 1>, value = -1.000000e+02 : f64} : tensor<2x5xi64> -> tensor<2x6xi64>
  %p = pd.pad %i {pads = array<i64: 0, 0, 0, 1>, value = -1.000000e+02 : f64} : tensor<2x5xi64> -> tensor<2x6xi64>
  return
}
