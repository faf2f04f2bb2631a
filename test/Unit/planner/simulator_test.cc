//===- simulator_test.cc - The pipeline simulator's properties ------------===//
//
// The bubble formulas of PipeDream-2BW's analysis (PAPER.md, planner) as
// properties of simulated runs with uniform stages and free communication,
// plus transfers, tied updates, stash occupancy and deadlock detection.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/Simulator.h"

#include <gtest/gtest.h>

using namespace mlir::pd;

namespace {

SimInput uniform(SimSchedule schedule, int d, int64_t m, double f, double b,
                 int64_t steps = 4) {
  SimInput in;
  in.schedule = schedule;
  in.microbatches = m;
  in.steps = steps;
  in.stages.assign(d, SimStage{f, b, 0, 0});
  for (int k = 0; k + 1 < d; ++k) {
    in.transfers.push_back({k, k + 1, /*forward=*/true, 0});
    in.transfers.push_back({k + 1, k, /*forward=*/false, 0});
  }
  return in;
}

SimAction fwd(int64_t g) { return {SimActionKind::Forward, g, g}; }
SimAction bwd(int64_t g) { return {SimActionKind::Backward, g, g}; }
SimAction upd(int64_t j) { return {SimActionKind::Update, j, -1}; }

} // namespace

// Flush and GPipe drain every batch: (m + d - 1)(f + b) per batch, a bubble
// of (d - 1) / (m + d - 1).
TEST(Simulator, FlushAndGPipeStepIsMPlusDMinusOneSlots) {
  for (SimSchedule s : {SimSchedule::Flush, SimSchedule::GPipe})
    for (int d : {1, 2, 4, 8})
      for (int64_t m : {1, 4, 8, 32}) {
        SimResult r = simulatePipeline(uniform(s, d, m, 1.0, 2.0));
        ASSERT_TRUE(r.deadlock.empty()) << r.deadlock;
        EXPECT_DOUBLE_EQ(r.stepSeconds, (m + d - 1) * 3.0) << d << " " << m;
        EXPECT_NEAR(r.bubbleFraction, double(d - 1) / (m + d - 1), 1e-12);
      }
}

// 2BW never drains: in the steady state a batch takes m (f + b) and every
// stage is busy all the time.
TEST(Simulator, TwoBWSteadyStateHasNoBubble) {
  for (int d : {1, 2, 4, 8})
    for (int64_t m : {8, 16, 32}) {
      if (m < d)
        continue;
      SimResult r = simulatePipeline(uniform(SimSchedule::TwoBW, d, m, 1.0, 2.0, 6));
      ASSERT_TRUE(r.deadlock.empty()) << r.deadlock;
      EXPECT_DOUBLE_EQ(r.stepSeconds, m * 3.0) << d << " " << m;
      EXPECT_NEAR(r.bubbleFraction, 0.0, 1e-12);
    }
}

// Flush / 2BW = (m + d - 1) / m: about 2 - 1/d at m = d.
TEST(Simulator, FlushOverTwoBWRatio) {
  for (int d : {2, 4, 8}) {
    double flush = simulatePipeline(uniform(SimSchedule::Flush, d, d, 1, 2)).stepSeconds;
    double twobw = simulatePipeline(uniform(SimSchedule::TwoBW, d, d, 1, 2, 6)).stepSeconds;
    EXPECT_DOUBLE_EQ(flush / twobw, 2.0 - 1.0 / d);
  }
}

// The slowest stage sets the pace.
TEST(Simulator, SlowestStageBoundsTwoBW) {
  SimInput in = uniform(SimSchedule::TwoBW, 3, 12, 1.0, 2.0, 6);
  in.stages[1] = SimStage{2.0, 4.0, 0, 0};
  SimResult r = simulatePipeline(in);
  ASSERT_TRUE(r.deadlock.empty()) << r.deadlock;
  EXPECT_DOUBLE_EQ(r.stepSeconds, 12 * 6.0);
  EXPECT_DOUBLE_EQ(r.busyFraction[1], 1.0);
  EXPECT_DOUBLE_EQ(r.busyFraction[0], 0.5);
}

// One microbatch through two stages: each transfer is on the critical path.
TEST(Simulator, TransfersDelayTheReceiver) {
  SimInput in = uniform(SimSchedule::Flush, 2, 1, 1.0, 1.0, 1);
  for (SimTransfer &t : in.transfers)
    t.seconds = 0.5;
  in.stages[0].update = in.stages[1].update = 0.25;
  SimResult r = simulatePipeline(in);
  ASSERT_TRUE(r.deadlock.empty()) << r.deadlock;
  // f0 + t + f1 + b1 + t + b0 + update.
  EXPECT_DOUBLE_EQ(r.totalSeconds, 5.25);
}

// Tied copies sum their gradients before updating: the owners' updates
// start together, after the slower one's last backward.
TEST(Simulator, TiedUpdatesStartTogether) {
  SimInput in = uniform(SimSchedule::Flush, 2, 1, 1.0, 1.0, 1);
  in.ties.push_back({{0, 1}, 0.5});
  SimResult r = simulatePipeline(in);
  ASSERT_TRUE(r.deadlock.empty()) << r.deadlock;
  double starts[2];
  for (const SimEvent &e : r.events)
    if (e.action.kind == SimActionKind::Update)
      starts[e.stage] = e.start;
  EXPECT_DOUBLE_EQ(starts[0], starts[1]);
  EXPECT_DOUBLE_EQ(starts[0], 4.0 + 0.5); // after b0 ends at 4, plus the sum
}

