//===- Candidates.cpp - The plans the search weighs -----------------------===//

#include "pd/Planner/Candidates.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <thread>

using namespace mlir;
using namespace mlir::pd;

/// "0-5,7,9-10": runs of consecutive stages as ranges.
static std::string stageRanges(ArrayRef<int64_t> stages) {
  std::string out;
  for (size_t i = 0; i < stages.size();) {
    size_t j = i;
    while (j + 1 < stages.size() && stages[j + 1] == stages[j] + 1)
      ++j;
    if (!out.empty())
      out += ",";
    out += std::to_string(stages[i]);
    if (j > i)
      out += (j == i + 1 ? "," : "-") + std::to_string(stages[j]);
    i = j + 1;
  }
  return out;
}

std::string PlanCandidate::describe() const {
  std::string what = stringifyRecompute(recompute).str();
  if (recompute == Recompute::Auto)
    what = "stages " + stageRanges(recomputeStages);
  return llvm::formatv("d={0} w={1} m={2} b={3} {4} recompute={5}", stages,
                       replicas, microbatches, microbatch,
                       stringifySchedule(schedule), what);
}

/// Devices the search fills: --devices, else one per core on the CPU.
static int64_t deviceCount(const CompilerOptions &o) {
  if (o.devices)
    return o.devices;
  return std::max<int64_t>(1, std::thread::hardware_concurrency());
}

std::vector<int64_t> mlir::pd::microbatchSizes(const CompilerOptions &o,
                                               bool canReimport) {
  std::vector<int64_t> sizes = {o.microbatch};
  if (o.microbatchGiven || !o.globalBatch || !canReimport)
    return sizes;
  for (int64_t b = 1; b <= 4 * o.microbatch; b *= 2)
    if (b != o.microbatch && 4 * b >= o.microbatch && o.globalBatch % b == 0)
      sizes.push_back(b);
  return sizes;
}

std::vector<PlanCandidate>
mlir::pd::enumerateCandidates(const CompilerOptions &o,
                              ArrayRef<int64_t> microbatchSizes) {
  std::vector<std::pair<int64_t, int64_t>> shapes; // (d, w)
  if (o.stages || o.replicas) {
    int64_t d = o.stages, w = o.replicas;
    if (!w)
      w = o.devices ? std::max<int64_t>(o.devices / d, 1) : 1;
    if (!d)
      d = o.devices ? std::max<int64_t>(o.devices / w, 1) : 1;
    shapes.push_back({d, w});
  } else {
    int64_t n = deviceCount(o);
    for (int64_t d = 1; d <= n; ++d)
      if (n % d == 0)
        shapes.push_back({d, n / d});
  }
  std::vector<Schedule> schedules = {o.schedule};
  if (!o.scheduleGiven)
    for (Schedule s : {Schedule::Flush, Schedule::GPipe})
      if (s != o.schedule)
        schedules.push_back(s);
  // Per-stage recomputation: none, every stage, or (auto) the stages that
  // would not fit without it.
  std::vector<Recompute> recomputes = {o.recompute};
  if (!o.recomputeGiven)
    recomputes.insert(recomputes.end(), {Recompute::Auto, Recompute::Full});
  std::vector<PlanCandidate> out;
  for (int64_t b : microbatchSizes)
  for (auto [d, w] : shapes)
    for (Schedule s : schedules)
      for (Recompute r : recomputes) {
        PlanCandidate c;
        c.stages = d;
        c.replicas = w;
        c.microbatch = b;
        c.schedule = s;
        c.recompute = r;
        c.microbatches = o.microbatches ? o.microbatches : d;
        if (!o.microbatches && o.globalBatch) {
          int64_t perStep = b * w;
          c.microbatches = o.globalBatch / perStep;
          if (o.globalBatch % perStep || c.microbatches == 0)
            c.rejected = llvm::formatv("--global-batch {0} is not a multiple "
                                       "of b x w = {1}",
                                       o.globalBatch, b * w);
        }
        if (c.rejected.empty() && s == Schedule::TwoBW && c.microbatches < d)
          c.rejected = llvm::formatv("2bw needs m ({0}) >= d ({1})",
                                     c.microbatches, d);
        out.push_back(c);
      }
  return out;
}

bool mlir::pd::isBetter(const PlanCandidate &c, const PlanCandidate &best) {
  if (c.samplesPerSecond > best.samplesPerSecond * 1.005)
    return true;
  return c.samplesPerSecond >= best.samplesPerSecond * 0.995 &&
         c.peakStageBytes < best.peakStageBytes;
}

CompilerOptions mlir::pd::withCandidate(CompilerOptions o,
                                        const PlanCandidate &c) {
  o.stages = c.stages;
  o.replicas = c.replicas;
  o.microbatches = c.microbatches;
  o.microbatch = c.microbatch;
  o.schedule = c.schedule;
  o.recompute = c.recompute;
  return o;
}

std::string mlir::pd::formatBytes(int64_t bytes) {
  if (bytes < 10 * 1024)
    return std::to_string(bytes) + " bytes";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = bytes / 1024.0;
  int unit = 0;
  for (; v >= 1024 && unit < 3; ++unit)
    v /= 1024;
  return llvm::formatv("{0:F1} {1}", v, units[unit]);
}

