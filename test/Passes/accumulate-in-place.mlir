// RUN: pd-opt %s --pd-accumulate-in-place | FileCheck %s

// Tests that a weight-gradient matmul whose only use is its parameter's
// pd.accumulate_grad is marked to accumulate into its output; a matmul
// with another use, or a gradient that is not a matmul, is not.

pd.param @w {onnx_name = "w"} : tensor<16x8xf32>
pd.param @b {onnx_name = "b"} : tensor<16xf32>
pd.param @v {onnx_name = "v"} : tensor<16x16xf32>
func.func @stage0_backward(%x: tensor<4x8xf32>, %h: tensor<4x16xf32>, %dh: tensor<4x16xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dw = pd.matmul %dh, %x {transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %dw : tensor<16x8xf32>
  %db = pd.sum_to %dh : tensor<4x16xf32> -> tensor<16xf32>
  pd.accumulate_grad @b, %db : tensor<16xf32>
  %dv = pd.matmul %h, %dh {transpose_lhs} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<16x16xf32>
  pd.accumulate_grad @v, %dv : tensor<16x16xf32>
  %sq = pd.mul %dv, %dv : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// CHECK-LABEL: func.func @stage0_backward
// CHECK-NEXT:    %[[DW:.+]] = pd.matmul %{{.+}}, %{{.+}} {pd.accumulate, transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @w, %[[DW]]
// CHECK-NEXT:    %[[DB:.+]] = pd.sum_to %{{.+}} :
// CHECK-NEXT:    pd.accumulate_grad @b, %[[DB]]
// CHECK-NEXT:    %[[DV:.+]] = pd.matmul %{{.+}}, %{{.+}} {transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @v, %[[DV]]
// CHECK-NEXT:    pd.mul %[[DV]], %[[DV]]
// CHECK-NEXT:    return
