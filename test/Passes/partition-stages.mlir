// RUN: pd-opt %s --split-input-file --pd-partition-stages=num-stages=2 | FileCheck %s
// RUN: pd-opt %s --split-input-file --pd-partition-stages=num-stages=3 | FileCheck %s --check-prefix=THREE

// The input of each case is the training function as pd-autodiff leaves it:
// forward ops numbered by pd.op_id, gradient ops tagged with the pd.grad_of
// of the forward op they differentiate.

// Tests that stages balance forward+backward FLOPs: the first matmul
// (fwd 262144 + weight grad 262144 FLOPs) outweighs the rest of the model,
// so with two stages it is alone on stage 0; gradient ops follow the op they
// differentiate, parameter reads and gradient accumulation their users.
// With three stages the bottleneck is still the first matmul; the last
// stage must not be empty and gets the loss.
pd.param @w1 {onnx_name = "w1"} : tensor<256x64xf32>
pd.param @w2 {onnx_name = "w2"} : tensor<16x256xf32>
pd.param @w3 {onnx_name = "w3"} : tensor<10x16xf32>
func.func @main(%x: tensor<8x64xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %w1 = pd.param_ref @w1 {pd.op_id = 0 : i64} : tensor<256x64xf32>
  %h1 = pd.matmul %x, %w1 {pd.op_id = 1 : i64, transpose_rhs} : tensor<8x64xf32>, tensor<256x64xf32> -> tensor<8x256xf32>
  %r1 = pd.relu %h1 {pd.op_id = 2 : i64} : tensor<8x256xf32>
  %w2 = pd.param_ref @w2 {pd.op_id = 3 : i64} : tensor<16x256xf32>
  %h2 = pd.matmul %r1, %w2 {pd.op_id = 4 : i64, transpose_rhs} : tensor<8x256xf32>, tensor<16x256xf32> -> tensor<8x16xf32>
  %r2 = pd.relu %h2 {pd.op_id = 5 : i64} : tensor<8x16xf32>
  %w3 = pd.param_ref @w3 {pd.op_id = 6 : i64} : tensor<10x16xf32>
  %z = pd.matmul %r2, %w3 {pd.op_id = 7 : i64, transpose_rhs} : tensor<8x16xf32>, tensor<10x16xf32> -> tensor<8x10xf32>
  %l = pd.softmax_cross_entropy %z, %y {pd.op_id = 8 : i64} : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  %seed = pd.grad_seed {pd.grad_of = 8 : i64} : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %seed, %z, %y {pd.grad_of = 8 : i64} : tensor<f32>, tensor<8x10xf32>, tensor<8xi64> -> tensor<8x10xf32>
  %dr2 = pd.matmul %dz, %w3 {pd.grad_of = 7 : i64} : tensor<8x10xf32>, tensor<10x16xf32> -> tensor<8x16xf32>
  %dw3 = pd.matmul %dz, %r2 {pd.grad_of = 7 : i64, transpose_lhs} : tensor<8x10xf32>, tensor<8x16xf32> -> tensor<10x16xf32>
  pd.accumulate_grad @w3, %dw3 {pd.grad_of = 6 : i64} : tensor<10x16xf32>
  %dh2 = pd.relu_grad %dr2, %r2 {pd.grad_of = 5 : i64} : tensor<8x16xf32>
  %dr1 = pd.matmul %dh2, %w2 {pd.grad_of = 4 : i64} : tensor<8x16xf32>, tensor<16x256xf32> -> tensor<8x256xf32>
  %dw2 = pd.matmul %dh2, %r1 {pd.grad_of = 4 : i64, transpose_lhs} : tensor<8x16xf32>, tensor<8x256xf32> -> tensor<16x256xf32>
  pd.accumulate_grad @w2, %dw2 {pd.grad_of = 3 : i64} : tensor<16x256xf32>
  %dh1 = pd.relu_grad %dr1, %r1 {pd.grad_of = 2 : i64} : tensor<8x256xf32>
  %dw1 = pd.matmul %dh1, %x {pd.grad_of = 1 : i64, transpose_lhs} : tensor<8x256xf32>, tensor<8x64xf32> -> tensor<256x64xf32>
  pd.accumulate_grad @w1, %dw1 {pd.grad_of = 0 : i64} : tensor<256x64xf32>
  return %l : tensor<f32>
}

