//===- schedule.h - The per-stage action list of each schedule ----*- C++ -*-===//
//
// A pure function from (schedule, d, k, m, steps, stash slots) to the
// ordered actions one stage performs: FORWARD g, BACKWARD g and UPDATE j,
// with the weight version and stash slot of each microbatch.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_SCHEDULE_H
#define PDRT_EXEC_SCHEDULE_H

#include "manifest.h"

#include <cstdint>
#include <vector>

namespace pdrt {

enum class ActionKind { Forward, Backward, Update };

struct Action {
  ActionKind kind;
  int64_t index; ///< Global microbatch g (Forward/Backward) or batch j (Update).
  int version;   ///< Weight buffer the microbatch uses; for Update, the
                 ///< buffer it reads (it writes `writeVersion`).
  int writeVersion; ///< Update only: buffer that receives W(j+1).
  int64_t slot;  ///< Stash slot (Forward/Backward); -1 for Update.
};

/// Weight buffer of global microbatch g: under 2bw it holds
/// W(max(floor(g/m) - 1, 0)), stored in buffer t % 2; otherwise buffer 0.
int weightVersionOf(ScheduleKind kind, int64_t g, int64_t m);

/// Actions of stage k of d for `steps` batches of m microbatches.
std::vector<Action> buildSchedule(ScheduleKind kind, int d, int k, int64_t m,
                                  int64_t steps, int64_t stashSlots);

} // namespace pdrt

#endif // PDRT_EXEC_SCHEDULE_H
