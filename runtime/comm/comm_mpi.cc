//===- comm_mpi.cc - pdrt_send / pdrt_recv and collectives over MPI -----------===//
//
// pdrt_send is MPI_Isend on MPI_COMM_WORLD to rank peer*W + replica with the
// channel id as tag; the request joins the pending list of the running
// phase (forward or backward), which the executor completes before that
// phase's next call. pdrt_recv is a blocking MPI_Recv from the same rank.
//
//===----------------------------------------------------------------------===//

#include "comm/comm_mpi.h"
#include "exec/context.h"

#include <algorithm>

namespace pdrt {

namespace {
constexpr int64_t kChunk = int64_t(1) << 30;
} // namespace

std::string mpiErrorString(const char *what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return format("%s: %.*s", what, len, text);
}

Status waitAll(std::vector<MPI_Request> &requests) {
  if (requests.empty())
    return Status::ok();
  int rc = MPI_Waitall((int)requests.size(), requests.data(), MPI_STATUSES_IGNORE);
  requests.clear();
  if (rc != MPI_SUCCESS)
    return Status::error(mpiErrorString("MPI_Waitall on pending sends", rc));
  return Status::ok();
}

Status allreduceSum(MPI_Comm comm, float *data, int64_t n) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size == 1)
    return Status::ok();
  for (int64_t done = 0; done < n; done += kChunk) {
    int count = (int)std::min(kChunk, n - done);
    int rc = MPI_Allreduce(MPI_IN_PLACE, data + done, count, MPI_FLOAT, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
      return Status::error(mpiErrorString("MPI_Allreduce of gradients", rc));
  }
  return Status::ok();
}

Status startAllreduceSum(MPI_Comm comm, float *data, int64_t n,
                         std::vector<MPI_Request> &requests) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size == 1)
    return Status::ok();
  for (int64_t done = 0; done < n; done += kChunk) {
    int count = (int)std::min(kChunk, n - done);
    MPI_Request req;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, data + done, count, MPI_FLOAT,
                            MPI_SUM, comm, &req);
    if (rc != MPI_SUCCESS)
      return Status::error(mpiErrorString("MPI_Iallreduce of gradients", rc));
    requests.push_back(req);
  }
  return Status::ok();
}

Status allreduceSum(MPI_Comm comm, double *value) {
  int rc = MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, MPI_SUM, comm);
  if (rc != MPI_SUCCESS)
    return Status::error(mpiErrorString("MPI_Allreduce of the loss", rc));
  return Status::ok();
}

Status sendBytes(const void *buf, int64_t bytes, int dest, int tag) {
  const char *p = static_cast<const char *>(buf);
  for (int64_t done = 0; done < bytes || done == 0; done += kChunk) {
    int count = (int)std::min(kChunk, bytes - done);
    int rc = MPI_Send(p + done, count, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return Status::error(mpiErrorString(format("MPI_Send to rank %d", dest).c_str(), rc));
    if (bytes == 0)
      break;
  }
  return Status::ok();
}

Status recvBytes(void *buf, int64_t bytes, int source, int tag) {
  char *p = static_cast<char *>(buf);
  for (int64_t done = 0; done < bytes || done == 0; done += kChunk) {
    int count = (int)std::min(kChunk, bytes - done);
    int rc = MPI_Recv(p + done, count, MPI_BYTE, source, tag, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return Status::error(
          mpiErrorString(format("MPI_Recv from rank %d", source).c_str(), rc));
    if (bytes == 0)
      break;
  }
  return Status::ok();
}

} // namespace pdrt

using pdrt::format;

namespace {

/// Finds `channel` in the manifest and checks it matches the call; sets
/// the sticky error and returns NULL otherwise.
const pdrt::ChannelInfo *checkChannel(pdrt_ctx *ctx, int64_t channel,
                                      int64_t bytes, bool isSend) {
  if (pdrt::hasError(ctx))
    return nullptr;
  const pdrt::ChannelInfo *c = ctx->manifest->findChannel(channel);
  const char *call = isSend ? "pdrt_send" : "pdrt_recv";
  if (!c) {
    pdrt::setError(ctx, format("%s: unknown channel %lld", call, (long long)channel));
    return nullptr;
  }
  if (c->isSend != isSend || c->bytes != bytes) {
    pdrt::setError(ctx, format("%s: channel %lld is a %s channel of %lld bytes, "
                               "called with %lld bytes", call, (long long)channel,
                               c->isSend ? "send" : "recv", (long long)c->bytes,
                               (long long)bytes));
    return nullptr;
  }
  return c;
}

} // namespace

extern "C" void pdrt_send(pdrt_ctx *ctx, int64_t channel, const void *buf,
                          int64_t bytes) {
  const pdrt::ChannelInfo *c = checkChannel(ctx, channel, bytes, true);
  if (!c)
    return;
  int dest = (int)(c->peer * ctx->manifest->replicas + ctx->replica);
  std::vector<MPI_Request> &pending =
      ctx->inBackward ? ctx->backwardSends : ctx->forwardSends;
  const char *p = static_cast<const char *>(buf);
  const int64_t chunk = int64_t(1) << 30;
  for (int64_t done = 0; done < bytes || done == 0; done += chunk) {
    MPI_Request req;
    int count = (int)std::min(chunk, bytes - done);
    int rc = MPI_Isend(p + done, count, MPI_BYTE, dest, (int)channel,
                       MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) {
      pdrt::setError(ctx, pdrt::mpiErrorString(
                              format("pdrt_send on channel %lld to rank %d",
                                     (long long)channel, dest).c_str(), rc));
      return;
    }
    pending.push_back(req);
    if (bytes == 0)
      break;
  }
}

extern "C" void pdrt_recv(pdrt_ctx *ctx, int64_t channel, void *buf,
                          int64_t bytes) {
  const pdrt::ChannelInfo *c = checkChannel(ctx, channel, bytes, false);
  if (!c)
    return;
  int source = (int)(c->peer * ctx->manifest->replicas + ctx->replica);
  pdrt::Status s = pdrt::recvBytes(buf, bytes, source, (int)channel);
  if (!s.isOk())
    pdrt::setError(ctx, format("pdrt_recv on channel %lld: %s", (long long)channel,
                               s.message().c_str()));
}
