//===- SplitAtCuts.cpp - GEMMs split by rows at the stage cuts ------------===//

#include "SplitAtCuts.h"
#include "Phases.h"
#include "PlanVariants.h"
#include "dialects/PD/IR/PDOps.h"
#include "pd/Planner/Planner.h"
#include "pd/Planner/ProgramGraph.h"
#include "pd/Planner/SplitScorer.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::pd;

namespace {

/// Stages closer than this (of the heavier one's time) are left as they are.
constexpr double kMinImbalance = 0.02;
/// A split model replaces the plan only when predicted this much faster.
constexpr double kMinGain = 0.01;
/// Row counts of the halves are multiples of this (GEMM blocking).
constexpr int64_t kRowMultiple = 16;

/// The forward op of @main with pd.op_id `id`.
Operation *forwardOp(func::FuncOp main, int64_t id) {
  for (Operation &op : main.getBody().front())
    if (getContractInt<PDDialect::OpIdAttrHelper>(&op) == id)
      return &op;
  return nullptr;
}

/// The rows of a splittable matmul's left operand, or 0.
int64_t splittableRows(Operation *op) {
  auto mm = dyn_cast_or_null<MatMulOp>(op);
  if (!mm || mm.getTransposeLhs())
    return 0;
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  return lhs.getRank() == 2 ? lhs.getDimSize(0) : 0;
}

/// The splits that would balance `chosen`'s stages on `graph` (priced):
/// where the chain's running cost crosses the end of stage k's balanced
/// share (k / d of the total; with a time scale per stage, pdc
/// --calibrate, shares inversely proportional to it), the op there split
/// at the crossing, if it is a splittable matmul and the crossing leaves
/// rows on both sides; none when the chosen plan's slowest stage is within
/// kMinImbalance of the balanced time.
std::vector<MatMulRowSplit> chooseSplits(const ProgramGraph &graph,
                                         func::FuncOp main,
                                         const PlanCandidate &chosen,
                                         ArrayRef<double> timeScale) {
  const OpChain &chain = graph.chain;
  int64_t n = chain.seconds.size(), d = chosen.stages;
  auto scale = [&](int64_t k) {
    return (int64_t)timeScale.size() == d ? timeScale[k] : 1.0;
  };
  // Stage k's balanced share ends at ends[k] of the chain's total.
  std::vector<double> ends(d + 1, 0);
  for (int64_t k = 0; k < d; ++k)
    ends[k + 1] = ends[k] + 1 / scale(k);
  for (double &end : ends)
    end /= ends[d];
  std::vector<double> prefix(n + 1, 0);
  for (int64_t p = 0; p < n; ++p)
    prefix[p + 1] = prefix[p] + chain.seconds[p];
  std::vector<int64_t> bounds = {0};
  for (int64_t id : chosen.cuts) {
    auto it = llvm::find(chain.opIds, id);
    if (it == chain.opIds.end())
      return {};
    bounds.push_back(it - chain.opIds.begin());
  }
  bounds.push_back(n);
  // The time of every stage when balanced.
  double slowest = 0, balanced = prefix[n] * ends[1] * scale(0);
  for (size_t k = 0; k + 1 < bounds.size(); ++k)
    slowest = std::max(slowest, scale(k) * (prefix[bounds[k + 1]] -
                                            prefix[bounds[k]]));
  if (balanced <= 0 || slowest < (1 + kMinImbalance) * balanced)
    return {};
  std::vector<MatMulRowSplit> splits;
  for (int64_t k = 1, p = 0; k < d; ++k) {
    double target = prefix[n] * ends[k];
    while (p < n && prefix[p + 1] < target)
      ++p;
    if (p >= n || chain.seconds[p] <= 0)
      continue;
    int64_t m = splittableRows(forwardOp(main, chain.opIds[p]));
    double share = (target - prefix[p]) / chain.seconds[p];
    int64_t rows =
        (int64_t)std::lround(share * m / kRowMultiple) * kRowMultiple;
    if (m < 2 * kRowMultiple || rows < kRowMultiple ||
        rows > m - kRowMultiple ||
        (!splits.empty() && splits.back().opId == chain.opIds[p]))
      continue;
    splits.push_back({chain.opIds[p], rows});
  }
  return splits;
}

/// Prices the costed ops of @main that have no measurement (the split
/// GEMMs' halves, their slices and concat, at shapes the cache may not
/// hold) at their roofline times the median measured / roofline ratio of
/// the ops of the same name, else of all measured ops; nothing when none
/// is measured (the roofline prices everything).
void priceUnmeasured(func::FuncOp main, const DeviceSpec &spec) {
  PDDialect::SecondsAttrHelper seconds(main.getContext());
  auto roofline = [&](CostOpInterface cost) {
    return rooflineSeconds(cost.getFlops(), cost.getBytes(), spec);
  };
  llvm::StringMap<std::vector<double>> ratios;
  std::vector<double> all;
  SmallVector<CostOpInterface> unmeasured;
  for (Operation &op : main.getBody().front()) {
    auto cost = dyn_cast<CostOpInterface>(op);
    if (!cost)
      continue;
    FloatAttr measured = seconds.getAttr(&op);
    double r = roofline(cost);
    if (!measured) {
      unmeasured.push_back(cost);
    } else if (r > 0) {
      ratios[op.getName().getStringRef()].push_back(
          measured.getValueAsDouble() / r);
      all.push_back(measured.getValueAsDouble() / r);
    }
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  if (all.empty())
    return;
  double overall = median(all);
  Builder b(main.getContext());
  for (CostOpInterface cost : unmeasured) {
    auto it = ratios.find(cost->getName().getStringRef());
    double ratio = it != ratios.end() ? median(it->second) : overall;
    seconds.setAttr(cost, b.getF64FloatAttr(roofline(cost) * ratio));
  }
}

/// A candidate scored on one model: its cuts and throughput filled in.
struct Scored {
  PlanCandidate candidate;
  PipelineSummary pipeline;
};

/// `chosen` evaluated again on `main` (priced as the search prices): its
/// cuts chosen anew.
std::optional<Scored> score(func::FuncOp main, const PlanCandidate &chosen,
                            const CompilerOptions &o, const DeviceSpec &spec) {
  FailureOr<ProgramGraph> graph = ProgramGraph::build(main);
  if (failed(graph))
    return std::nullopt;
  priceGraph(*graph, spec);
  int64_t budget = o.deviceMemory > 0 ? o.deviceMemory : spec.memoryBytes;
  SplitScorer scorer(*graph, chosen.stages, chosen.replicas, o, spec, budget);
  PlanCandidate c = chosen;
  c.cuts.clear();
  c.recomputeStages.clear();
  c.rejected.clear();
  scorer.evaluate(c, /*pinned=*/false);
  const PipelineSummary *pipeline = scorer.pipelineOf(c);
  if (!c.rejected.empty() || !pipeline)
    return std::nullopt;
  return Scored{c, *pipeline};
}

} // namespace

void mlir::pd::splitGemmsAtCuts(ModuleOp module, const CompilerOptions &o,
                                PlanSearch &search,
                                const ModelImporter &reimport,
                                OpProfiler &profiler, TimingScope &timing) {
  PlanCandidate &chosen = search.candidates.front();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!o.splitGemms || !reimport || !main || chosen.stages < 2 ||
      chosen.cuts.empty() || !search.model)
    return;
  DeviceSpec spec = llvm::cantFail(loadDeviceSpec(o));
  FailureOr<ProgramGraph> graph = ProgramGraph::build(main);
  if (failed(graph))
    return;
  priceGraph(*graph, spec);
  std::vector<MatMulRowSplit> wanted =
      chooseSplits(*graph, main, chosen, o.stageTimeScale);
  if (wanted.empty())
    return;

