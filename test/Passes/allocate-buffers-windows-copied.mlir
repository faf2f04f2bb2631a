// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s

// Tests the slices that stay copies: windows that are not one contiguous
// run of their input (columns, a step of 2, rows reversed), and a stashed
// window of a value another op reads too (homing that whole value in the
// stash slot would stash more than the window). A window of extent 1
// before its run (rows 1-3 of the second [4, 4] matrix of a [2, 4, 4] tensor: 80 bytes
// in) is a view.

module attributes {pd.num_stages = 1 : i64} {
func.func @stage0_forward() -> tensor<3x4xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<8x4xf32>
  %h = pd.relu %x : tensor<8x4xf32>
  %top = pd.slice %h {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<3x4xf32>
  %s = pd.reduce_sum %h {axes = array<i64: 0, 1>} : tensor<8x4xf32> -> tensor<f32>
  pd.report_loss %s : tensor<f32>
  return %top : tensor<3x4xf32>
}
func.func @stage0_backward(%top: tensor<3x4xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<8x4xf32>
  %cols = pd.slice %x {starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<8x2xf32>
  %even = pd.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : tensor<8x4xf32> -> tensor<4x4xf32>
  %back = pd.slice %x {starts = array<i64: 7, 0>, steps = array<i64: -1, 1>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %y = pd.reshape %x : tensor<8x4xf32> -> tensor<2x4x4xf32>
  %row = pd.slice %y {starts = array<i64: 1, 1, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x4x4xf32> -> tensor<1x3x4xf32>
  %a = pd.reduce_sum %cols {axes = array<i64: 0, 1>} : tensor<8x2xf32> -> tensor<f32>
  %b = pd.reduce_sum %even {axes = array<i64: 0, 1>} : tensor<4x4xf32> -> tensor<f32>
  %c = pd.reduce_sum %back {axes = array<i64: 0, 1>} : tensor<8x4xf32> -> tensor<f32>
  %d = pd.reduce_sum %row {axes = array<i64: 0, 1, 2>} : tensor<1x3x4xf32> -> tensor<f32>
  %ab = pd.add %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %cd = pd.add %c, %d : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = pd.add %ab, %cd : tensor<f32>, tensor<f32> -> tensor<f32>
  pd.report_loss %l : tensor<f32>
  return
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK:      pd.relu {{.+}} {pd.buffer = #pd.buffer<workspace,
// CHECK-NEXT: pd.slice {{.+}} {pd.buffer = #pd.buffer<stash, 0>, starts
// CHECK-LABEL: func.func @stage0_backward
// CHECK:      %[[X:.+]] = pd.input 0 "x" {pd.buffer = #pd.buffer<workspace, 0>}
// CHECK-NEXT: pd.slice %[[X]] {pd.buffer = #pd.buffer<workspace, {{[0-9]+}}>, starts
// CHECK-NEXT: pd.slice %[[X]] {pd.buffer = #pd.buffer<workspace, {{[0-9]+}}>, starts
// CHECK-NEXT: pd.slice %[[X]] {pd.buffer = #pd.buffer<workspace, {{[0-9]+}}>, starts
// CHECK-NEXT: pd.reshape %[[X]] {pd.buffer = #pd.buffer<workspace, 0>, pd.view}
// CHECK-NEXT: pd.slice {{.+}} {pd.buffer = #pd.buffer<workspace, 80>, pd.view, starts
