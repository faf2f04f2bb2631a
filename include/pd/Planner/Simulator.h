//===- Simulator.h - Discrete-event simulation of a pipeline ----*- C++ -*-===//
//
// Predicts a plan's step time, pipeline bubble and stash occupancy before
// it runs: every stage executes the action list the runtime itself builds
// (pdrt::buildSchedule: forwards, backwards and updates with their weight
// versions and stash slots), an action starts when its stage is free and
// the tensors it receives have arrived, and sends follow the runtime's
// protocol (a stage's next forward, or backward, waits until the previous
// one's sends are delivered). A schedule in which no stage can proceed is
// reported as a deadlock, before any process is launched.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_SIMULATOR_H
#define PD_PLANNER_SIMULATOR_H

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::pd {

enum class SimSchedule { TwoBW, Flush, GPipe };
enum class SimActionKind { Forward, Backward, Update };

/// One entry of a stage's action list (pdrt::Action without versions).
struct SimAction {
  SimActionKind kind = SimActionKind::Forward;
  int64_t index = 0; ///< Microbatch (forward/backward) or batch (update).
  int64_t slot = -1; ///< Stash slot of a forward or backward.
};

/// What one stage does per microbatch and per batch, in seconds.
struct SimStage {
  double forward = 0, backward = 0; ///< One microbatch (backward includes
                                    ///< a recomputed forward).
  double update = 0;    ///< Optimizer step and clearing the gradients.
  double allreduce = 0; ///< Summing gradients over the replicas, per batch.
};

/// One tensor a stage receives per microbatch: from stage `from`, in the
/// forward (an activation) or the backward (a gradient), taking `seconds`
/// from the moment both ends are ready.
struct SimTransfer {
  int from = 0, to = 0;
  bool forward = true;
  double seconds = 0;
  /// Small enough to be sent eagerly: the sender does not wait for the
  /// receiver to post (otherwise its next action of the kind does).
  bool eager = false;
};

/// Stages that hold copies of one tied parameter: their updates wait for
/// each other (the copies' gradients are summed), taking `seconds`.
struct SimTie {
  std::vector<int> stages;
  double seconds = 0;
};

struct SimInput {
  SimSchedule schedule = SimSchedule::TwoBW;
  int64_t microbatches = 1, steps = 4;
  std::vector<SimStage> stages;
  std::vector<SimTransfer> transfers;
  std::vector<SimTie> ties;
  /// Stash slots of each stage (empty: as many as the schedule needs).
  std::vector<int64_t> stashSlots;
  /// Each stage's actions; empty: the runtime's own schedule.
  std::vector<std::vector<SimAction>> actions;
};

/// One action as simulated (a Chrome-trace "complete" event).
struct SimEvent {
  int stage = 0;
  SimAction action;
  double start = 0, end = 0;
};

struct SimResult {
  /// Empty if every stage finished; otherwise what each blocked stage waits for.
  std::string deadlock;
  /// Time per batch in the steady state: between the ends of two batches'
  /// updates (the last stage to update), past the first batch and before
  /// the last when there are four or more (the whole run if one step).
  double stepSeconds = 0;
  double totalSeconds = 0;
  /// Per stage: the fraction of the steady-state step it computes, the most
  /// microbatches it held stashed at once, and its stash slots overwritten
  /// while still live (a plan error).
  std::vector<double> busyFraction;
  std::vector<int64_t> peakInFlight;
  std::string stashOverflow;
  /// 1 - mean busy fraction: the share of device time the pipeline idles.
  double bubbleFraction = 0;
  std::vector<SimEvent> events;
};

/// Simulates `input.steps` batches.
SimResult simulatePipeline(const SimInput &input);

/// Writes `events` as a Chrome trace (chrome://tracing, Perfetto): one
/// thread per stage, times in microseconds.
void writeChromeTrace(const SimResult &result, llvm::raw_ostream &os);

} // namespace mlir::pd

#endif // PD_PLANNER_SIMULATOR_H