// The pass only adds pd.stage (and pd.num_stages on the module): the ops,
// their order and their operands stay as they were.
// CHECK-LABEL: module attributes {pd.num_stages = 2 : i64}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<8x64xf32>, %[[Y:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT:    %[[W1:.+]] = pd.param_ref @w1 {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// CHECK-NEXT:    %[[H1:.+]] = pd.matmul %[[X]], %[[W1]] {pd.op_id = 1 : i64, pd.stage = 0 : i64, transpose_rhs}
// CHECK-NEXT:    %[[R1:.+]] = pd.relu %[[H1]] {pd.op_id = 2 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[W2:.+]] = pd.param_ref @w2 {pd.op_id = 3 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[H2:.+]] = pd.matmul %[[R1]], %[[W2]] {pd.op_id = 4 : i64, pd.stage = 1 : i64, transpose_rhs}
// CHECK-NEXT:    %[[R2:.+]] = pd.relu %[[H2]] {pd.op_id = 5 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[W3:.+]] = pd.param_ref @w3 {pd.op_id = 6 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[Z:.+]] = pd.matmul %[[R2]], %[[W3]] {pd.op_id = 7 : i64, pd.stage = 1 : i64, transpose_rhs}
// CHECK-NEXT:    %[[L:.+]] = pd.softmax_cross_entropy %[[Z]], %[[Y]] {pd.op_id = 8 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[SEED:.+]] = pd.grad_seed {pd.grad_of = 8 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[DZ:.+]] = pd.softmax_cross_entropy_grad %[[SEED]], %[[Z]], %[[Y]] {pd.grad_of = 8 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[DR2:.+]] = pd.matmul %[[DZ]], %[[W3]] {pd.grad_of = 7 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[DW3:.+]] = pd.matmul %[[DZ]], %[[R2]] {pd.grad_of = 7 : i64, pd.stage = 1 : i64, transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w3, %[[DW3]] {pd.grad_of = 6 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[DH2:.+]] = pd.relu_grad %[[DR2]], %[[R2]] {pd.grad_of = 5 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[DR1:.+]] = pd.matmul %[[DH2]], %[[W2]] {pd.grad_of = 4 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[DW2:.+]] = pd.matmul %[[DH2]], %[[R1]] {pd.grad_of = 4 : i64, pd.stage = 1 : i64, transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w2, %[[DW2]] {pd.grad_of = 3 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[DH1:.+]] = pd.relu_grad %[[DR1]], %[[R1]] {pd.grad_of = 2 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    %[[DW1:.+]] = pd.matmul %[[DH1]], %[[X]] {pd.grad_of = 1 : i64, pd.stage = 0 : i64, transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w1, %[[DW1]] {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
// CHECK-NEXT:    return %[[L]]

// THREE-LABEL: module attributes {pd.num_stages = 3 : i64}
// THREE-LABEL: func.func @main
// THREE-NEXT:    pd.param_ref @w1 {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// THREE-NEXT:    pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
// THREE-NEXT:    pd.relu {{.*}}pd.op_id = 2 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.param_ref @w2 {pd.op_id = 3 : i64, pd.stage = 1 : i64}
// THREE-NEXT:    pd.matmul {{.*}}pd.op_id = 4 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.relu {{.*}}pd.op_id = 5 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.param_ref @w3 {pd.op_id = 6 : i64, pd.stage = 1 : i64}
// THREE-NEXT:    pd.matmul {{.*}}pd.op_id = 7 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.softmax_cross_entropy {{.*}}pd.op_id = 8 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.grad_seed {pd.grad_of = 8 : i64, pd.stage = 2 : i64}
// THREE-NEXT:    pd.softmax_cross_entropy_grad {{.*}}pd.grad_of = 8 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 7 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 7 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.accumulate_grad @w3, {{.*}}pd.grad_of = 6 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 5 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 4 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 4 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.accumulate_grad @w2, {{.*}}pd.grad_of = 3 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 2 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 1 : i64, pd.stage = 0 : i64
// THREE-NEXT:    pd.accumulate_grad @w1, {{.*}}pd.grad_of = 0 : i64, pd.stage = 0 : i64
// THREE-NEXT:    return

// -----

