// RUN: pd-opt %s --split-input-file --pd-outline-stages --verify-diagnostics

// Tests that outlining needs a partitioned function.
// expected-error @+1 {{pd-outline-stages: expected a partitioned @main and pd.num_stages; run pd-partition-stages first}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that an op without a stage is reported.
module attributes {pd.num_stages = 1 : i64} {
  func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
    // expected-error @+1 {{pd-outline-stages: op has no pd.stage; run pd-partition-stages first}}
    %0 = pd.grad_seed : tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Tests that a forward op cannot read a gradient from another stage.
module attributes {pd.num_stages = 2 : i64} {
  func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
    %0 = pd.grad_seed {pd.grad_of = 0 : i64, pd.stage = 1 : i64} : tensor<f32>
    // expected-error @+1 {{pd-outline-stages: a forward op on stage 0 uses a gradient computed on stage 1}}
    %1 = pd.scale %0, 2.0 {pd.op_id = 0 : i64, pd.stage = 0 : i64} : tensor<f32>
    return %1 : tensor<f32>
  }
}
