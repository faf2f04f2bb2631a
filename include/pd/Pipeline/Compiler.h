//===- Compiler.h - pdc's phases after import -------------------*- C++ -*-===//
//
// The compiler behind the `pdc` driver: from an imported pd module to a plan
// directory (or to the IR of one phase for --emit). The driver parses the
// command line into CompilerOptions and calls runCompiler.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PIPELINE_COMPILER_H
#define PD_PIPELINE_COMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Support/Timing.h"
#include "pd/Support/CompilerOptions.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

namespace mlir::pd {

/// Imports the model again with dim 0 of every graph input set to
/// `microbatch`; the plan search uses it to try other microbatch sizes.
using ModelImporter =
    std::function<FailureOr<OwningOpRef<ModuleOp>>(int64_t microbatch)>;

/// Runs every phase after import on `module` as `options` say (the pass
/// managers configured by the MLIR pass-manager flags pdc accepts, e.g.
/// --mlir-print-ir-after-all; each phase timed under `timing`): prints the
/// output of `options.emit` to `out`, or writes the plan directory. Reports
/// errors as diagnostics on the module's context and returns failure; never
/// leaves a half-written plan directory.
LogicalResult runCompiler(ModuleOp module, const CompilerOptions &options,
                          llvm::raw_ostream &out,
                          const ModelImporter &reimport = {},
                          TimingScope timing = {});

} // namespace mlir::pd

#endif // PD_PIPELINE_COMPILER_H
