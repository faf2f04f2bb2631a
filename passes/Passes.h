//===- Passes.h - pdc compiler passes ---------------------------*- C++ -*-===//
//
// Declarations and registration of every pd pass (generated from Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_PASSES_H
#define PD_PASSES_PASSES_H

#include "dialects/PD/IR/PDEnumOptions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pd {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Names of the discardable attributes the passes use most (declared, with
/// the rest of the pass contract, in PDOps.td and verified by the dialect).
constexpr llvm::StringLiteral kOpIdAttr =
    PDDialect::OpIdAttrHelper::getNameStr();
constexpr llvm::StringLiteral kGradOfAttr =
    PDDialect::GradOfAttrHelper::getNameStr();
constexpr llvm::StringLiteral kStageAttr =
    PDDialect::StageAttrHelper::getNameStr();
constexpr llvm::StringLiteral kBufferAttr =
    PDDialect::BufferAttrHelper::getNameStr();

} // namespace mlir::pd

#endif // PD_PASSES_PASSES_H
