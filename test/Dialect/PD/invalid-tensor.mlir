// RUN: pd-opt %s --split-input-file --verify-diagnostics
// Tests that perm must have one entry per input dimension.
func.func @perm_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.transpose' op perm has 3 entries for rank 2}}
  %0 = pd.transpose %x {perm = array<i64: 0, 1, 2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that perm must be a permutation.
func.func @perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.transpose' op perm is not a permutation of [0, 2)}}
  %0 = pd.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

// Tests that the result of a transpose is the permuted shape.
func.func @perm_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.transpose' op result shape [2,3] is not the permuted input shape}}
  %0 = pd.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that a reshape keeps the element count.
func.func @reshape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pd.reshape' op cannot reshape 'tensor<2x3xf32>' to 'tensor<7xf32>' (element counts or types differ)}}
  %0 = pd.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

// Tests that gather needs data of rank >= 1.
func.func @gather_rank(%t: tensor<f32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'pd.gather' op data must have rank >= 1}}
  %0 = pd.gather %t, %i : tensor<f32>, tensor<3xi64> -> tensor<3xf32>
  return
}

// -----

// Tests that the gather axis is a dimension of the data.
func.func @gather_axis(%t: tensor<7x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'pd.gather' op axis 2 is out of range for data of rank 2}}
  %0 = pd.gather %t, %i {axis = 2 : i64} : tensor<7x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  return
}

// -----

// Tests that gather keeps the element type.
func.func @gather_type(%t: tensor<7x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'pd.gather' op data and gathered element types differ}}
  %0 = pd.gather %t, %i : tensor<7x4xf32>, tensor<3xi64> -> tensor<3x4xi64>
  return
}

// -----

// Tests that the result shape of gather.
func.func @gather(%t: tensor<7x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'pd.gather' op gathered shape [3,5] is not [3,4]}}
  %0 = pd.gather %t, %i : tensor<7x4xf32>, tensor<3xi64> -> tensor<3x5xf32>
  return
}

// -----

// Tests that the gradient of gather has the data's shape.
func.func @gather_grad(%g: tensor<7x3x2xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'pd.gather_grad' op gathered shape [7,3,2] is not [7,3,4]}}
  %0 = pd.gather_grad %g, %i {axis = 1 : i64} : tensor<7x3x2xf32>, tensor<3xi64> -> tensor<7x4x4xf32>
  return
}

// -----

// Tests that broadcast_to keeps the element type.
func.func @broadcast_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pd.broadcast_to' op input and result element types differ}}
  %0 = pd.broadcast_to %x : tensor<4xf32> -> tensor<2x4xi64>
  return
}

// -----

// Tests that broadcast_to follows numpy rules.
func.func @broadcast_shape(%x: tensor<3xf32>) {
  // expected-error @+1 {{'pd.broadcast_to' op input shape [3] does not broadcast to [2,4]}}
  %0 = pd.broadcast_to %x : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

// Tests that batched matmul needs operands of one rank >= 3.
func.func @batch_rank(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op expects operands and result of one rank >= 3}}
  %0 = pd.batch_matmul %a, %b : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  return
}

// -----

// Tests that batched matmul operands share their batch dimensions.
func.func @batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op batch dimensions differ}}
  %0 = pd.batch_matmul %a, %b : tensor<2x3x4xf32>, tensor<3x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

// Tests that the contraction dimensions of batched matmul.
func.func @batch_k(%a: tensor<2x3x4xf32>, %b: tensor<2x5x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op contraction dimensions differ: 4 vs 5}}
  %0 = pd.batch_matmul %a, %b : tensor<2x3x4xf32>, tensor<2x5x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

// Tests that the result matrices of batched matmul.
func.func @batch_mn(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op result matrices are not [3,5]}}
  %0 = pd.batch_matmul %a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x5x3xf32>
  return
}

// -----

// Tests that slice starts and steps have the input's rank.
func.func @slice_rank(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'pd.slice' op starts, steps and result need the input's rank 2}}
  %0 = pd.slice %x {starts = array<i64: 0>, steps = array<i64: 1>} : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

// Tests that a slice window stays inside the input (negative step).
func.func @slice_window(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'pd.slice' op dimension 1: the window start 2, step -1, size 4 leaves the input of size 6}}
  %0 = pd.slice %x {starts = array<i64: 0, 2>, steps = array<i64: 1, -1>} : tensor<4x6xf32> -> tensor<4x4xf32>
  return
}

// -----

// Tests that slice steps are non-zero.
func.func @slice_step(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'pd.slice' op dimension 0: the window start 0, step 0, size 1 leaves the input of size 4}}
  %0 = pd.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 0, 1>} : tensor<4x6xf32> -> tensor<1x6xf32>
  return
}

// -----

