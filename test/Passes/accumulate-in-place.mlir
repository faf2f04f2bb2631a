// RUN: pd-opt %s --pd-accumulate-in-place | FileCheck %s

// Tests that a weight-gradient matmul, or an embedding's gather_grad, whose
// only use is its parameter's pd.accumulate_grad is marked to accumulate
// into its output; a matmul or gather_grad with another use, a matmul
// with a bias, or a gradient that is neither, is not. A tied table gets
// both its gather_grad and its LM head's matmul accumulated in place.

pd.param @w {onnx_name = "w"} : tensor<16x8xf32>
pd.param @b {onnx_name = "b"} : tensor<16xf32>
pd.param @v {onnx_name = "v"} : tensor<16x16xf32>
pd.param @u {onnx_name = "u"} : tensor<16x16xf32>
pd.param @wte {onnx_name = "wte"} : tensor<7x4xf32>
pd.param @wpe {onnx_name = "wpe"} : tensor<7x4xf32>
func.func @stage0_backward(%x: tensor<4x8xf32>, %h: tensor<4x16xf32>, %dh: tensor<4x16xf32>, %bias: tensor<16xf32>, %de: tensor<2x3x4xf32>, %ids: tensor<2x3xi64>, %hid: tensor<6x4xf32>, %dl: tensor<6x7xf32>) attributes {pd.phase = #pd.phase<backward>, pd.stage = 0 : i64} {
  %dw = pd.matmul %dh, %x {transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @w, %dw : tensor<16x8xf32>
  %db = pd.sum_to %dh : tensor<4x16xf32> -> tensor<16xf32>
  pd.accumulate_grad @b, %db : tensor<16xf32>
  %dv = pd.matmul %h, %dh {transpose_lhs} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<16x16xf32>
  pd.accumulate_grad @v, %dv : tensor<16x16xf32>
  %sq = pd.mul %dv, %dv : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %du = pd.matmul %h, %dh, %bias {transpose_lhs} : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32> -> tensor<16x16xf32>
  pd.accumulate_grad @u, %du : tensor<16x16xf32>
  %dt = pd.gather_grad %de, %ids : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  pd.accumulate_grad @wte, %dt : tensor<7x4xf32>
  %dh2 = pd.matmul %dl, %hid {transpose_lhs} : tensor<6x7xf32>, tensor<6x4xf32> -> tensor<7x4xf32>
  pd.accumulate_grad @wte, %dh2 : tensor<7x4xf32>
  %dp = pd.gather_grad %de, %ids : tensor<2x3x4xf32>, tensor<2x3xi64> -> tensor<7x4xf32>
  pd.accumulate_grad @wpe, %dp : tensor<7x4xf32>
  %twice = pd.add %dp, %dp : tensor<7x4xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
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
// CHECK-NEXT:    %[[DU:.+]] = pd.matmul %{{.+}}, %{{.+}}, %{{.+}} {transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @u, %[[DU]]
// CHECK-NEXT:    %[[DT:.+]] = pd.gather_grad %{{.+}}, %{{.+}} {pd.accumulate}
// CHECK-NEXT:    pd.accumulate_grad @wte, %[[DT]]
// CHECK-NEXT:    %[[DH2:.+]] = pd.matmul %{{.+}}, %{{.+}} {pd.accumulate, transpose_lhs}
// CHECK-NEXT:    pd.accumulate_grad @wte, %[[DH2]]
// CHECK-NEXT:    %[[DP:.+]] = pd.gather_grad %{{.+}}, %{{.+}} :
// CHECK-NEXT:    pd.accumulate_grad @wpe, %[[DP]]
// CHECK-NEXT:    pd.add %[[DP]], %[[DP]]
// CHECK-NEXT:    return
