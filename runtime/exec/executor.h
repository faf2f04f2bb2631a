//===- executor.h - Command line and schedule executor of a stage ---*- C++ -*-===//
//
// The stage executable's options, the generated functions the executor
// calls, and runStage(), which allocates the arena, loads weights and data,
// runs this stage's action list with the optimizer, logs and saves.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_EXECUTOR_H
#define PDRT_EXEC_EXECUTOR_H

#include "comm/pipeline_comm.h"
#include "manifest.h"
#include "pdrt/pdrt.h"

#include <string>
#include <vector>

namespace pdrt {

struct RunOptions {
  std::string model; ///< --model (default: the manifest's "model").
  int64_t steps = 10, logEvery = 1;
  uint64_t seed = 0;
  bool hasLr = false;
  double lr = 0.0;
  std::string dataDir; ///< --data; empty with --synthetic.
  bool synthetic = false;
  std::string saveOnnx;
  bool printMemory = false;
  /// --check-ties: at the end, fail unless every tied parameter's copies
  /// are bitwise identical on all owner stages.
  bool checkTies = false;
  /// --dump-grads DIR: write each parameter's gradient of the first step
  /// (summed over microbatches and replicas, before the update) to
  /// DIR/NAME.npy, '/' in names replaced by '__'. For gradient checks.
  std::string dumpGrads;
  /// --profile-ops FILE: time every op between the pd.profile_mark calls
  /// of a profiling stage (pdc --profile) over the steps after the first,
  /// and write the totals to FILE as JSON.
  std::string profileOps;
  /// --synthetic-weights: start from small pseudo-random weights instead of
  /// the model's initializers (a model without weight data);
  /// --synthetic-weights-if-missing: only when the model's cannot be read
  /// (profiling: op times depend on the values, so real ones when they
  /// exist).
  bool syntheticWeights = false, syntheticWeightsIfMissing = false;
  /// --trace FILE: every rank's timeline, merged by rank 0 into FILE as
  /// Chrome trace JSON (exec/trace.h).
  std::string trace;
  /// --comm thread|sync: how stage-to-stage messages progress
  /// (comm/pipeline_comm.h).
  CommMode comm = CommMode::Thread;
};

/// Parses the stage command line (argv[1..]); errors name the argument.
Status parseArgs(const std::vector<std::string> &args, RunOptions *out);

/// The three symbols of a generated stage object.
struct StageFunctions {
  const char *(*manifest)(void);
  void (*forward)(pdrt_ctx *, char *, char *, char *, char *, char *);
  void (*backward)(pdrt_ctx *, char *, char *, char *, char *, char *);
};

/// Trains this rank's stage (MPI initialised, rank = stage * W + replica).
Status runStage(const Manifest &m, const RunOptions &opts,
                const StageFunctions &fns, int rank);

/// Stash slots the schedule needs at stage k (microbatches in flight).
int64_t requiredStashSlots(const Manifest &m, int64_t steps);

} // namespace pdrt

#endif // PDRT_EXEC_EXECUTOR_H