  TimingScope splitTiming = timing.nest("split GEMMs at the cuts");
  // Errors of the attempt are not the user's: the plan without the split
  // stands.
  ScopedDiagnosticHandler quiet(module.getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<OwningOpRef<ModuleOp>> split = reimport(chosen.microbatch);
  if (failed(split) ||
      failed(runAutodiff(**split, /*commandLine=*/false, {}, wanted)) ||
      failed(profiler.annotate(**split, splitTiming)))
    return;
  auto splitMain = (*split)->lookupSymbol<func::FuncOp>("main");
  if (!splitMain)
    return;
  priceUnmeasured(splitMain, spec);
  // --profile measured the split model: both are scored at those prices.
  if (failed(profiler.annotate(module, splitTiming)))
    return;
  std::optional<Scored> base = score(main, chosen, o, spec);
  std::optional<Scored> alt = score(splitMain, chosen, o, spec);
  if (!base)
    return;
  if (!alt || alt->candidate.samplesPerSecond <
                  base->candidate.samplesPerSecond * (1 + kMinGain)) {
    chosen = base->candidate;
    search.model = base->pipeline;
    return;
  }
  module.getBodyRegion().takeBody((*split)->getBodyRegion());
  module->setAttrs((*split).get()->getAttrDictionary());
  chosen = alt->candidate;
  search.model = alt->pipeline;
  search.splitGemms = std::move(wanted);
}
