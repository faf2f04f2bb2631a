// RUN: pd-opt %s --pd-allocate-buffers="schedule=pipedream" --verify-diagnostics

// Tests that an unknown schedule is refused.
// expected-error @+1 {{pd-allocate-buffers: expects outlined stages, a schedule of 2bw|flush|gpipe and an optimizer of sgd|momentum|adam|adamw}}
module attributes {pd.num_stages = 1 : i64} {
}
