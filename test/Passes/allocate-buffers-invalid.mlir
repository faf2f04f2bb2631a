// RUN: not pd-opt %s --pd-allocate-buffers="schedule=pipedream" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: pd-opt %s --split-input-file --pd-allocate-buffers --verify-diagnostics

// Tests that an unknown schedule is refused by the option parser (the
// choices are the #pd.schedule enum's).
// SCHEDULE: Cannot find option named 'pipedream'

// Tests that the pass needs outlined stages.
// expected-error @+1 {{pd-allocate-buffers: expects outlined stages (pd.num_stages on the module)}}
module {
}

// -----

// Tests that every stage the module declares needs its two functions.
// expected-error @+1 {{pd-allocate-buffers: missing functions of stage 1}}
module attributes {pd.num_stages = 2 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    return
  }
}

// -----

// Tests that an in-place concat needs each input written by a GEMM marked
// as that part: the lowering would leave the result unwritten.
module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %a = pd.input 0 "a" : tensor<2x4x8xf32>
    %b = pd.input 1 "b" : tensor<2x8x4xf32>
    %0 = pd.batch_matmul %a, %b {pd.concat_part = array<i64: 0, 0, 2>} : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
    %1 = pd.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
    // expected-error @+1 {{'pd.concat' op has pd.in_place_parts but input 1 is not the result of a pd.batch_matmul with pd.concat_part = [0, 1, 2] read only by it}}
    %c = pd.concat %0, %1 {axis = 0 : i64, pd.in_place_parts} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
    return
  }
}

// -----

// Tests that a GEMM marked as a concat's part needs that concat: it would
// write past its own buffer.
module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %a = pd.input 0 "a" : tensor<2x4x8xf32>
    %b = pd.input 1 "b" : tensor<2x8x4xf32>
    // expected-error @+1 {{'pd.batch_matmul' op has pd.concat_part but no pd.in_place_parts concat joins its result}}
    %0 = pd.batch_matmul %a, %b {pd.concat_part = array<i64: 0, 1, 2>} : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
    %r = pd.relu %0 : tensor<2x4x4xf32>
    return
  }
}

// -----

// Tests that an in-place concat of contiguous inputs needs each input
// computed in place by an op of its function that only the concat reads:
// an input read elsewhere too would be overwritten by its neighbour's
// producer or read from a buffer its own writer never filled.
module attributes {pd.num_stages = 1 : i64} {
  func.func @stage0_forward() attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
    return
  }
  func.func @stage0_backward() attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
    %a = pd.input 0 "a" : tensor<3x4xf32>
    %b = pd.input 1 "b" : tensor<5x4xf32>
    %r = pd.relu %b : tensor<5x4xf32>
    // expected-error @+1 {{'pd.concat' op has pd.in_place_parts but input 0 is not computed in place by an op of this function read only by it}}
    %c = pd.concat %a, %r {axis = 0 : i64, pd.in_place_parts} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<8x4xf32>
    %s = pd.reduce_sum %a {axes = array<i64: 0, 1>} : tensor<3x4xf32> -> tensor<f32>
    return
  }
}