// Tests that slice keeps the element type.
func.func @slice_type(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'pd.slice' op input and result element types differ}}
  %0 = pd.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x6xf32> -> tensor<4x6xi64>
  return
}

// -----

// Tests that the window of a slice gradient stays inside its result.
func.func @slice_grad(%g: tensor<4x3xf32>) {
  // expected-error @+1 {{'pd.slice_grad' op dimension 1: the window start 4, step 1, size 3 leaves the input of size 6}}
  %0 = pd.slice_grad %g {starts = array<i64: 0, 4>, steps = array<i64: 1, 1>} : tensor<4x3xf32> -> tensor<4x6xf32>
  return
}

// -----

// Tests that the concat axis is a dimension of the result.
func.func @concat_axis(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{'pd.concat' op axis 2 is out of range}}
  %0 = pd.concat %a, %a {axis = 2 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

// Tests that concat inputs have the result's rank.
func.func @concat_rank(%a: tensor<2x4xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'pd.concat' op inputs must have the result's rank}}
  %0 = pd.concat %a, %b {axis = 1 : i64} : (tensor<2x4xf32>, tensor<8xf32>) -> tensor<2x12xf32>
  return
}

// -----

// Tests that concat inputs agree off the axis.
func.func @concat_shape(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'pd.concat' op input shape [3,4] differs from [2,8] off the concatenation axis}}
  %0 = pd.concat %a, %b {axis = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

// Tests that concat inputs add up to the result.
func.func @concat_sum(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{'pd.concat' op inputs add up to 8 along axis 1, not 9}}
  %0 = pd.concat %a, %a {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x9xf32>
  return
}

// -----

// Tests that compare takes operands of one element type.
func.func @equal_type(%a: tensor<4xf32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'pd.compare' op operand element types differ}}
  %0 = pd.compare %a, %b {predicate = "eq"} : tensor<4xf32>, tensor<4xi64> -> tensor<4xi1>
  return
}

// -----

// Tests that the result of compare is the broadcast shape.
func.func @equal_shape(%a: tensor<4xf32>, %b: tensor<2x1xf32>) {
  // expected-error @+1 {{'pd.compare' op result shape [4] is not the broadcast of the operand shapes}}
  %0 = pd.compare %a, %b {predicate = "eq"} : tensor<4xf32>, tensor<2x1xf32> -> tensor<4xi1>
  return
}

// -----

// Tests that cast keeps the shape.
func.func @cast(%a: tensor<4xi64>) {
  // expected-error @+1 {{'pd.cast' op input and result shapes differ}}
  %0 = pd.cast %a : tensor<4xi64> -> tensor<2x2xf32>
  return
}

// -----

// Tests that the result of where is the broadcast shape.
func.func @where(%c: tensor<2x1xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'pd.where' op result shape [4] is not the broadcast of the operand shapes}}
  %0 = pd.where %c, %a, %a : tensor<2x1xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that where_grad has the gradient's type.
func.func @where_grad_type(%g: tensor<2x4xf32>, %c: tensor<4xi1>) {
  // expected-error @+1 {{'pd.where_grad' op result type differs from the gradient's}}
  %0 = pd.where_grad %g, %c : tensor<2x4xf32>, tensor<4xi1> -> tensor<4xf32>
  return
}

// -----

// Tests that the where_grad condition broadcasts to the gradient.
func.func @where_grad_cond(%g: tensor<2x4xf32>, %c: tensor<3x4xi1>) {
  // expected-error @+1 {{'pd.where_grad' op condition shape [3,4] does not broadcast to [2,4]}}
  %0 = pd.where_grad %g, %c : tensor<2x4xf32>, tensor<3x4xi1> -> tensor<2x4xf32>
  return
}

// -----

// Tests that pd.compare rejects an unknown predicate.
func.func @compare_predicate(%i: tensor<4xi64>) {
  // expected-error @+1 {{'pd.compare' op unknown predicate 'ne'}}
  %0 = pd.compare %i, %i {predicate = "ne"} : tensor<4xi64>, tensor<4xi64> -> tensor<4xi1>
  return
}

// -----

// Tests that logic predicates need bool operands.
func.func @compare_logic(%i: tensor<4xi64>) {
  // expected-error @+1 {{'pd.compare' op predicate 'and' needs bool operands}}
  %0 = pd.compare %i, %i {predicate = "and"} : tensor<4xi64>, tensor<4xi64> -> tensor<4xi1>
  return
}

// -----

// Tests that gather_elements' indices have the data's rank.
func.func @gather_elements_rank(%x: tensor<2x5xf32>, %j: tensor<3xi64>) {
  // expected-error @+1 {{'pd.gather_elements' op indices must have the data's rank 2}}
  %0 = pd.gather_elements %x, %j {axis = 1 : i64} : tensor<2x5xf32>, tensor<3xi64> -> tensor<3xf32>
  return
}

