//===- pd-opt.cpp - The pd optimizer driver ---------------------*- C++ -*-===//
//
// MlirOptMain with the pd dialect, the dialects its stage functions lower
// to, every pd pass and the test-only analysis printers. Used by lit.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "passes/Passes.h"
#include "pd/Pipeline/Pipeline.h"

namespace mlir::pd::test {
void registerTestPasses();
} // namespace mlir::pd::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::pd::PDDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::LLVM::LLVMDialect>();
  mlir::pd::registerPDPasses();
  mlir::pd::registerTrainingPipeline();
  mlir::pd::test::registerTestPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pd optimizer driver\n", registry));
}
