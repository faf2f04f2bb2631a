// RUN: pd-opt %s --split-input-file --allow-unregistered-dialect --pd-recompute-forward=stages=0 --verify-diagnostics
// RUN: not pd-opt %s --split-input-file --allow-unregistered-dialect --pd-recompute-forward=stages=3 2>&1 | FileCheck %s --check-prefix=STAGE

// Tests that an op with side effects on the way to a stashed value cannot
// be recomputed: rerunning it in the backward would repeat the effect.

func.func @stage0_forward() -> tensor<4x8xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x8xf32>
  // expected-error @+1 {{'test.effect' op cannot be recomputed in the backward of stage 0: it has side effects}}
  %e = "test.effect"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = pd.relu %e : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
func.func @stage0_backward(%r: tensor<4x8xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %d = pd.relu_grad %r, %r : tensor<4x8xf32>
  return
}

// -----

// A stage the module does not have.
// STAGE: error: pd-recompute-forward: the module has no stage 3 (run pd-outline-stages first)
func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  return
}
func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  return
}