// Tests that every stage gets at least one op when costs are very uneven.
pd.param @w {onnx_name = "w"} : tensor<512x512xf32>
func.func @main(%x: tensor<8x512xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %w = pd.param_ref @w {pd.op_id = 0 : i64} : tensor<512x512xf32>
  %h = pd.matmul %x, %w {pd.op_id = 1 : i64} : tensor<8x512xf32>, tensor<512x512xf32> -> tensor<8x512xf32>
  %r = pd.relu %h {pd.op_id = 2 : i64} : tensor<8x512xf32>
  %l = pd.softmax_cross_entropy %r, %y {pd.op_id = 3 : i64} : tensor<8x512xf32>, tensor<8xi64> -> tensor<f32>
  %seed = pd.grad_seed {pd.grad_of = 3 : i64} : tensor<f32>
  %dr = pd.softmax_cross_entropy_grad %seed, %r, %y {pd.grad_of = 3 : i64} : tensor<f32>, tensor<8x512xf32>, tensor<8xi64> -> tensor<8x512xf32>
  %dh = pd.relu_grad %dr, %r {pd.grad_of = 2 : i64} : tensor<8x512xf32>
  %dw = pd.matmul %x, %dh {pd.grad_of = 1 : i64, transpose_lhs} : tensor<8x512xf32>, tensor<8x512xf32> -> tensor<512x512xf32>
  pd.accumulate_grad @w, %dw {pd.grad_of = 0 : i64} : tensor<512x512xf32>
  return %l : tensor<f32>
}

// CHECK-LABEL: module attributes {pd.num_stages = 2 : i64}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    pd.param_ref @w {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// CHECK-NEXT:    pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.relu {{.*}}pd.op_id = 2 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.softmax_cross_entropy {{.*}}pd.op_id = 3 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.grad_seed {pd.grad_of = 3 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    pd.softmax_cross_entropy_grad {{.*}}pd.grad_of = 3 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 2 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 1 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.accumulate_grad @w, {{.*}}pd.grad_of = 0 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    return

// THREE-LABEL: module attributes {pd.num_stages = 3 : i64}
// THREE-LABEL: func.func @main
// THREE-NEXT:    pd.param_ref @w {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// THREE-NEXT:    pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
// THREE-NEXT:    pd.relu {{.*}}pd.op_id = 2 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.softmax_cross_entropy {{.*}}pd.op_id = 3 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.grad_seed {pd.grad_of = 3 : i64, pd.stage = 2 : i64}
// THREE-NEXT:    pd.softmax_cross_entropy_grad {{.*}}pd.grad_of = 3 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 2 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 1 : i64, pd.stage = 0 : i64
// THREE-NEXT:    pd.accumulate_grad @w, {{.*}}pd.grad_of = 0 : i64, pd.stage = 0 : i64
// THREE-NEXT:    return

// -----

