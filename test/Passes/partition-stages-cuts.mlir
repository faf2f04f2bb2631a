// RUN: pd-opt %s --split-input-file --pd-partition-stages="num-stages=3 cuts=4,7" | FileCheck %s
// RUN: pd-opt %s --split-input-file --pd-partition-stages="num-stages=2 cuts=2" | FileCheck %s --check-prefix=TWO
// RUN: not pd-opt %s --split-input-file --pd-partition-stages="num-stages=3 cuts=4" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not pd-opt %s --split-input-file --pd-partition-stages="num-stages=2 cuts=3" 2>&1 | FileCheck %s --check-prefix=SOURCE
// RUN: not pd-opt %s --split-input-file --pd-partition-stages="num-stages=3 cuts=7,4" 2>&1 | FileCheck %s --check-prefix=ORDER

// Tests the planner's split given as `cuts`: the pd.op_id of the compute op
// starting each stage after the first. Gradient ops follow the op they
// differentiate, parameter reads their users, whatever the FLOPs say.

pd.param @w1 {onnx_name = "w1"} : tensor<256x64xf32>
pd.param @w2 {onnx_name = "w2"} : tensor<16x256xf32>
pd.param @w3 {onnx_name = "w3"} : tensor<10x16xf32>
func.func @main(%x: tensor<8x64xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %w1 = pd.param_ref @w1 {pd.op_id = 0 : i64} : tensor<256x64xf32>
  %h = pd.matmul %x, %w1 {pd.op_id = 1 : i64, transpose_rhs} : tensor<8x64xf32>, tensor<256x64xf32> -> tensor<8x256xf32>
  %r = pd.relu %h {pd.op_id = 2 : i64} : tensor<8x256xf32>
  %w2 = pd.param_ref @w2 {pd.op_id = 3 : i64} : tensor<16x256xf32>
  %z = pd.matmul %r, %w2 {pd.op_id = 4 : i64, transpose_rhs} : tensor<8x256xf32>, tensor<16x256xf32> -> tensor<8x16xf32>
  %r2 = pd.relu %z {pd.op_id = 5 : i64} : tensor<8x16xf32>
  %w3 = pd.param_ref @w3 {pd.op_id = 6 : i64} : tensor<10x16xf32>
  %o = pd.matmul %r2, %w3 {pd.op_id = 7 : i64, transpose_rhs} : tensor<8x16xf32>, tensor<10x16xf32> -> tensor<8x10xf32>
  %l = pd.softmax_cross_entropy %o, %y {pd.op_id = 8 : i64} : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  %seed = pd.grad_seed {pd.grad_of = 8 : i64} : tensor<f32>
  %do = pd.softmax_cross_entropy_grad %seed, %o, %y {pd.grad_of = 8 : i64} : tensor<f32>, tensor<8x10xf32>, tensor<8xi64> -> tensor<8x10xf32>
  %dr2 = pd.matmul %do, %w3 {pd.grad_of = 7 : i64} : tensor<8x10xf32>, tensor<10x16xf32> -> tensor<8x16xf32>
  %dw3 = pd.matmul %do, %r2 {pd.grad_of = 7 : i64, transpose_lhs} : tensor<8x10xf32>, tensor<8x16xf32> -> tensor<10x16xf32>
  pd.accumulate_grad @w3, %dw3 {pd.grad_of = 6 : i64} : tensor<10x16xf32>
  %dz = pd.relu_grad %dr2, %r2 {pd.grad_of = 5 : i64} : tensor<8x16xf32>
  %dr = pd.matmul %dz, %w2 {pd.grad_of = 4 : i64} : tensor<8x16xf32>, tensor<16x256xf32> -> tensor<8x256xf32>
  %dw2 = pd.matmul %dz, %r {pd.grad_of = 4 : i64, transpose_lhs} : tensor<8x16xf32>, tensor<8x256xf32> -> tensor<16x256xf32>
  pd.accumulate_grad @w2, %dw2 {pd.grad_of = 3 : i64} : tensor<16x256xf32>
  %dh = pd.relu_grad %dr, %r {pd.grad_of = 2 : i64} : tensor<8x256xf32>
  %dw1 = pd.matmul %dh, %x {pd.grad_of = 1 : i64, transpose_lhs} : tensor<8x256xf32>, tensor<8x64xf32> -> tensor<256x64xf32>
  pd.accumulate_grad @w1, %dw1 {pd.grad_of = 0 : i64} : tensor<256x64xf32>
  return %l : tensor<f32>
}

// CHECK:       module attributes {pd.num_stages = 3 : i64}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    pd.param_ref @w1 {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// CHECK-NEXT:    pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.relu {{.*}}pd.op_id = 2 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.param_ref @w2 {pd.op_id = 3 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    pd.matmul {{.*}}pd.op_id = 4 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.relu {{.*}}pd.op_id = 5 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.param_ref @w3 {pd.op_id = 6 : i64, pd.stage = 2 : i64}
// CHECK-NEXT:    pd.matmul {{.*}}pd.op_id = 7 : i64, pd.stage = 2 : i64
// CHECK-NEXT:    pd.softmax_cross_entropy {{.*}}pd.op_id = 8 : i64, pd.stage = 2 : i64
// CHECK-NEXT:    pd.grad_seed {pd.grad_of = 8 : i64, pd.stage = 2 : i64}
// CHECK-NEXT:    pd.softmax_cross_entropy_grad {{.*}}pd.stage = 2 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 7 : i64, pd.stage = 2 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 7 : i64, pd.stage = 2 : i64
// CHECK-NEXT:    pd.accumulate_grad @w3, {{.*}}pd.stage = 2 : i64
// CHECK-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 5 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 4 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 4 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.accumulate_grad @w2, {{.*}}pd.stage = 1 : i64
// CHECK-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 2 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 1 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.accumulate_grad @w1, {{.*}}pd.stage = 0 : i64

// The FLOP balance would put the first matmul alone on stage 0; the cut
// after it moves the relu to stage 1.
// TWO:         pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
// TWO-NEXT:    pd.relu {{.*}}pd.op_id = 2 : i64, pd.stage = 1 : i64

// COUNT: error: pd-partition-stages: 1 cuts given for 3 stages (expected 2)
// A parameter read is not a compute op: it follows its users.
// SOURCE: error: pd-partition-stages: cut 3 is not the pd.op_id of a compute op after the previous cut
// ORDER: error: pd-partition-stages: cut 4 is not the pd.op_id of a compute op after the previous cut
