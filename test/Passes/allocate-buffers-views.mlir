// RUN: pd-opt %s --pd-allocate-buffers="schedule=flush optimizer=sgd" | FileCheck %s
// RUN: pd-opt %s --pd-allocate-buffers="schedule=flush optimizer=sgd" --pd-lower-to-runtime | FileCheck %s --check-prefix=LLVM

// Tests that a reshape costs no memory and no copy: its result is a view
// (pd.view) of its input's buffer - the input's workspace slot, kept live
// for the view's uses too, or the weight, stash slot or comm buffer the
// input has. A stashed reshape puts the value it views in the stash slot
// (its producer writes there, the backward reads the slot). Only a
// reshape of a constant (not in the arena) is copied.

module attributes {pd.num_stages = 1 : i64} {
pd.param @w {onnx_name = "w"} : tensor<4x4xf32>
func.func @stage0_forward() -> (tensor<16xf32>, tensor<2x8xf32>) attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<2x8xf32>
  %a = pd.relu %x : tensor<2x8xf32>
  %av = pd.reshape %a : tensor<2x8xf32> -> tensor<4x4xf32>
  %b = pd.relu %av : tensor<4x4xf32>
  %w = pd.param_ref @w : tensor<4x4xf32>
  %wv = pd.reshape %w : tensor<4x4xf32> -> tensor<16xf32>
  %c = pd.relu %wv : tensor<16xf32>
  %bs = pd.reshape %b : tensor<4x4xf32> -> tensor<16xf32>
  %k = pd.constant dense<1.0> : tensor<2x2xf32>
  %kv = pd.reshape %k : tensor<2x2xf32> -> tensor<4xf32>
  %d = pd.relu %kv : tensor<4xf32>
  return %bs, %x : tensor<16xf32>, tensor<2x8xf32>
}
func.func @stage0_backward(%bs: tensor<16xf32>, %x: tensor<2x8xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %xv = pd.reshape %x : tensor<2x8xf32> -> tensor<16xf32>
  %e = pd.add %xv, %bs : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return
}
}

// The view of a workspace value takes its slot; the second relu's result
// is returned through a reshape, so it is written into the stash slot.
// CHECK-LABEL: func.func @stage0_forward
// CHECK:       %[[A:.+]] = pd.relu %{{.+}} {pd.buffer = #pd.buffer<workspace, [[SLOT:[0-9]+]]>}
// CHECK-NEXT:  %[[AV:.+]] = pd.reshape %[[A]] {pd.buffer = #pd.buffer<workspace, [[SLOT]]>, pd.view}
// CHECK-NEXT:  %[[B:.+]] = pd.relu %[[AV]] {pd.buffer = #pd.buffer<stash, 0>}
// A weight's view is the weight.
// CHECK-NEXT:  pd.param_ref @w {pd.buffer = #pd.buffer<weights, 0>}
// CHECK-NEXT:  pd.reshape %{{.+}} {pd.buffer = #pd.buffer<weights, 0>, pd.view}
// CHECK-NEXT:  pd.relu
// The stashed reshape is a view of the stash slot.
// CHECK-NEXT:  pd.reshape %[[B]] {pd.buffer = #pd.buffer<stash, 0>, pd.view} :
// A constant's reshape is a copy into the workspace.
// CHECK-NEXT:  pd.constant
// CHECK-NEXT:  pd.reshape %{{.+}} {pd.buffer = #pd.buffer<workspace, {{[0-9]+}}>} :
// The backward's argument is the same slot.
// CHECK-LABEL: func.func @stage0_backward
// CHECK-SAME:  %arg0: tensor<16xf32> {pd.buffer = #pd.buffer<stash, 0>}
// A stashed argument's view is its stash slot.
// CHECK-NEXT:  pd.reshape %arg1 {pd.buffer = #pd.buffer<stash, 64>, pd.view}

// Views lower to nothing; the constant's reshape folds to a constant when
// lowered: no copy in either function.
// LLVM-LABEL: llvm.func @pd_stage_forward
// LLVM-NOT:    llvm.call @pdrt_copy
// LLVM-LABEL: llvm.func @pd_stage_backward
// LLVM-NOT:    llvm.call @pdrt_copy
