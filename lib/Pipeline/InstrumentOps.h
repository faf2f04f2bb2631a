//===- InstrumentOps.h - Timing every op of a real plan ---------*- C++ -*-===//
//
// pdc --instrument-ops: every op that does work in the allocated stage
// functions gets a pd.profile_mark (pd-insert-profile-marks every-op), so
// that `run --profile-ops FILE` reports each op's time inside a real
// pipelined run; the plan's ops.json says which op each id is.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_INSTRUMENTOPS_H
#define PD_LIB_PIPELINE_INSTRUMENTOPS_H

#include "mlir/IR/BuiltinOps.h"
#include "pd/Planner/DeviceSpec.h"

#include <string>

namespace mlir::pd {

/// Marks the ops of `module`'s stage functions and returns ops.json:
/// {"format": 1, "ops": [{"id", "stage", "function" (forward or
/// backward), "op", "signature", "flops", "predicted_seconds"}, ...]},
/// predicted_seconds being the planner's price on `spec` (opSeconds: the
/// measured pd.seconds, else the roofline) and null for ops it does not
/// price (transfers, stash copies, the loss report).
FailureOr<std::string> instrumentOps(ModuleOp module, const DeviceSpec &spec);

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_INSTRUMENTOPS_H
