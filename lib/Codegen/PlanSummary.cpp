//===- PlanSummary.cpp - The plan as pdc prints it --------------*- C++ -*-===//
//
// The human-readable account of a plan that pdc prints after compiling:
// shape of the pipeline, per-stage work and memory, and the prediction.
//
//===----------------------------------------------------------------------===//

#include "pd/Codegen/Codegen.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::pd;

/// Formats a byte count with a binary unit (B, KiB, MiB, GiB).
static std::string formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = bytes;
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format(unit ? "%.1f %s" : "%.0f %s", value, units[unit]);
  return s;
}

void mlir::pd::printPlanSummary(ArrayRef<StageInfo> stages,
                                const CompilerOptions &o,
                                const PlanPrediction &p,
                                llvm::raw_ostream &os) {
  int64_t batch = o.microbatch * o.microbatches * o.replicas;
  os << "plan: " << o.stages << " stage(s) x " << o.replicas
     << " replica(s), microbatch " << o.microbatch << ", " << o.microbatches
     << " microbatches (global batch " << batch << "), schedule "
     << stringifySchedule(o.schedule) << ", optimizer "
     << stringifyOptimizer(o.optimizer) << "\n";
  for (const StageInfo &s : stages) {
    const StageRegions &r = s.regions;
    os << "  stage " << s.stage << ": " << s.params.size() << " params, "
       << s.forwardFlops + s.backwardFlops << " FLOP/microbatch, memory "
       << formatBytes(r.total()) << " (weights "
       << formatBytes(r.weights * r.weightVersions) << ", grads "
       << formatBytes(r.grads) << ", optimizer " << formatBytes(r.optimizer)
       << ", stash " << formatBytes(r.stashSlot * r.stashSlots)
       << ", workspace " << formatBytes(r.workspace) << ", comm "
       << formatBytes(r.comm);
    if (r.tieGrads)
      os << ", tied gradients " << formatBytes(r.tieGrads);
    os << ")\n";
  }
  os << "  predicted: " << llvm::format("%.3g", p.result.stepSeconds * 1e3)
     << " ms/step, " << llvm::format("%.0f", p.samplesPerSecond)
     << " samples/s, bubble "
     << llvm::format("%.0f%%", 100 * p.result.bubbleFraction) << " on "
     << p.spec.name << "\n";
}
