//===- progress.h - The communication thread ---------------------*- C++ -*-===//
//
// Open MPI moves a rendezvous message (above the eager limit; any message
// over TCP, or over shared memory without a single-copy mechanism) only
// while both ends are inside MPI calls. A compute thread that posts a send
// and then computes for 100 ms leaves its receiver blocked for those 100 ms.
// The ProgressThread is a second thread per rank that completes posted
// requests (MPI_Testsome) while the compute thread computes, so transfers
// overlap compute, and wakes the compute thread when what it waits for is
// done. It needs MPI_THREAD_MULTIPLE: the compute thread keeps posting
// requests and running collectives itself.
//
// Polling: when it holds requests, the thread tests them and, if none
// completed, sleeps: from kMinSleepUs doubling up to a cap, back to the
// minimum after every completion. The cap is kWaitingSleepUs while the
// compute thread waits for a request (latency matters, and its core is
// free); else kSendingSleepUs while a send is in flight (without a
// single-copy mechanism, or over TCP, its data moves only inside the
// sender's MPI calls); else kIdleSleepUs (receives posted early and
// collectives, whose result is needed later). A new request or a new
// waiter cuts a sleep short; with no requests the thread sleeps on a
// condition variable. It never spins: on a machine with one core per rank
// a spinning poller (or MPI_Recv's own busy wait) takes the core another
// rank computes on. On the 2-core development VM every wake-up of any
// thread costs the compute 20-40 us, which is what the caps trade against
// (bench/pipeline_overlap.py and the benchmark GPT at d=2 were both 3-5%
// faster with 200 us and 10 ms than with 50 us and 2 ms;
// docs/CONTRIBUTING.md).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_COMM_PROGRESS_H
#define PDRT_COMM_PROGRESS_H

#include "exec/status.h"
#include "exec/trace.h"

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace pdrt {

/// One request handed to the ProgressThread. Its owner keeps it alive (at
/// a fixed address) until wait() returned or the thread stopped.
struct CommOp {
  MPI_Request request = MPI_REQUEST_NULL;
  /// Trace slice from post (beginNs, set by the owner) to completion
  /// (endNs, set by the thread), recorded when tracing.
  TraceEvent event;
  std::atomic<bool> done{false};
  int error = MPI_SUCCESS; ///< Valid once done.
  const char *what = "";   ///< Names the operation in an error message.
  bool isSend = false;     ///< A point-to-point send (polled more often).
};

class ProgressThread {
public:
  ~ProgressThread() { stop(); }
  /// Starts the thread; `trace` (may be off) receives completed requests'
  /// slices on its communication list.
  void start(TraceRecorder *trace);
  /// Stops and joins the thread; requests not yet complete stay with MPI
  /// (after an error, MPI_Abort follows).
  void stop();
  bool running() const { return thread_.joinable(); }
  /// Hands `op` (request posted, event.beginNs set) to the thread.
  void add(CommOp *op);
  /// Blocks until `op` is complete; its MPI error, if any, as a Status.
  Status wait(CommOp &op);

  /// Poll interval bounds of the thread (microseconds).
  static constexpr int kMinSleepUs = 2, kWaitingSleepUs = 20,
                       kSendingSleepUs = 200, kIdleSleepUs = 10000;

private:
  void loop();
  /// Tests `active_`; marks and removes the completed ones. Returns how
  /// many completed.
  int testActive();

  TraceRecorder *trace_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable work_;  ///< Signals the thread: new ops, a
                                  ///< waiter or stop.
  std::condition_variable done_;  ///< Signals waiters: some op completed.
  std::vector<CommOp *> incoming_; ///< Guarded by mu_.
  bool stop_ = false;              ///< Guarded by mu_.
  int waiters_ = 0;                ///< Threads in wait(); guarded by mu_.
  uint64_t wakeups_ = 0;           ///< Bumped to cut a sleep short; mu_.
  // Owned by the thread.
  std::vector<CommOp *> active_;
  std::vector<MPI_Request> requests_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

} // namespace pdrt

#endif // PDRT_COMM_PROGRESS_H
