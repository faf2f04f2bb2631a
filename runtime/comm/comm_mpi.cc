//===- comm_mpi.cc - pdrt_send / pdrt_recv and collectives over MPI -----------===//
//
// pdrt_send and pdrt_recv check the call against the manifest's channel and
// hand it to the rank's PipelineComm (comm/pipeline_comm.h), which sends to
// rank peer*W + replica with the channel id as tag and, by default,
// completes transfers on a communication thread while the stage computes.
// Below them: the collectives and blocking transfers the executor uses.
//
//===----------------------------------------------------------------------===//

#include "comm/comm_mpi.h"
#include "comm/pipeline_comm.h"
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

Status sendBlob(const void *data, uint64_t size, int dest, int sizeTag,
                int dataTag) {
  PDRT_RETURN_IF_ERROR(sendBytes(&size, 8, dest, sizeTag));
  return sendBytes(data, (int64_t)size, dest, dataTag);
}

Status recvBlob(std::string *blob, int source, int sizeTag, int dataTag) {
  uint64_t size = 0;
  PDRT_RETURN_IF_ERROR(recvBytes(&size, 8, source, sizeTag));
  blob->assign(size, '\0');
  return recvBytes(&(*blob)[0], (int64_t)size, source, dataTag);
}

Status gatherToRankZero(std::string mine, int rank, int ranks, int sizeTag,
                        int dataTag, std::vector<std::string> *all) {
  if (rank != 0)
    return sendBlob(mine.data(), mine.size(), 0, sizeTag, dataTag);
  all->clear();
  all->push_back(std::move(mine));
  for (int source = 1; source < ranks; ++source) {
    all->emplace_back();
    PDRT_RETURN_IF_ERROR(recvBlob(&all->back(), source, sizeTag, dataTag));
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
  pdrt::Status s = ctx->comm->send(*c, buf, bytes, ctx->microbatch,
                                    ctx->inBackward);
  if (!s.isOk())
    pdrt::setError(ctx, format("pdrt_send on channel %lld: %s", (long long)channel,
                               s.message().c_str()));
}

extern "C" void pdrt_recv(pdrt_ctx *ctx, int64_t channel, void *buf,
                          int64_t bytes) {
  const pdrt::ChannelInfo *c = checkChannel(ctx, channel, bytes, false);
  if (!c)
    return;
  pdrt::Status s = ctx->comm->recv(*c, buf, bytes, ctx->microbatch);
  if (!s.isOk())
    pdrt::setError(ctx, format("pdrt_recv on channel %lld: %s", (long long)channel,
                               s.message().c_str()));
}
