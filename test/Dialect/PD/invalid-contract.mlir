// RUN: pd-opt %s --split-input-file --verify-diagnostics

// Tests that the pass-to-pass contract (the discardable pd.* attributes
// declared in PDOps.td) is verified: a stale attribute no pass writes any
// more is rejected.
// expected-error @+1 {{unknown pd attribute 'pd.weight_offset' (the pass contract is declared in PDOps.td)}}
pd.param @w {onnx_name = "w", pd.weight_offset = 0 : i64} : tensor<4xf32>

// -----

// Tests that a stage must be a non-negative integer.
func.func @stage_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pd.stage' must be a non-negative integer, got "0"}}
  %0 = pd.relu %x {pd.stage = "0"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a missing stage count (zero) is rejected on the module.
// expected-error @+1 {{'pd.num_stages' must be a positive integer, got 0 : i64}}
module attributes {pd.num_stages = 0 : i64} {}

// -----

// Tests that a stage function's phase is forward or backward.
// expected-error @+1 {{'pd.phase' must be a #pd.phase, got "sideways"}}
func.func @stage0_forward() attributes {pd.phase = "sideways", pd.stage = 0 : i64} {
  return
}

// -----

// Tests that a buffer assignment on an argument must be a #pd.buffer.
// expected-error @+1 {{'pd.buffer' must be a #pd.buffer, got 256 : i64}}
func.func @arg_buffer(%x: tensor<4xf32> {pd.buffer = 256 : i64}) {
  return
}

// -----

// Tests that multi-result buffer lists hold buffers (or unit).
func.func @buffers(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pd.buffers' must be an array of #pd.buffer (unit for a result without one), got [1]}}
  pd.relu %x {pd.buffers = [1]} : tensor<4xf32>
  return
}

// -----

// Tests that a buffer names one of the arena's regions.
func.func @region(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mlir::pd::ArenaRegion to be one of: weights, grads, stash, workspace, comm, state}}
  // expected-error @+1 {{failed to parse PD_BufferAttr parameter 'region'}}
  %0 = pd.relu %x {pd.buffer = #pd.buffer<scratch, 0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
