// RUN: pd-opt %s --pd-insert-profile-marks | FileCheck %s
// RUN: pd-opt %s --pd-insert-profile-marks --pd-allocate-buffers --pd-lower-to-runtime | FileCheck %s --check-prefix=LLVM
// RUN: pd-opt %s --pd-insert-profile-marks=every-op | FileCheck %s --check-prefix=EVERY

// Tests that a profiling stage times its costed ops: a pd.profile_mark with
// the op's pd.profile_id before each, one with -1 before each stage
// function's return, the ids removed; ops without a cost (a parameter
// read, the gradient's accumulation) are timed with the op before them,
// and functions that are not stage functions are left alone.
// With every-op (pdc --instrument-ops) every op that does work is marked,
// numbered over the module in order, whatever its pd.profile_id; views,
// parameter reads and constants are not.

module attributes {pd.num_stages = 1 : i64} {
pd.param @w {onnx_name = "w"} : tensor<16x8xf32>
func.func @stage0_forward() -> tensor<4x16xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x16xf32>
  %w = pd.param_ref @w {pd.profile_id = 0 : i64} : tensor<16x8xf32>
  %y = pd.matmul %x, %w {pd.profile_id = 1 : i64} : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %r = pd.relu %y {pd.profile_id = 2 : i64} : tensor<4x8xf32>
  %v = pd.reshape %r {pd.view} : tensor<4x8xf32> -> tensor<32xf32>
  %c = pd.constant dense<1.0> : tensor<32xf32>
  %s = pd.add %v, %c : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  return %x : tensor<4x16xf32>
}
func.func @stage0_backward(%x: tensor<4x16xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dy = pd.input 1 "dy" : tensor<4x8xf32>
  %dw = pd.matmul %x, %dy {transpose_lhs, pd.profile_id = 5 : i64} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %dw {pd.profile_id = 6 : i64} : tensor<16x8xf32>
  return
}
func.func @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = pd.relu %a {pd.profile_id = 9 : i64} : tensor<4xf32>
  return %b : tensor<4xf32>
}
}

// CHECK-LABEL: func.func @stage0_forward
// CHECK-NEXT:    pd.input 0 "x"
// CHECK-NEXT:    pd.param_ref @w :
// CHECK-NEXT:    pd.profile_mark 1
// CHECK-NEXT:    pd.matmul
// CHECK-NEXT:    pd.profile_mark 2
// CHECK-NEXT:    pd.relu %{{.+}} :
// CHECK-NEXT:    pd.reshape
// CHECK-NEXT:    pd.constant
// CHECK-NEXT:    pd.add
// CHECK-NEXT:    pd.profile_mark -1
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @stage0_backward
// CHECK-NEXT:    pd.input 1 "dy"
// CHECK-NEXT:    pd.profile_mark 5
// CHECK-NEXT:    pd.matmul %{{.+}}, %{{.+}} {transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w, %{{.+}} :
// CHECK-NEXT:    pd.profile_mark -1
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @helper
// CHECK-NEXT:    pd.relu %{{.+}} {pd.profile_id = 9 : i64}
// CHECK-NEXT:    return

// Each mark is a call of the runtime with the op's id.
// LLVM-LABEL: llvm.func @pd_stage_forward
// LLVM:         llvm.call @pdrt_profile_mark(%{{.+}}, %{{.+}}) : (!llvm.ptr, i64) -> ()

// EVERY-LABEL: func.func @stage0_forward
// EVERY-NEXT:    pd.profile_mark 0
// EVERY-NEXT:    pd.input 0 "x"
// EVERY-NEXT:    pd.param_ref @w
// EVERY-NEXT:    pd.profile_mark 1
// EVERY-NEXT:    pd.matmul
// EVERY-NEXT:    pd.profile_mark 2
// EVERY-NEXT:    pd.relu
// EVERY-NEXT:    pd.reshape
// EVERY-NEXT:    pd.constant
// EVERY-NEXT:    pd.profile_mark 3
// EVERY-NEXT:    pd.add
// EVERY-NEXT:    pd.profile_mark -1
// EVERY-NEXT:    return
// EVERY-LABEL: func.func @stage0_backward
// EVERY-NEXT:    pd.profile_mark 4
// EVERY-NEXT:    pd.input 1 "dy"
// EVERY-NEXT:    pd.profile_mark 5
// EVERY-NEXT:    pd.matmul
// EVERY-NEXT:    pd.profile_mark 6
// EVERY-NEXT:    pd.accumulate_grad
// EVERY-NEXT:    pd.profile_mark -1
// EVERY-NEXT:    return
// EVERY-LABEL: func.func @helper
// EVERY-NEXT:    pd.relu
// EVERY-NEXT:    return
