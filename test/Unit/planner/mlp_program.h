//===- mlp_program.h - The differentiated MLP for planner tests -*- C++ -*-===//
//
// The MLP of test/Import/mlp.onnxtext as pdc --emit=mlir-grad prints it, at
// any microbatch size, parsed and read into a priced ProgramGraph.
//
//===----------------------------------------------------------------------===//

#ifndef PD_TEST_UNIT_PLANNER_MLP_PROGRAM_H
#define PD_TEST_UNIT_PLANNER_MLP_PROGRAM_H

#include "dialects/PD/IR/PDOps.h"
#include "mlir/Parser/Parser.h"
#include "pd/Planner/ProgramGraph.h"

#include <string>

namespace pdtest {

using namespace mlir;
using namespace mlir::pd;

// pdc --emit=mlir-grad of the MLP: x[4,8] -> matmul w1 + b1 -> relu ->
// matmul w2 + b2 -> cross-entropy with labels y[4].
inline const char *kMLP = R"mlir(
pd.param @w1 {onnx_name = "w1"} : tensor<16x8xf32>
pd.param @b1 {onnx_name = "b1"} : tensor<16xf32>
pd.param @w2 {onnx_name = "w2"} : tensor<10x16xf32>
pd.param @b2 {onnx_name = "b2"} : tensor<10xf32>
func.func @main(%arg0: tensor<4x8xf32> {pd.input_name = "x"}, %arg1: tensor<4xi64> {pd.input_name = "y"}) -> tensor<f32> {
  %0 = pd.param_ref @w1 {pd.op_id = 0 : i64} : tensor<16x8xf32>
  %1 = pd.param_ref @b1 {pd.op_id = 1 : i64} : tensor<16xf32>
  %2 = pd.matmul %arg0, %0 {pd.op_id = 2 : i64, transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %3 = pd.add %2, %1 {pd.op_id = 3 : i64} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %4 = pd.relu %3 {pd.op_id = 4 : i64} : tensor<4x16xf32>
  %5 = pd.param_ref @w2 {pd.op_id = 5 : i64} : tensor<10x16xf32>
  %6 = pd.param_ref @b2 {pd.op_id = 6 : i64} : tensor<10xf32>
  %7 = pd.matmul %4, %5 {pd.op_id = 7 : i64, transpose_rhs} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  %8 = pd.add %7, %6 {pd.op_id = 8 : i64} : tensor<4x10xf32>, tensor<10xf32> -> tensor<4x10xf32>
  %9 = pd.softmax_cross_entropy %8, %arg1 {pd.op_id = 9 : i64} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %10 = pd.grad_seed {pd.grad_of = 9 : i64} : tensor<f32>
  %11 = pd.softmax_cross_entropy_grad %10, %8, %arg1 {pd.grad_of = 9 : i64} : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
  %12 = pd.sum_to %11 {pd.grad_of = 8 : i64} : tensor<4x10xf32> -> tensor<10xf32>
  %13 = pd.matmul %11, %5 {pd.grad_of = 7 : i64} : tensor<4x10xf32>, tensor<10x16xf32> -> tensor<4x16xf32>
  %14 = pd.matmul %11, %4 {pd.grad_of = 7 : i64, transpose_lhs} : tensor<4x10xf32>, tensor<4x16xf32> -> tensor<10x16xf32>
  pd.accumulate_grad @b2, %12 {pd.grad_of = 6 : i64} : tensor<10xf32>
  pd.accumulate_grad @w2, %14 {pd.grad_of = 5 : i64} : tensor<10x16xf32>
  %15 = pd.relu_grad %13, %4 {pd.grad_of = 4 : i64} : tensor<4x16xf32>
  %16 = pd.sum_to %15 {pd.grad_of = 3 : i64} : tensor<4x16xf32> -> tensor<16xf32>
  %17 = pd.matmul %15, %arg0 {pd.grad_of = 2 : i64, transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  pd.accumulate_grad @b1, %16 {pd.grad_of = 1 : i64} : tensor<16xf32>
  pd.accumulate_grad @w1, %17 {pd.grad_of = 0 : i64} : tensor<16x8xf32>
  return %9 : tensor<f32>
}
)mlir";

/// kMLP at microbatch b.
inline std::string mlpAt(int b) {
  std::string text = kMLP;
  for (std::string from : {"<4x", "<4xi64>"}) {
    std::string to = from;
    to.replace(1, 1, std::to_string(b));
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  }
  return text;
}

struct Program {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  ProgramGraph graph;

  explicit Program(const std::string &text) {
    ctx.loadDialect<PDDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(text, &ctx);
    graph = *ProgramGraph::build(module->lookupSymbol<func::FuncOp>("main"));
    graph.price([](const ProgramGraph::Op &op) { return op.flops * 1e-9; });
  }
};


} // namespace pdtest

#endif // PD_TEST_UNIT_PLANNER_MLP_PROGRAM_H
