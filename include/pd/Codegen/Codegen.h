//===- Codegen.h - From buffer-assigned IR to a plan directory --*- C++ -*-===//
//
// The back end of pdc: the stage manifest and plan.json documents, LLVM IR
// and native objects for each stage, linking with the runtime, and the
// launcher script.
//
//===----------------------------------------------------------------------===//

#ifndef PD_CODEGEN_CODEGEN_H
#define PD_CODEGEN_CODEGEN_H

#include "pd/Codegen/StageInfo.h"
#include "pd/Planner/Planner.h"
#include "pd/Support/CompilerOptions.h"
#include "llvm/Support/JSON.h"

namespace mlir::pd {

/// The JSON document embedded in stage `info.stage` (docs/stage-manifest.md).
std::string buildStageManifest(const StageInfo &info,
                               const CompilerOptions &options);

/// plan.json: the decisions, per-stage memory and the planner's prediction.
llvm::json::Value buildPlanJson(ArrayRef<StageInfo> stages,
                                const CompilerOptions &options,
                                const PlanPrediction &prediction);

/// Prints the plan for people: pipeline shape, per-stage work and memory,
/// prediction.
void printPlanSummary(ArrayRef<StageInfo> stages,
                      const CompilerOptions &options,
                      const PlanPrediction &prediction, llvm::raw_ostream &os);

/// Lowers stage `stage` of a buffer-assigned module (which is left
/// unchanged) to an LLVM dialect module with the manifest embedded.
FailureOr<OwningOpRef<ModuleOp>>
lowerStageToLLVM(ModuleOp module, const StageInfo &info,
                 const CompilerOptions &options);

/// Prints the LLVM IR of a lowered stage module.
LogicalResult printLLVMIR(ModuleOp llvmModule, llvm::raw_ostream &os);

/// Compiles a lowered stage module to a native object file at `objPath`.
LogicalResult emitObjectFile(ModuleOp llvmModule, StringRef objPath);

/// Links `objPath` with the runtime into the executable `exePath`.
LogicalResult linkStage(Location loc, StringRef objPath, StringRef exePath);

/// Writes the `run` launcher of a plan into `dir`.
LogicalResult writeLauncher(Location loc, StringRef dir,
                            const CompilerOptions &options);

} // namespace mlir::pd

#endif // PD_CODEGEN_CODEGEN_H
