//===- pipeline_comm.h - Stage-to-stage messages of one rank ------*- C++ -*-===//
//
// What pdrt_send and pdrt_recv do, in one of two modes (run --comm):
//
// thread (default): a ProgressThread completes every transfer in the
//   background. pdrt_send posts MPI_Isend and returns. Each receive
//   channel has a staging buffer of one message: the receive of its next
//   message is posted (MPI_Irecv into the staging buffer) as soon as the
//   previous one was consumed, so it arrives while the stage computes;
//   pdrt_recv waits for it (sleeping, not spinning) and copies it to the
//   destination the generated code names. The destination itself cannot be
//   the target of an early receive: it is often the workspace or a stash
//   slot that the running call still uses.
// sync: pdrt_send posts MPI_Isend; pdrt_recv is a blocking MPI_Recv into
//   the destination. Transfers progress only inside MPI calls.
//
// In both modes a phase's sends complete (waitSends) before the next call
// of the same stage function, which may reuse their buffers; and the n-th
// pdrt_recv on a channel gets the channel's n-th message (pdrt.h), the
// same bytes into the same buffers at the same schedule points.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_COMM_PIPELINE_COMM_H
#define PDRT_COMM_PIPELINE_COMM_H

#include "comm/progress.h"
#include "exec/manifest.h"
#include "exec/trace.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace pdrt {

enum class CommMode { Thread, Sync };

class PipelineComm {
public:
  ~PipelineComm();
  /// `forwardCalls` / `backwardCalls`: how many times this rank runs each
  /// stage function (each receive channel gets one message per call).
  /// Fails if the mode needs a thread level MPI does not provide.
  Status setup(const Manifest &m, int replica, CommMode mode,
               TraceRecorder *trace, int64_t forwardCalls,
               int64_t backwardCalls);
  /// Posts the first receive of every channel and starts the thread.
  void start();
  /// Completes the sends, cancels receives never consumed and stops the
  /// thread.
  Status finish();
  /// Stops the thread without completing anything (after a failure).
  void stop();

  /// pdrt_send of global microbatch `g`'s forward (or backward) call.
  Status send(const ChannelInfo &c, const void *buf, int64_t bytes, int64_t g,
              bool backward);
  /// pdrt_recv of global microbatch `g`'s call.
  Status recv(const ChannelInfo &c, void *buf, int64_t bytes, int64_t g);
  /// Completes the sends of the forward (or backward) calls so far.
  Status waitSends(bool backward);

  /// A request started elsewhere (a non-blocking collective) whose
  /// completion the thread drives; `op` stays alive until wait(op).
  void track(CommOp *op);
  Status wait(CommOp &op);

private:
  struct FreeDeleter {
    void operator()(char *p) const { std::free(p); }
  };
  struct RecvChannel {
    const ChannelInfo *info = nullptr;
    int source = 0;
    std::unique_ptr<char, FreeDeleter> staging;
    std::vector<std::unique_ptr<CommOp>> chunks; ///< The posted message.
    int64_t posted = 0, consumed = 0, total = 0;
  };

  int rankOf(const ChannelInfo &c) const;
  RecvChannel *findRecv(int64_t channel);
  TraceEvent transferEvent(const char *name, const ChannelInfo &c,
                           int64_t bytes, int64_t g) const;
  /// MPI_Irecv of message `ch.posted` into the staging buffer.
  void postRecv(RecvChannel &ch);
  Status recvStaged(RecvChannel &ch, void *buf, int64_t bytes, int64_t g);
  Status recvBlocking(const ChannelInfo &c, void *buf, int64_t bytes, int64_t g);

  const Manifest *m_ = nullptr;
  int replica_ = 0;
  CommMode mode_ = CommMode::Thread;
  TraceRecorder *trace_ = nullptr;
  ProgressThread thread_;
  std::vector<RecvChannel> recvs_;
  std::vector<std::unique_ptr<CommOp>> forwardSends_, backwardSends_;
};

} // namespace pdrt

#endif // PDRT_COMM_PIPELINE_COMM_H
