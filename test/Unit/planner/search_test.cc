//===- search_test.cc - Candidates and their scoring ----------------------===//
//
// The plan search's pieces that need no compiler: which candidates the
// command line leaves open, how one split's candidates are rejected,
// priced and given recomputing stages (SplitScorer on the MLP), and the
// ranking rule.
//
//===----------------------------------------------------------------------===//

#include "mlp_program.h"
#include "pd/Planner/Candidates.h"
#include "pd/Planner/DeviceSpec.h"
#include "pd/Planner/SplitScorer.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::pd;
using namespace pdtest;

namespace {

CompilerOptions optionsFor(int64_t devices) {
  CompilerOptions o;
  o.devices = devices;
  o.microbatch = 4;
  return o;
}

PlanCandidate candidate(int64_t d, Schedule s, Recompute r, int64_t m) {
  PlanCandidate c;
  c.stages = d;
  c.microbatch = 4;
  c.microbatches = m;
  c.schedule = s;
  c.recompute = r;
  return c;
}

} // namespace

// Nothing pinned on 4 devices: d x w in {1x4, 2x2, 4x1}, three schedules,
// three recomputations; m = d.
TEST(Search, EnumeratesEveryOpenChoice) {
  std::vector<PlanCandidate> all = enumerateCandidates(optionsFor(4), {4});
  EXPECT_EQ(all.size(), 3u * 3u * 3u);
  EXPECT_EQ(all.front().describe(), "d=1 w=4 m=1 b=4 2bw recompute=none");
  for (const PlanCandidate &c : all) {
    EXPECT_EQ(c.stages * c.replicas, 4);
    EXPECT_EQ(c.microbatches, c.stages);
    EXPECT_TRUE(c.rejected.empty());
  }
}

// Pinned flags fix their dimension; --global-batch sets m per (b, w) and
// rejects what it cannot divide.
TEST(Search, PinnedFlagsAndTheGlobalBatch) {
  CompilerOptions o = optionsFor(4);
  o.stages = 2;
  o.schedule = Schedule::Flush;
  o.scheduleGiven = true;
  o.globalBatch = 24;
  std::vector<PlanCandidate> all = enumerateCandidates(o, {4, 8});
  EXPECT_EQ(all.size(), 2u * 3u); // b in {4, 8}, three recomputations
  for (const PlanCandidate &c : all) {
    EXPECT_EQ(c.stages, 2);
    EXPECT_EQ(c.replicas, 2);
    EXPECT_EQ(c.schedule, Schedule::Flush);
    if (c.microbatch == 4)
      EXPECT_EQ(c.microbatches, 3);
    else
      EXPECT_EQ(c.rejected,
                "--global-batch 24 is not a multiple of b x w = 16");
  }
  EXPECT_EQ(microbatchSizes(o, true),
            (std::vector<int64_t>{4, 1, 2, 8}));
  o.microbatchGiven = true;
  EXPECT_EQ(microbatchSizes(o, true), (std::vector<int64_t>{4}));
}

// One split of the MLP (d = 2): a budget between the two stages' needs
// makes recompute=auto recompute exactly the larger stage; a budget below
// the smallest need rejects with the stage and the bytes; a budget below
// a stage's share of the parameters rejects without modelling.
TEST(Search, SplitScorerRejectsAndRecomputes) {
  Program p(mlpAt(4));
  CompilerOptions o = optionsFor(2);
  DeviceSpec spec = cantFail(loadDeviceSpec("cpu"));
  PlanCandidate none = candidate(2, Schedule::GPipe, Recompute::None, 4);
  SplitScorer roomy(p.graph, 2, 1, o, spec, int64_t(1) << 30);
  roomy.evaluate(none, /*pinned=*/false);
  ASSERT_TRUE(none.rejected.empty()) << none.rejected;
  EXPECT_GT(none.samplesPerSecond, 0);
  ASSERT_EQ(none.cuts.size(), 1u);
  const PipelineSummary *model = roomy.pipelineOf(none);
  ASSERT_NE(model, nullptr);
  PipelineSummary gpipe = *model;
  gpipe.applySchedule(Schedule::GPipe, 4);
  int64_t s0 = gpipe.stages[0].regions.total();
  int64_t s1 = gpipe.stages[1].regions.total();
  int64_t budget = std::min(s0, s1) + (std::max(s0, s1) - std::min(s0, s1)) / 2;
  ASSERT_NE(s0, s1);

  SplitScorer tight(p.graph, 2, 1, o, spec, budget);
  PlanCandidate autoR = candidate(2, Schedule::GPipe, Recompute::Auto, 4);
  tight.evaluate(autoR, /*pinned=*/false);
  EXPECT_EQ(autoR.recomputeStages,
            std::vector<int64_t>{s0 > s1 ? int64_t(0) : int64_t(1)});
  PlanCandidate over = candidate(2, Schedule::GPipe, Recompute::None, 4);
  tight.evaluate(over, /*pinned=*/false);
  EXPECT_NE(over.rejected.find("needs"), std::string::npos) << over.rejected;
  EXPECT_FALSE(over.boundOnly);

  SplitScorer tiny(p.graph, 2, 1, o, spec, 256);
  PlanCandidate pruned = candidate(2, Schedule::GPipe, Recompute::None, 4);
  tiny.evaluate(pruned, /*pinned=*/false);
  EXPECT_TRUE(pruned.boundOnly);
  EXPECT_NE(pruned.rejected.find("share of the parameters"), std::string::npos)
      << pruned.rejected;
  EXPECT_LE(pruned.peakStageBytes, std::max(s0, s1));
}

// Faster by more than 0.5% wins; within it, the smaller largest stage.
TEST(Search, RankingPrefersSpeedThenMemory) {
  PlanCandidate a, b;
  a.samplesPerSecond = 100;
  a.peakStageBytes = 1000;
  b.samplesPerSecond = 100.4;
  b.peakStageBytes = 2000;
  EXPECT_FALSE(isBetter(b, a));
  b.peakStageBytes = 900;
  EXPECT_TRUE(isBetter(b, a));
  b.samplesPerSecond = 101;
  b.peakStageBytes = 5000;
  EXPECT_TRUE(isBetter(b, a));
}
