//===- Passes.h - pdc compiler passes ---------------------------*- C++ -*-===//
//
// Declarations and registration of every pd pass (generated from Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_PASSES_H
#define PD_PASSES_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pd {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Attribute names shared by the passes.
constexpr llvm::StringLiteral kOpIdAttr = "pd.op_id";
constexpr llvm::StringLiteral kGradOfAttr = "pd.grad_of";
constexpr llvm::StringLiteral kStageAttr = "pd.stage";
constexpr llvm::StringLiteral kBufferAttr = "pd.buffer";

} // namespace mlir::pd

#endif // PD_PASSES_PASSES_H
