//===- schedule_test.cc - Properties of the 2bw / flush / gpipe schedules ----===//
//
// Warm-up and cool-down counts, the weight version rule (by replaying which
// W(t) each buffer holds through the updates), stash slot safety, and a
// simulation of all stages with blocking receives and non-blocking sends
// that must never deadlock.
//
//===----------------------------------------------------------------------===//

#include "exec/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace pdrt;

namespace {

const ScheduleKind kAll[] = {ScheduleKind::TwoBW, ScheduleKind::Flush,
                             ScheduleKind::GPipe};

int64_t slotsFor(ScheduleKind kind, int d, int k, int64_t m) {
  return kind == ScheduleKind::GPipe ? m : d - k;
}

std::vector<Action> build(ScheduleKind kind, int d, int k, int64_t m, int64_t steps) {
  return buildSchedule(kind, d, k, m, steps, slotsFor(kind, d, k, m));
}

TEST(Schedule, TwoBWWarmupAndCooldownOnceForTraining) {
  const int d = 4;
  const int64_t m = 4, steps = 3;
  for (int k = 0; k < d; ++k) {
    std::vector<Action> a = build(ScheduleKind::TwoBW, d, k, m, steps);
    size_t firstBackward = 0;
    while (a[firstBackward].kind != ActionKind::Backward)
      ++firstBackward;
    // d-1-k warm-up forwards, then the steady state starts with a forward.
    EXPECT_EQ((int)firstBackward, d - 1 - k + 1) << "stage " << k;
    size_t lastForward = a.size() - 1;
    while (a[lastForward].kind != ActionKind::Forward)
      --lastForward;
    int64_t after = std::count_if(a.begin() + lastForward, a.end(), [](const Action &x) {
      return x.kind == ActionKind::Backward;
    });
    // The backward paired with the last forward plus d-1-k cool-down ones.
    EXPECT_EQ(after, d - 1 - k + 1) << "stage " << k;
    // Strict alternation in between: no two forwards in a row after warm-up.
    for (size_t i = firstBackward; i < lastForward; ++i)
      if (a[i].kind == ActionKind::Forward)
        EXPECT_NE(a[i + 1].kind, ActionKind::Forward) << "stage " << k << " at " << i;
  }
}

TEST(Schedule, FlushDrainsEveryBatch) {
  const int d = 3;
  const int64_t m = 5, steps = 2;
  for (int k = 0; k < d; ++k) {
    std::vector<Action> a = build(ScheduleKind::Flush, d, k, m, steps);
    int64_t inFlight = 0;
    for (const Action &x : a) {
      if (x.kind == ActionKind::Forward) ++inFlight;
      if (x.kind == ActionKind::Backward) --inFlight;
      if (x.kind == ActionKind::Update) EXPECT_EQ(inFlight, 0);
    }
    int64_t warm = 0;
    while (a[warm].kind == ActionKind::Forward)
      ++warm;
    EXPECT_EQ(warm, std::min<int64_t>(d - 1 - k, m) + 1);
  }
}

TEST(Schedule, GPipeRunsAllForwardsThenAllBackwards) {
  std::vector<Action> a = build(ScheduleKind::GPipe, 3, 1, 4, 1);
  ASSERT_EQ(a.size(), 9u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a[i].kind, ActionKind::Forward);
    EXPECT_EQ(a[4 + i].kind, ActionKind::Backward);
    EXPECT_EQ(a[4 + i].index, i);
  }
  EXPECT_EQ(a[8].kind, ActionKind::Update);
}

/// Replays the buffers: checks each microbatch sees the W(t) the rules
/// demand, forward and backward use the same buffer, updates read W(j).
void checkVersions(ScheduleKind kind, int d, int k, int64_t m, int64_t steps) {
  std::vector<Action> a = build(kind, d, k, m, steps);
  int64_t holds[2] = {0, 0}; // buffer -> t of the W(t) it holds
  std::map<int64_t, int> forwardVersion;
  int64_t updates = 0;
  for (const Action &x : a) {
    if (x.kind == ActionKind::Update) {
      ASSERT_EQ(x.index, updates++);
      ASSERT_EQ(holds[x.version], x.index) << "update must read W(j)";
      holds[x.writeVersion] = x.index + 1;
      if (kind != ScheduleKind::TwoBW)
        ASSERT_EQ(x.version, x.writeVersion);
      continue;
    }
    int64_t t = x.index / m;
    int64_t want = kind == ScheduleKind::TwoBW ? std::max<int64_t>(t - 1, 0) : t;
    ASSERT_EQ(holds[x.version], want) << "microbatch " << x.index << " stage " << k;
    ASSERT_EQ(x.version, weightVersionOf(kind, x.index, m));
    if (kind == ScheduleKind::TwoBW)
      ASSERT_EQ(x.version, std::max<int64_t>(t - 1, 0) % 2);
    else
      ASSERT_EQ(x.version, 0);
    if (x.kind == ActionKind::Forward)
      forwardVersion[x.index] = x.version;
    else
      ASSERT_EQ(forwardVersion.at(x.index), x.version);
  }
  EXPECT_EQ(updates, steps);
}

