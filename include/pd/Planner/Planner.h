//===- Planner.h - Predicting a plan's time and checking it -----*- C++ -*-===//
//
// The cost model (each op's FLOPs and bytes from PD_CostOpInterface, as a
// roofline on the device, plus a per-call overhead; transfers, all-reduces
// and the optimizer from the buffer plan's sizes and the device's links)
// turned into the simulator's input, and the simulation of a plan: its
// predicted step time, bubble and timeline, and the errors (deadlock, stash
// overflow) that must stop it before launch. A plan is described by its
// PipelineSummary: read from a compiled module (summarizeModule) or
// predicted from the program graph without compiling (StageModel.h).
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_PLANNER_H
#define PD_PLANNER_PLANNER_H

#include "mlir/IR/BuiltinOps.h"
#include "pd/Planner/DeviceSpec.h"
#include "pd/Planner/Simulator.h"
#include "pd/Planner/StageModel.h"
#include "pd/Support/CompilerOptions.h"

namespace mlir::pd {

/// The device spec `o` names, with the command line's --devices-per-node.
llvm::Expected<DeviceSpec> loadDeviceSpec(const CompilerOptions &o);

/// The stages of a module after pd-allocate-buffers: their arenas as
/// allocated, their functions' op seconds on `spec`, what they receive,
/// and the tied parameters.
FailureOr<PipelineSummary> summarizeModule(ModuleOp module, int64_t stages,
                                           const DeviceSpec &spec);

/// The simulator's input for `pipeline` trained as `o` says (schedule,
/// microbatches, replicas) on `spec`.
SimInput buildSimInput(const PipelineSummary &pipeline,
                       const CompilerOptions &o, const DeviceSpec &spec);

struct PlanPrediction {
  DeviceSpec spec;
  SimInput input;
  SimResult result;
  double samplesPerSecond = 0;
};

/// Simulates `pipeline` for `steps` batches; the error says why it cannot
/// run (a deadlock, a stash slot overwritten while live).
llvm::Expected<PlanPrediction> simulatePlan(const PipelineSummary &pipeline,
                                            const CompilerOptions &o,
                                            const DeviceSpec &spec,
                                            int64_t steps = 4);

/// Simulates the plan of a compiled `module`; fails with an error at the
/// module if the spec cannot be read or the plan cannot run.
FailureOr<PlanPrediction> predictPlan(ModuleOp module, const CompilerOptions &o,
                                      int64_t steps = 4);

} // namespace mlir::pd

#endif // PD_PLANNER_PLANNER_H