// 1F1B keeps d - k microbatches stashed on stage k; GPipe keeps all m.
TEST(Simulator, StashOccupancy) {
  SimResult r = simulatePipeline(uniform(SimSchedule::TwoBW, 4, 8, 1, 2));
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(r.peakInFlight[k], 4 - k);
  r = simulatePipeline(uniform(SimSchedule::GPipe, 4, 8, 1, 2));
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(r.peakInFlight[k], 8);
  EXPECT_TRUE(r.stashOverflow.empty());
}

TEST(Simulator, ReportsStashOverflow) {
  SimInput in = uniform(SimSchedule::TwoBW, 2, 2, 1, 2);
  in.stashSlots = {1, 1};
  SimResult r = simulatePipeline(in);
  EXPECT_EQ(r.stashOverflow, "stage 0: forward 1 overwrites stash slot 0 of "
                             "microbatch 0, not yet back-propagated");
}

// Stage 1 wants microbatch 1 first while stage 0 cannot send it before
// stage 1 has received microbatch 0: the runtime would hang.
TEST(Simulator, DetectsDeadlock) {
  SimInput in = uniform(SimSchedule::Flush, 2, 2, 1, 1, 1);
  in.actions = {{fwd(0), fwd(1), bwd(0), bwd(1), upd(0)},
                {fwd(1), fwd(0), bwd(0), bwd(1), upd(0)}};
  SimResult r = simulatePipeline(in);
  EXPECT_EQ(r.deadlock,
            "stage 0 waits at forward 1 for stage 1 to receive forward 0; "
            "stage 1 waits at forward 1 for stage 0's forward 1");
}

// A chrome trace names each stage and holds one event per action.
TEST(Simulator, ChromeTrace) {
  SimResult r = simulatePipeline(uniform(SimSchedule::Flush, 2, 2, 1, 1, 1));
  std::string text;
  llvm::raw_string_ostream os(text);
  writeChromeTrace(r, os);
  EXPECT_NE(text.find("\"name\":\"forward 1\""), std::string::npos);
  EXPECT_NE(text.find("\"name\":\"stage 1\""), std::string::npos);
  EXPECT_EQ(r.events.size(), 10u);
}

// The same out-of-order lists complete when the sends are small enough to
// go eagerly: the sender does not wait for the receiver.
TEST(Simulator, EagerSendsDoNotWaitForTheReceiver) {
  SimInput in = uniform(SimSchedule::Flush, 2, 2, 1, 1, 1);
  for (SimTransfer &t : in.transfers)
    t.eager = true;
  in.actions = {{fwd(0), fwd(1), bwd(0), bwd(1), upd(0)},
                {fwd(1), fwd(0), bwd(0), bwd(1), upd(0)}};
  SimResult r = simulatePipeline(in);
  EXPECT_TRUE(r.deadlock.empty()) << r.deadlock;
}

// GPT at d = 4 with a residual skipping stage 2 (1 -> 3) and the embedding
// tied between stages 0 and 3, every send rendezvous: the runtime hung
// when the owners met at each update (stage 3 in the tied sum of update 0,
// stage 1 waiting for stage 3 to receive forward 4), and stalled like a
// flush when each owner waited for the other before its next backward.
// Under 2bw the tied sum of update j only has to complete before the first
// forward of batch j + 2, which comes m >= d microbatches later: the
// pipeline keeps its no-bubble step m (f + b) and the half-second sum is
// hidden.
TEST(Simulator, TwoBWTiedSumIsHiddenBeforeTheNextVersionIsRead) {
  for (bool skip : {false, true}) {
    SimInput in = uniform(SimSchedule::TwoBW, 4, 4, 1, 2, 6);
    if (skip) {
      in.transfers.push_back({1, 3, /*forward=*/true, 0});
      in.transfers.push_back({3, 1, /*forward=*/false, 0});
    }
    SimResult untied = simulatePipeline(in);
    in.ties.push_back({{0, 3}, 0.5});
    SimResult tied = simulatePipeline(in);
    EXPECT_TRUE(tied.deadlock.empty()) << tied.deadlock;
    EXPECT_DOUBLE_EQ(tied.stepSeconds, untied.stepSeconds) << skip;
    if (!skip) {
      EXPECT_DOUBLE_EQ(tied.stepSeconds, 4 * 3.0);
    }
  }
}

// Flush and GPipe sum the tied gradients at the update: the owners'
// updates start together and the sum adds to the step.
TEST(Simulator, FlushTiedSumAddsToTheStep) {
  SimInput in = uniform(SimSchedule::Flush, 4, 4, 1, 2);
  in.ties.push_back({{0, 3}, 0.5});
  SimResult r = simulatePipeline(in);
  EXPECT_TRUE(r.deadlock.empty()) << r.deadlock;
  EXPECT_NEAR(r.stepSeconds, (4 + 4 - 1) * 3.0 + 0.5, 1e-9);
}
