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
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::pd {

/// Every pdc option that matters after import (DESIGN.md section 2).
struct CompilerOptions {
  std::string modelPath;  ///< Absolute path of the input .onnx.
  std::string outputDir;  ///< -o PLAN_DIR.
  std::string target = "cpu";
  /// Phase whose IR is printed instead of writing a plan: mlir-grad,
  /// mlir-stages, mlir-buffers, llvm or plan; empty to write PLAN_DIR.
  std::string emit;
  bool planOnly = false;

  // Cluster description for the planner.
  int64_t devices = 0;
  int64_t deviceMemory = 0; ///< Bytes; 0 = unlimited.
  std::string deviceSpec = "cpu";

  // Manual overrides of the planner (0 / empty = let the planner choose).
  int64_t stages = 0;
  int64_t replicas = 0;
  int64_t microbatch = 0;
  int64_t microbatches = 0;
  std::string recompute = "none";
  std::string schedule = "2bw";

  // Optimizer.
  std::string optimizer = "sgd";
  double lr = 0.01;
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0.0;
};

/// Runs every phase after import on `module` as `options` say: prints the IR
/// of `options.emit` to `out`, or writes the plan directory. Reports errors
/// as diagnostics on the module's context and returns failure; never leaves
/// a half-written plan directory.
LogicalResult runCompiler(ModuleOp module, const CompilerOptions &options,
                          llvm::raw_ostream &out);

} // namespace mlir::pd

#endif // PD_PIPELINE_COMPILER_H