// -----

// Tests that a batched matmul's stored dim orders are permutations.
func.func @batch_matmul_perm(%a: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op lhs_perm is not a permutation of 3 dims}}
  %0 = pd.batch_matmul %a, %a {lhs_perm = array<i64: 0, 0, 2>, transpose_rhs} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  return
}

// -----

// Tests that the stored operand keeps a matrix dim innermost.
func.func @batch_matmul_operand_layout(%a: tensor<4x2x3xf32>, %b: tensor<3x4x5xf32>) {
  // A = transpose(a, [2, 1, 0]) is [3, 2, 4]: its batch dim is a's innermost.
  // expected-error @+1 {{'pd.batch_matmul' op lhs_perm leaves neither matrix dim innermost}}
  %0 = pd.batch_matmul %a, %b {lhs_perm = array<i64: 2, 1, 0>} : tensor<4x2x3xf32>, tensor<3x4x5xf32> -> tensor<3x2x5xf32>
  return
}

// -----

// Tests that a select names a dim of the stored operand and an index in it.
func.func @batch_matmul_select_index(%a: tensor<2x3x3x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op lhs_select is not [axis, index] of the lhs shape}}
  %0 = pd.batch_matmul %a, %b {lhs_select = array<i64: 1, 3>} : tensor<2x3x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

// Tests that an operand with a select has one dim more than the op.
func.func @batch_matmul_select_rank(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op expects operands and result of one rank >= 3 (an operand with a select: one more)}}
  %0 = pd.batch_matmul %a, %b {rhs_select = array<i64: 0, 1>} : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

// Tests that the stored result keeps the columns innermost.
func.func @batch_matmul_result_layout(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op result_perm does not keep the columns innermost}}
  %0 = pd.batch_matmul %a, %b {result_perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x5x3xf32>
  return
}

// -----

// Tests that a GEMM skipping a triangle of its result has square results.
func.func @batch_matmul_triangle_result(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op triangle = result_lower needs a square result matrix, got [3,5]}}
  %0 = pd.batch_matmul %a, %b {triangle = #pd.triangle<result_lower>} : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

// Tests that a GEMM skipping a triangle of op(A) has a square op(A).
func.func @batch_matmul_triangle_lhs(%a: tensor<2x4x3xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op triangle = lhs_upper needs a square lhs matrix, got [3,4]}}
  %0 = pd.batch_matmul %a, %b {transpose_lhs, triangle = #pd.triangle<lhs_upper>} : tensor<2x4x3xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

// Tests that a group shares at least two entries.
func.func @batch_matmul_one_group(%q: tensor<1x4x2x4xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op rhs_groups must be at least 2, got 1}}
  %0 = pd.batch_matmul %q, %q {rhs_groups = 1 : i64, transpose_rhs} : tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32> -> tensor<1x4x2x2xf32>
  return
}

// -----

// Tests that the groups divide the last batch dim.
func.func @batch_matmul_groups_divide(%q: tensor<1x4x2x4xf32>, %k: tensor<1x1x2x4xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op groups of 3 do not divide the last batch dim, 4}}
  %0 = pd.batch_matmul %q, %k {rhs_groups = 3 : i64, transpose_rhs} : tensor<1x4x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x4x2x2xf32>
  return
}

// -----

// Tests that a grouped rhs has the op's heads over the groups.
func.func @batch_matmul_grouped_rhs_heads(%q: tensor<1x4x2x4xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op batch dimensions differ}}
  %0 = pd.batch_matmul %q, %q {rhs_groups = 2 : i64, transpose_rhs} : tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32> -> tensor<1x4x2x2xf32>
  return
}

// -----

// Tests that a grouped result has the op's heads over the groups.
func.func @batch_matmul_grouped_result_heads(%p: tensor<1x4x2x2xf32>, %q: tensor<1x4x2x4xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op batch dimensions differ}}
  %0 = pd.batch_matmul %p, %q {result_groups = 2 : i64} : tensor<1x4x2x2xf32>, tensor<1x4x2x4xf32> -> tensor<1x4x2x4xf32>
  return
}

// -----

// Tests that rhs and result groups agree.
func.func @batch_matmul_groups_differ(%p: tensor<1x8x2x2xf32>, %v: tensor<1x2x2x4xf32>) {
  // expected-error @+1 {{'pd.batch_matmul' op rhs_groups and result_groups differ: 4 vs 2}}
  %0 = pd.batch_matmul %p, %v {rhs_groups = 4 : i64, result_groups = 2 : i64} : tensor<1x8x2x2xf32>, tensor<1x2x2x4xf32> -> tensor<1x4x2x4xf32>
  return
}
