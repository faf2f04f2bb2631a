//===- pipeline_comm.cc - Sends, staged receives and their completion ---------===//
//
// Messages go to rank peer * W + replica with the channel id as tag, split
// into chunks of at most 1 GiB (MPI counts are ints) on the same tag.
//
//===----------------------------------------------------------------------===//

#include "comm/pipeline_comm.h"

#include "comm/comm_mpi.h"

#include <algorithm>
#include <cstring>

namespace pdrt {

namespace {
constexpr int64_t kChunk = int64_t(1) << 30;

const char *threadLevelName(int level) {
  switch (level) {
  case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
  case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown thread level";
}

/// Calls f(offset, count) for each chunk of a `bytes`-byte message (one
/// empty chunk for an empty message).
template <typename F>
Status forEachChunk(int64_t bytes, F f) {
  for (int64_t done = 0; done < bytes || done == 0; done += kChunk) {
    PDRT_RETURN_IF_ERROR(f(done, (int)std::min(kChunk, bytes - done)));
    if (bytes == 0)
      break;
  }
  return Status::ok();
}
} // namespace

PipelineComm::~PipelineComm() {
  thread_.stop();
  // A receive still posted after a failure may yet be written by MPI
  // before MPI_Abort: leave its staging buffer allocated.
  for (RecvChannel &ch : recvs_)
    if (ch.posted > ch.consumed)
      ch.staging.release();
}

Status PipelineComm::setup(const Manifest &m, int replica, CommMode mode,
                           TraceRecorder *trace, int64_t forwardCalls,
                           int64_t backwardCalls) {
  m_ = &m;
  replica_ = replica;
  mode_ = mode;
  trace_ = trace;
  if (mode == CommMode::Thread) {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE)
      return Status::error(format(
          "--comm thread needs MPI_THREAD_MULTIPLE but the MPI library "
          "provides %s; run with --comm sync", threadLevelName(level)));
  }
  for (const ChannelInfo &c : m.channels) {
    if (c.isSend)
      continue;
    RecvChannel ch;
    ch.info = &c;
    ch.source = rankOf(c);
    ch.total = c.isForward ? forwardCalls : backwardCalls;
    if (mode == CommMode::Thread) {
      size_t size = (size_t)std::max<int64_t>((c.bytes + 63) / 64 * 64, 64);
      ch.staging.reset(static_cast<char *>(std::aligned_alloc(64, size)));
      if (!ch.staging)
        return Status::error(format("cannot allocate the %lld-byte receive "
                                    "buffer of channel %lld", (long long)c.bytes,
                                    (long long)c.id));
    }
    recvs_.push_back(std::move(ch));
  }
  return Status::ok();
}

void PipelineComm::start() {
  if (mode_ != CommMode::Thread)
    return;
  thread_.start(trace_);
  for (RecvChannel &ch : recvs_)
    if (ch.total > 0)
      postRecv(ch);
}

Status PipelineComm::finish() {
  PDRT_RETURN_IF_ERROR(waitSends(false));
  PDRT_RETURN_IF_ERROR(waitSends(true));
  thread_.stop();
  // Every channel gets one message per call, so no receive is left; if
  // one is (a channel a call did not use), cancel it.
  for (RecvChannel &ch : recvs_) {
    if (ch.posted == ch.consumed)
      continue;
    for (auto &chunk : ch.chunks)
      if (!chunk->done.load() && chunk->request != MPI_REQUEST_NULL) {
        MPI_Cancel(&chunk->request);
        MPI_Wait(&chunk->request, MPI_STATUS_IGNORE);
      }
    ch.consumed = ch.posted;
  }
  return Status::ok();
}

void PipelineComm::stop() { thread_.stop(); }

int PipelineComm::rankOf(const ChannelInfo &c) const {
  return (int)(c.peer * m_->replicas + replica_);
}

PipelineComm::RecvChannel *PipelineComm::findRecv(int64_t channel) {
  for (RecvChannel &ch : recvs_)
    if (ch.info->id == channel)
      return &ch;
  return nullptr;
}

TraceEvent PipelineComm::transferEvent(const char *name, const ChannelInfo &c,
                                       int64_t bytes, int64_t g) const {
  TraceEvent e;
  e.name = name;
  e.category = "comm";
  e.beginNs = trace_->now();
  e.step = g / m_->microbatches + 1;
  e.microbatch = g % m_->microbatches;
  e.channel = c.id;
  e.peer = c.peer;
  e.bytes = bytes;
  return e;
}

Status PipelineComm::send(const ChannelInfo &c, const void *buf, int64_t bytes,
                          int64_t g, bool backward) {
  int dest = rankOf(c);
  auto &pending = backward ? backwardSends_ : forwardSends_;
  const char *p = static_cast<const char *>(buf);
  return forEachChunk(bytes, [&](int64_t offset, int count) {
    auto op = std::make_unique<CommOp>();
    op->what = "MPI_Isend of a stage output";
    op->isSend = true;
    if (trace_->on())
      op->event = transferEvent("send", c, bytes, g);
    int rc = MPI_Isend(p + offset, count, MPI_BYTE, dest, (int)c.id,
                       MPI_COMM_WORLD, &op->request);
    if (rc != MPI_SUCCESS)
      return Status::error(mpiErrorString(format("MPI_Isend to rank %d", dest).c_str(), rc));
    track(op.get());
    pending.push_back(std::move(op));
    return Status::ok();
  });
}

Status PipelineComm::waitSends(bool backward) {
  auto &pending = backward ? backwardSends_ : forwardSends_;
  if (pending.empty())
    return Status::ok();
  bool traced = trace_->on();
  TraceEvent blocked;
  if (traced) {
    blocked.name = "wait sends";
    blocked.category = "blocked";
    blocked.beginNs = trace_->now();
  }
  bool waited = false;
  Status s;
  for (auto &op : pending) {
    waited |= !op->done.load(std::memory_order_acquire);
    s = wait(*op);
    if (!s.isOk())
      break;
  }
  if (traced && waited) {
    blocked.endNs = trace_->now();
    trace_->record(TraceThread::Compute, blocked);
  }
  // After a failure an op may still be with MPI or the thread: keep it
  // allocated (MPI_Abort follows).
  if (!s.isOk())
    for (auto &op : pending)
      (void)op.release();
  pending.clear();
  return s;
}

void PipelineComm::track(CommOp *op) {
  if (mode_ == CommMode::Thread)
    thread_.add(op);
}

Status PipelineComm::wait(CommOp &op) {
  if (mode_ == CommMode::Thread)
    return thread_.wait(op);
  if (op.done.load())
    return Status::ok();
  op.error = MPI_Wait(&op.request, MPI_STATUS_IGNORE);
  op.done.store(true);
  if (trace_->on()) {
    op.event.endNs = trace_->now();
    trace_->record(TraceThread::Comm, op.event);
  }
  if (op.error != MPI_SUCCESS)
    return Status::error(mpiErrorString(op.what, op.error));
  return Status::ok();
}

void PipelineComm::postRecv(RecvChannel &ch) {
  const ChannelInfo &c = *ch.info;
  ch.chunks.clear();
  int64_t g = ch.posted;
  ++ch.posted;
  // A failed post completes at once with its error, which the pdrt_recv
  // waiting for it reports.
  (void)forEachChunk(c.bytes, [&](int64_t offset, int count) {
    auto op = std::make_unique<CommOp>();
    op->what = "MPI_Irecv of a stage input";
    if (trace_->on())
      op->event = transferEvent("recv", c, c.bytes, g);
    int rc = MPI_Irecv(ch.staging.get() + offset, count, MPI_BYTE, ch.source,
                       (int)c.id, MPI_COMM_WORLD, &op->request);
    if (rc != MPI_SUCCESS) {
      op->error = rc;
      op->done.store(true);
    } else {
      thread_.add(op.get());
    }
    ch.chunks.push_back(std::move(op));
    return Status::ok();
  });
}

Status PipelineComm::recv(const ChannelInfo &c, void *buf, int64_t bytes,
                          int64_t g) {
  if (mode_ == CommMode::Sync)
    return recvBlocking(c, buf, bytes, g);
  RecvChannel *ch = findRecv(c.id);
  if (!ch)
    return Status::error(format("channel %lld is not a receive channel",
                                (long long)c.id));
  return recvStaged(*ch, buf, bytes, g);
}

Status PipelineComm::recvStaged(RecvChannel &ch, void *buf, int64_t bytes,
                                int64_t g) {
  // More calls than expected: post this one now.
  if (ch.posted == ch.consumed)
    postRecv(ch);
  bool traced = trace_->on();
  TraceEvent blocked;
  bool waited = false;
  if (traced) {
    blocked = transferEvent("wait recv", *ch.info, bytes, g);
    blocked.category = "blocked";
  }
  Status s;
  for (auto &chunk : ch.chunks) {
    waited |= !chunk->done.load(std::memory_order_acquire);
    s = thread_.wait(*chunk);
    if (!s.isOk())
      break;
  }
  if (traced && waited) {
    blocked.endNs = trace_->now();
    trace_->record(TraceThread::Compute, blocked);
  }
  PDRT_RETURN_IF_ERROR(s);
  std::memcpy(buf, ch.staging.get(), (size_t)bytes);
  ++ch.consumed;
  if (ch.posted < ch.total)
    postRecv(ch);
  return Status::ok();
}

Status PipelineComm::recvBlocking(const ChannelInfo &c, void *buf, int64_t bytes,
                                  int64_t g) {
  bool traced = trace_->on();
  TraceEvent e;
  if (traced)
    e = transferEvent("recv", c, bytes, g);
  PDRT_RETURN_IF_ERROR(recvBytes(buf, bytes, rankOf(c), (int)c.id));
  if (traced) {
    e.endNs = trace_->now();
    trace_->record(TraceThread::Comm, e);
    e.name = "wait recv";
    e.category = "blocked";
    trace_->record(TraceThread::Compute, e);
  }
  return Status::ok();
}

} // namespace pdrt
