//===- schedule.cc - 2bw / flush / gpipe action lists -------------------------===//
//
// 2bw: one warm-up of min(d-1-k, total) forwards, strict 1F1B across batch
// boundaries, one cool-down; UPDATE j right after the last backward of batch
// j, out of place (buffer j%2 -> (j+1)%2). flush: the same 1F1B shape per
// batch. gpipe: m forwards then m backwards per batch. Both update in place.
//
//===----------------------------------------------------------------------===//

#include "schedule.h"

#include <algorithm>

namespace pdrt {

int weightVersionOf(ScheduleKind kind, int64_t g, int64_t m) {
  if (kind != ScheduleKind::TwoBW)
    return 0;
  int64_t t = std::max<int64_t>(g / m - 1, 0);
  return (int)(t % 2);
}

namespace {

struct Builder {
  ScheduleKind kind;
  int64_t m, slots;
  std::vector<Action> actions;

  void forward(int64_t g) {
    actions.push_back({ActionKind::Forward, g, weightVersionOf(kind, g, m), -1,
                       g % slots});
  }
  /// Appends BACKWARD g, then UPDATE j when g is batch j's last microbatch.
  void backward(int64_t g) {
    int v = weightVersionOf(kind, g, m);
    actions.push_back({ActionKind::Backward, g, v, -1, g % slots});
    if (g % m != m - 1)
      return;
    int64_t j = g / m;
    if (kind == ScheduleKind::TwoBW)
      actions.push_back({ActionKind::Update, j, (int)(j % 2), (int)((j + 1) % 2), -1});
    else
      actions.push_back({ActionKind::Update, j, 0, 0, -1});
  }
  /// 1F1B over microbatches [first, first + count): `warmup` forwards, then
  /// alternating forward/backward, then the remaining backwards.
  void oneFOneB(int64_t first, int64_t count, int64_t warmup) {
    int64_t f = 0, b = 0;
    for (; f < warmup; ++f)
      forward(first + f);
    while (b < count) {
      if (f < count)
        forward(first + f++);
      backward(first + b++);
    }
  }
};

} // namespace

std::vector<Action> buildSchedule(ScheduleKind kind, int d, int k, int64_t m,
                                  int64_t steps, int64_t stashSlots) {
  Builder b{kind, m, std::max<int64_t>(stashSlots, 1), {}};
  int64_t total = steps * m;
  int64_t lag = d - 1 - k;
  switch (kind) {
  case ScheduleKind::TwoBW:
    b.oneFOneB(0, total, std::min(lag, total));
    break;
  case ScheduleKind::Flush:
    for (int64_t j = 0; j < steps; ++j)
      b.oneFOneB(j * m, m, std::min(lag, m));
    break;
  case ScheduleKind::GPipe:
    for (int64_t j = 0; j < steps; ++j) {
      for (int64_t i = 0; i < m; ++i)
        b.forward(j * m + i);
      for (int64_t i = 0; i < m; ++i)
        b.backward(j * m + i);
    }
    break;
  }
  return b.actions;
}

} // namespace pdrt