TEST(Schedule, VersionRule) {
  for (ScheduleKind kind : kAll)
    for (int d = 1; d <= 5; ++d)
      for (int k = 0; k < d; ++k)
        for (int64_t m = d; m <= d + 2; ++m)
          checkVersions(kind, d, k, m, 4);
}

TEST(Schedule, TwoBWForwardsOfBatchJPlus2FollowUpdateJ) {
  for (int d = 1; d <= 6; ++d)
    for (int k = 0; k < d; ++k)
      for (int64_t m = d; m <= 2 * d + 1; ++m) {
        std::vector<Action> a = build(ScheduleKind::TwoBW, d, k, m, 5);
        int64_t updated = -1;
        for (const Action &x : a) {
          if (x.kind == ActionKind::Update)
            updated = x.index;
          else if (x.kind == ActionKind::Forward && x.index / m >= 2)
            ASSERT_GE(updated, x.index / m - 2) << "d=" << d << " k=" << k;
        }
      }
}

TEST(Schedule, StashSlotsAreNeverReusedWhileInFlight) {
  for (ScheduleKind kind : kAll)
    for (int d = 1; d <= 6; ++d)
      for (int k = 0; k < d; ++k)
        for (int64_t m = d; m <= 2 * d + 1; ++m) {
          int64_t slots = slotsFor(kind, d, k, m);
          std::vector<int64_t> owner(slots, -1);
          for (const Action &x : build(kind, d, k, m, 3)) {
            if (x.kind == ActionKind::Update)
              continue;
            ASSERT_EQ(x.slot, x.index % slots);
            if (x.kind == ActionKind::Forward) {
              ASSERT_EQ(owner[x.slot], -1) << "slot busy d=" << d << " k=" << k;
              owner[x.slot] = x.index;
            } else {
              ASSERT_EQ(owner[x.slot], x.index);
              owner[x.slot] = -1;
            }
          }
        }
}

/// Runs all d stages together: a forward of g at stage k blocks until stage
/// k-1 did forward g (its send), a backward until stage k+1 did backward g.
bool simulate(ScheduleKind kind, int d, int64_t m, int64_t steps) {
  std::vector<std::vector<Action>> lists;
  for (int k = 0; k < d; ++k)
    lists.push_back(build(kind, d, k, m, steps));
  std::vector<size_t> pc(d, 0);
  std::vector<std::vector<bool>> fwd(d, std::vector<bool>(steps * m)),
      bwd(d, std::vector<bool>(steps * m));
  for (bool progress = true; progress;) {
    progress = false;
    for (int k = 0; k < d; ++k) {
      while (pc[k] < lists[k].size()) {
        const Action &x = lists[k][pc[k]];
        if (x.kind == ActionKind::Forward && k > 0 && !fwd[k - 1][x.index])
          break;
        if (x.kind == ActionKind::Backward && k < d - 1 && !bwd[k + 1][x.index])
          break;
        if (x.kind == ActionKind::Forward) fwd[k][x.index] = true;
        if (x.kind == ActionKind::Backward) bwd[k][x.index] = true;
        ++pc[k];
        progress = true;
      }
    }
  }
  for (int k = 0; k < d; ++k)
    if (pc[k] != lists[k].size())
      return false;
  return true;
}

TEST(Schedule, NoDeadlockAcrossStages) {
  for (ScheduleKind kind : kAll)
    for (int d = 1; d <= 6; ++d)
      for (int64_t m = d; m <= 2 * d + 1; ++m)
        for (int64_t steps : {1, 3})
          EXPECT_TRUE(simulate(kind, d, m, steps))
              << scheduleName(kind) << " d=" << d << " m=" << m << " steps=" << steps;
}

} // namespace