// Tests that a tied parameter is allowed: @w is read by the first matmul
// and again (through its own pd.param_ref) by the last one, which lands on
// the last stage; each read and its gradient accumulation follow their
// users, so both stages own a copy.
pd.param @w {onnx_name = "w"} : tensor<16x8xf32>
pd.param @v {onnx_name = "v"} : tensor<16x16xf32>
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %w = pd.param_ref @w {pd.op_id = 0 : i64} : tensor<16x8xf32>
  %h = pd.matmul %x, %w {pd.op_id = 1 : i64, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %r = pd.relu %h {pd.op_id = 2 : i64} : tensor<4x16xf32>
  %v = pd.param_ref @v {pd.op_id = 3 : i64} : tensor<16x16xf32>
  %h2 = pd.matmul %r, %v {pd.op_id = 4 : i64} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %r2 = pd.relu %h2 {pd.op_id = 5 : i64} : tensor<4x16xf32>
  %wt = pd.param_ref @w {pd.op_id = 6 : i64} : tensor<16x8xf32>
  %z = pd.matmul %r2, %wt {pd.op_id = 7 : i64} : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %l = pd.softmax_cross_entropy %z, %y {pd.op_id = 8 : i64} : tensor<4x8xf32>, tensor<4xi64> -> tensor<f32>
  %seed = pd.grad_seed {pd.grad_of = 8 : i64} : tensor<f32>
  %dz = pd.softmax_cross_entropy_grad %seed, %z, %y {pd.grad_of = 8 : i64} : tensor<f32>, tensor<4x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %dr2 = pd.matmul %dz, %wt {pd.grad_of = 7 : i64, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %dwt = pd.matmul %r2, %dz {pd.grad_of = 7 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %dwt {pd.grad_of = 6 : i64} : tensor<16x8xf32>
  %dh2 = pd.relu_grad %dr2, %r2 {pd.grad_of = 5 : i64} : tensor<4x16xf32>
  %dr = pd.matmul %dh2, %v {pd.grad_of = 4 : i64, transpose_rhs} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %dv = pd.matmul %r, %dh2 {pd.grad_of = 4 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<16x16xf32>
  pd.accumulate_grad @v, %dv {pd.grad_of = 3 : i64} : tensor<16x16xf32>
  %dh = pd.relu_grad %dr, %r {pd.grad_of = 2 : i64} : tensor<4x16xf32>
  %dw = pd.matmul %dh, %x {pd.grad_of = 1 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %dw {pd.grad_of = 0 : i64} : tensor<16x8xf32>
  return %l : tensor<f32>
}

// CHECK-LABEL: module attributes {pd.num_stages = 2 : i64}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    pd.param_ref @w {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// CHECK-NEXT:    pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.relu {{.*}}pd.op_id = 2 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.param_ref @v {pd.op_id = 3 : i64, pd.stage = 0 : i64}
// CHECK-NEXT:    pd.matmul {{.*}}pd.op_id = 4 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.relu {{.*}}pd.op_id = 5 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.param_ref @w {pd.op_id = 6 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    pd.matmul {{.*}}pd.op_id = 7 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.softmax_cross_entropy {{.*}}pd.op_id = 8 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.grad_seed {pd.grad_of = 8 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    pd.softmax_cross_entropy_grad {{.*}}pd.grad_of = 8 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 7 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 7 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 6 : i64, pd.stage = 1 : i64}
// CHECK-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 5 : i64, pd.stage = 1 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 4 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 4 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.accumulate_grad @v, %{{.+}} {pd.grad_of = 3 : i64, pd.stage = 0 : i64}
// CHECK-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 2 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.matmul {{.*}}pd.grad_of = 1 : i64, pd.stage = 0 : i64
// CHECK-NEXT:    pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
// CHECK-NEXT:    return

// THREE-LABEL: module attributes {pd.num_stages = 3 : i64}
// THREE-LABEL: func.func @main
// THREE-NEXT:    pd.param_ref @w {pd.op_id = 0 : i64, pd.stage = 0 : i64}
// THREE-NEXT:    pd.matmul {{.*}}pd.op_id = 1 : i64, pd.stage = 0 : i64
// THREE-NEXT:    pd.relu {{.*}}pd.op_id = 2 : i64, pd.stage = 0 : i64
// THREE-NEXT:    pd.param_ref @v {pd.op_id = 3 : i64, pd.stage = 1 : i64}
// THREE-NEXT:    pd.matmul {{.*}}pd.op_id = 4 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.relu {{.*}}pd.op_id = 5 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.param_ref @w {pd.op_id = 6 : i64, pd.stage = 2 : i64}
// THREE-NEXT:    pd.matmul {{.*}}pd.op_id = 7 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.softmax_cross_entropy {{.*}}pd.op_id = 8 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.grad_seed {pd.grad_of = 8 : i64, pd.stage = 2 : i64}
// THREE-NEXT:    pd.softmax_cross_entropy_grad {{.*}}pd.grad_of = 8 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 7 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 7 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 6 : i64, pd.stage = 2 : i64}
// THREE-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 5 : i64, pd.stage = 2 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 4 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 4 : i64, pd.stage = 1 : i64
// THREE-NEXT:    pd.accumulate_grad @v, %{{.+}} {pd.grad_of = 3 : i64, pd.stage = 1 : i64}
// THREE-NEXT:    pd.relu_grad {{.*}}pd.grad_of = 2 : i64, pd.stage = 0 : i64
// THREE-NEXT:    pd.matmul {{.*}}pd.grad_of = 1 : i64, pd.stage = 0 : i64
// THREE-NEXT:    pd.accumulate_grad @w, %{{.+}} {pd.grad_of = 0 : i64, pd.stage = 0 : i64}
// THREE-NEXT:    return
