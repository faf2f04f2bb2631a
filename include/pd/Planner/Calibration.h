//===- Calibration.h - Stage speeds measured in a real run ------*- C++ -*-===//
//
// The planner balances stages on op prices measured one op at a time
// (pdc --profile). In a pipelined run the stages' ops may run at other
// speeds than those prices say: the large benchmark GPT's second stage ran
// its GEMMs 4-9% slower against their prices than the first stage ran
// the same shapes (docs/planner.md, "Calibrating from a run"). A run of a
// plan compiled with --instrument-ops (`run --profile-ops times.json`)
// measures each stage's ops in place; pdc --calibrate reads it back as a
// time scale per stage, which the partition, the GEMM splits and the
// simulator apply to that stage's priced compute.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_CALIBRATION_H
#define PD_PLANNER_CALIBRATION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mlir::pd {

/// Each stage's measured / predicted time of its priced ops in a run:
/// `opsPath` is the instrumented plan's ops.json (each op's id, stage and
/// predicted_seconds), `timesPath` the run's `--profile-ops` file (each
/// rank's stage and its ops' seconds and calls). A stage's ratio is the
/// mean over its replicas of the sum of the ops' seconds per call over
/// the sum of their prices; the ratios are normalised to mean 1, so that
/// only the stages' balance changes, not the predicted step. Errors name
/// the file and what is wrong with it.
llvm::Expected<std::vector<double>>
readStageTimeScale(llvm::StringRef opsPath, llvm::StringRef timesPath);

} // namespace mlir::pd

#endif // PD_PLANNER_CALIBRATION_H
