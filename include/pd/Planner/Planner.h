//===- Planner.h - Predicting a plan's time and checking it -----*- C++ -*-===//
//
// The cost model (each op's FLOPs and bytes from PD_CostOpInterface, as a
// roofline on the device, plus a per-call overhead; transfers, all-reduces
// and the optimizer from the buffer plan's sizes and the device's links)
// turned into the simulator's input, and the simulation of the plan that
// pdc compiles: its predicted step time, bubble and timeline, and the
// errors (deadlock, stash overflow) that must stop it before launch.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_PLANNER_H
#define PD_PLANNER_PLANNER_H

#include "mlir/IR/BuiltinOps.h"
#include "pd/Planner/DeviceSpec.h"
#include "pd/Planner/Simulator.h"
#include "pd/Support/CompilerOptions.h"

namespace mlir::pd {

/// The simulator's input for a module after pd-allocate-buffers, trained
/// as `o` says, on `spec`.
FailureOr<SimInput> buildSimInput(ModuleOp module, const CompilerOptions &o,
                                  const DeviceSpec &spec);

struct PlanPrediction {
  DeviceSpec spec;
  SimInput input;
  SimResult result;
  double samplesPerSecond = 0;
};

/// Simulates the plan of `module` (steps batches); fails with an error at
/// the module if the spec cannot be read or the schedule would deadlock or
/// overwrite a live stash slot.
FailureOr<PlanPrediction> predictPlan(ModuleOp module, const CompilerOptions &o,
                                      int64_t steps = 4);

} // namespace mlir::pd

#endif // PD_PLANNER_PLANNER_H
