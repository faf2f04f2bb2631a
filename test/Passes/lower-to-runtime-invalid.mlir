// RUN: pd-opt %s --split-input-file --pd-lower-to-runtime=stage=0 --verify-diagnostics

// Tests that lowering needs buffer assignments.
module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    // expected-error @+1 {{pd-lower-to-runtime: result has no buffer}}
    %0 = pd.input 0 "x" : tensor<4xf32>
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    return
  }
}

// -----

// Tests that a missing stage is reported.
// expected-error @+1 {{pd-lower-to-runtime: no functions of stage 0}}
module attributes {pd.num_stages = 1 : i64} {
}
