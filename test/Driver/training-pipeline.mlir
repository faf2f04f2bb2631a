// RUN: pd-opt %s --pd-training-pipeline="num-stages=2 schedule=gpipe microbatches=3 optimizer=momentum" --test-pd-print-buffer-assignment -o /dev/null | FileCheck %s

// Tests that pd-training-pipeline runs autodiff, partitioning, outlining
// and buffer allocation in order with its options, as pdc does.

pd.param @w1 {onnx_name = "w1"} : tensor<16x8xf32>
pd.param @w2 {onnx_name = "w2"} : tensor<10x16xf32>
func.func @main(%x: tensor<4x8xf32> {pd.input_name = "x"}, %y: tensor<4xi64> {pd.input_name = "y"}) -> tensor<f32> {
  %w1 = pd.param_ref @w1 : tensor<16x8xf32>
  %h = pd.matmul %x, %w1 {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %r = pd.relu %h : tensor<4x16xf32>
  %w2 = pd.param_ref @w2 : tensor<10x16xf32>
  %z = pd.matmul %r, %w2 {transpose_rhs} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: stage = 0, func = forward, value = pd.input
// CHECK: stage = 1, func = backward
// GPipe keeps m = 3 stash slots and one weight version; momentum one state.
// CHECK: stage = 0, weights = 512 x 1, grads = 512, optimizer = 512, stash = {{[0-9]+}} x 3
// CHECK: stage = 1, weights = 640 x 1, grads = 640, optimizer = 640, stash = {{[0-9]+}} x 3
