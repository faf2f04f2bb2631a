//===- CompilerOptions.h - What the user asked pdc for ----------*- C++ -*-===//
//
// Every pdc option that matters after import (DESIGN.md section 2), typed:
// the driver parses the command line into it, the pipeline resolves the
// choices left open, and Codegen writes them into plan.json and the stage
// manifests. It sits below both (header only), so neither layer includes
// the other to see it.
//
//===----------------------------------------------------------------------===//

#ifndef PD_SUPPORT_COMPILEROPTIONS_H
#define PD_SUPPORT_COMPILEROPTIONS_H

#include "dialects/PD/IR/PDEnumOptions.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::pd {

/// The hardware stage executables are built for.
enum class TargetKind { CPU, CUDA };

/// Activation recomputation: none, every stage, or the planner's choice.
enum class Recompute { None, Full, Auto };

/// What pdc writes: the plan directory, or the output of one phase.
enum class EmitKind {
  PlanDirectory, ///< No --emit: write PLAN_DIR.
  MLIRImport,    ///< The imported pd module.
  MLIRGrad,      ///< After autodiff.
  MLIRStages,    ///< After partitioning and outlining.
  MLIRBuffers,   ///< After buffer allocation.
  LLVM,          ///< Every stage's LLVM IR.
  Plan,          ///< plan.json only.
  Trace,         ///< The simulated timeline (Chrome trace JSON).
};

inline llvm::StringRef stringifyTarget(TargetKind target) {
  return target == TargetKind::CPU ? "cpu" : "cuda";
}

inline llvm::StringRef stringifyRecompute(Recompute recompute) {
  switch (recompute) {
  case Recompute::None:
    return "none";
  case Recompute::Full:
    return "full";
  case Recompute::Auto:
    return "auto";
  }
  return "none";
}

struct CompilerOptions {
  std::string modelPath; ///< Absolute path of the input .onnx.
  std::string outputDir; ///< -o PLAN_DIR.
  TargetKind target = TargetKind::CPU;
  EmitKind emit = EmitKind::PlanDirectory;
  bool planOnly = false;
  /// --instrument-ops: the stage executables time every op (run
  /// --profile-ops FILE) and the plan lists them in ops.json.
  bool instrumentOps = false;
  /// --split-gemms: the planner may split a GEMM at a stage cut by rows
  /// so that the cut falls inside it (pd-split-matmul-rows).
  bool splitGemms = true;
  /// --calibrate: each stage's measured / predicted time of its ops in a
  /// run of an instrumented plan of this model at this depth, normalised
  /// to mean 1 (pd/Planner/Calibration.h). The planner multiplies stage
  /// k's modelled compute by entry k when planning that many stages;
  /// empty: none.
  std::vector<double> stageTimeScale;
  std::string calibrationTimes; ///< --calibrate FILE (for plan.json).

  // Cluster description for the planner.
  int64_t devices = 0;
  int64_t deviceMemory = 0; ///< Bytes; 0 = unlimited.
  std::string deviceSpec = "cpu";
  /// Devices per machine (--devices-per-node); 0: the device spec's.
  int64_t devicesPerNode = 0;
  /// --profile: measure the ops' costs on this machine (cpu spec).
  bool profile = false;
  /// --profile-cache DIR (empty: $PDC_PROFILE_CACHE, else
  /// ~/.cache/pdc/profiles).
  std::string profileCache;

  // Manual overrides of the planner (0 = let the planner choose).
  int64_t stages = 0;
  int64_t replicas = 0;
  int64_t microbatch = 0;
  int64_t microbatches = 0;
  /// Samples per optimizer step over all replicas (0: b x m x w with m = d).
  int64_t globalBatch = 0;
  Recompute recompute = Recompute::None;
  Schedule schedule = Schedule::TwoBW;
  /// Whether --recompute and --schedule were given (else the planner
  /// chooses, preferring the values above on equal throughput).
  bool recomputeGiven = false, scheduleGiven = false;
  /// Whether --microbatch was given (else, with --global-batch, the
  /// planner tries other microbatch sizes by importing the model again).
  bool microbatchGiven = false;

  // Optimizer.
  Optimizer optimizer = Optimizer::SGD;
  double lr = 0.01;
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0.0;
};

} // namespace mlir::pd

#endif // PD_SUPPORT_COMPILEROPTIONS_H
