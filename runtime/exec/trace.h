//===- trace.h - The runtime timeline (run --trace FILE) ----------*- C++ -*-===//
//
// Every rank records what its compute thread and its communication did,
// with a steady clock relative to a start common to all ranks (an
// MPI_Barrier, then the timestamp), and the ranks' events are merged into
// one Chrome trace JSON file (chrome://tracing, ui.perfetto.dev): pid =
// rank, tid 0 = the compute thread (forward, backward, update, collectives
// and the time it was blocked on a receive or on its sends), tid 1 and up =
// communication (each send and receive from post to completion; overlapping
// transfers take the next free tid so that slices of a thread nest).
//
// Recording costs one branch per event when the trace is off. The compute
// thread records into compute(); the communication thread, or the compute
// thread when there is none, into comm(): each list has one writer.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_TRACE_H
#define PDRT_EXEC_TRACE_H

#include "status.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace pdrt {

/// One slice of the timeline. `name` and `category` are string literals.
/// Arguments left at -1 are not written.
struct TraceEvent {
  const char *name = "";
  const char *category = "";
  int64_t beginNs = 0, endNs = 0; ///< Since the common start.
  int64_t step = -1;       ///< 1-based batch (as in the loss log).
  int64_t microbatch = -1; ///< 0-based index within the batch.
  int64_t channel = -1, peer = -1, bytes = -1;
};

/// Where an event is drawn: the compute thread or a communication lane.
enum class TraceThread { Compute, Comm };

class TraceRecorder {
public:
  bool on() const { return on_; }
  /// Turns recording on; times are measured from now.
  void start();
  /// Nanoseconds since start().
  int64_t now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now() - start_)
        .count();
  }
  void record(TraceThread thread, const TraceEvent &e) {
    (thread == TraceThread::Compute ? compute_ : comm_).push_back(e);
  }
  const std::vector<TraceEvent> &compute() const { return compute_; }
  const std::vector<TraceEvent> &comm() const { return comm_; }

private:
  bool on_ = false;
  std::chrono::steady_clock::time_point start_;
  std::vector<TraceEvent> compute_, comm_;
};

/// The Chrome trace objects of one rank, comma-separated without brackets:
/// process and thread names, then compute events on tid 0 and
/// communication events packed onto tids 1, 2, ... (each on the lowest tid
/// free at its begin). Times are microseconds.
std::string traceEventsJson(int pid, const std::string &processName,
                            const std::vector<TraceEvent> &compute,
                            const std::vector<TraceEvent> &comm);

/// Writes {"traceEvents": [...], "displayTimeUnit": "ms"} with every
/// rank's fragment (traceEventsJson) to `path`.
Status writeTraceFile(const std::string &path,
                      const std::vector<std::string> &fragments);

} // namespace pdrt

#endif // PDRT_EXEC_TRACE_H
