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
