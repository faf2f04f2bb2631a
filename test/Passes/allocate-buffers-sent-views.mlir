// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=sgd" | FileCheck %s
// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=sgd" --pd-lower-to-runtime="stage=0" | FileCheck %s --check-prefix=LLVM0
// RUN: pd-opt %s --pd-allocate-buffers="schedule=2bw optimizer=sgd" --pd-lower-to-runtime="stage=1" | FileCheck %s --check-prefix=LLVM

// Tests that a sent reshape is a view of the value it reshapes, written by
// its producer straight into the comm buffer (the GELU gradient the second
// stage of a GPT sends back was copied into it); the chain is followed
// through reshapes to a value the function computes. A sent reshape of a
// stashed value is sent from its stash slot (the large GPT's first stage
// copied its QKV projection out of it). A sent reshape of an argument
// (a stash slot the next forward may refill while the backward's send is
// in flight) stays a copy.

module attributes {pd.num_stages = 2 : i64} {
func.func @stage0_forward() -> tensor<4x16xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 0 : i64} {
  %x = pd.input 0 "x" : tensor<4x16xf32>
  %r = pd.relu %x : tensor<4x16xf32>
  %rv = pd.reshape %r : tensor<4x16xf32> -> tensor<64xf32>
  pd.send %rv to 1 channel 0 : tensor<64xf32>
  return %r : tensor<4x16xf32>
}
func.func @stage0_backward(%r: tensor<4x16xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %d = pd.recv from 1 channel 1 : tensor<2x32xf32>
  %e = pd.recv from 1 channel 2 : tensor<8x8xf32>
  return
}
func.func @stage1_forward() -> tensor<64xf32> attributes {pd.phase = #pd.phase<forward>, pd.stage = 1 : i64} {
  %a = pd.recv from 0 channel 0 : tensor<64xf32>
  %y = pd.relu %a : tensor<64xf32>
  return %y : tensor<64xf32>
}
func.func @stage1_backward(%y: tensor<64xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 1 : i64} {
  %dy = pd.input 1 "dy" : tensor<64xf32>
  %g = pd.relu_grad %dy, %y : tensor<64xf32>
  %gv = pd.reshape %g : tensor<64xf32> -> tensor<4x16xf32>
  %gw = pd.reshape %gv : tensor<4x16xf32> -> tensor<2x32xf32>
  pd.send %gw to 0 channel 1 : tensor<2x32xf32>
  %yv = pd.reshape %y : tensor<64xf32> -> tensor<8x8xf32>
  pd.send %yv to 0 channel 2 : tensor<8x8xf32>
  return
}
}

// The stashed relu's reshape is a view of its stash slot.
// CHECK-LABEL: func.func @stage0_forward
// CHECK:         pd.relu %{{.+}} {pd.buffer = #pd.buffer<stash, 0>}
// CHECK-NEXT:    pd.reshape %{{.+}} {pd.buffer = #pd.buffer<stash, 0>, pd.view} :
// The gradient is written into the comm buffer; both reshapes view it.
// CHECK-LABEL: func.func @stage1_backward
// CHECK:         %[[G:.+]] = pd.relu_grad %{{.+}}, %{{.+}} {pd.buffer = #pd.buffer<comm, [[C:[0-9]+]]>}
// CHECK-NEXT:    %[[GV:.+]] = pd.reshape %[[G]] {pd.buffer = #pd.buffer<comm, [[C]]>, pd.view}
// CHECK-NEXT:    %[[GW:.+]] = pd.reshape %[[GV]] {pd.buffer = #pd.buffer<comm, [[C]]>, pd.view}
// CHECK-NEXT:    pd.send %[[GW]] to 0 channel 1
// The stashed argument's reshape is a copy.
// CHECK-NEXT:    pd.reshape %arg0 {pd.buffer = #pd.buffer<comm, {{[0-9]+}}>} :

// No copy in stage 0; one in stage 1 (the argument's), none for the
// gradient.
// LLVM0-LABEL: llvm.func @pd_stage_forward
// LLVM0-NOT:     llvm.call @pdrt_copy
// LLVM0:         llvm.call @pdrt_send
// LLVM0-NOT:     llvm.call @pdrt_copy
// LLVM-LABEL: llvm.func @pd_stage_backward
// LLVM-COUNT-1: llvm.call @pdrt_copy
// LLVM-NOT:     llvm.call @pdrt_copy
