//===- comm_mpi.h - MPI communication of the CPU target ------------*- C++ -*-===//
//
// Helpers the executor uses beside the pdrt_send / pdrt_recv ABI (whose
// messages PipelineComm moves, comm/pipeline_comm.h): the in-place gradient
// allreduce among a stage's replicas, and chunked blocking point-to-point
// byte transfers (any size).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_COMM_COMM_MPI_H
#define PDRT_COMM_COMM_MPI_H

#include "exec/status.h"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pdrt {

/// Tags reserved by the runtime (channel ids are below 32000).
enum : int {
  kTagGatherSize = 32001,
  kTagGatherData = 32002,
  kTagTraceSize = 32003,
  kTagTraceData = 32004,
  kTagOpTimesSize = 32005,
  kTagOpTimesData = 32006
};

/// Message for a failed MPI call: "<what>: <MPI error string>".
std::string mpiErrorString(const char *what, int code);

/// In-place sum allreduce of n floats on `comm` (no-op when comm has one
/// rank), chunked so any n works.
Status allreduceSum(MPI_Comm comm, float *data, int64_t n);

/// In-place sum allreduce of one double.
Status allreduceSum(MPI_Comm comm, double *value);

/// Starts summing `data` over `comm` in place (MPI_Iallreduce); the
/// requests go to `requests`, to be completed with waitAll.
Status startAllreduceSum(MPI_Comm comm, float *data, int64_t n,
                         std::vector<MPI_Request> &requests);

/// Blocking send / receive of `bytes` bytes on MPI_COMM_WORLD, split into
/// messages of at most 1 GiB on the same tag.
Status sendBytes(const void *buf, int64_t bytes, int dest, int tag);
Status recvBytes(void *buf, int64_t bytes, int source, int tag);

/// A byte string of any length to `dest`: its size on `sizeTag`, then its
/// bytes on `dataTag`; recvBlob receives it from `source`.
Status sendBlob(const void *data, uint64_t size, int dest, int sizeTag,
                int dataTag);
Status recvBlob(std::string *blob, int source, int sizeTag, int dataTag);

/// Every rank's `mine` at rank 0: there `all` gets them in rank order
/// (ranks 0 .. ranks - 1); the other ranks send theirs (on `sizeTag` and
/// `dataTag`) and leave `all` alone.
Status gatherToRankZero(std::string mine, int rank, int ranks, int sizeTag,
                        int dataTag, std::vector<std::string> *all);

} // namespace pdrt

#endif // PDRT_COMM_COMM_MPI_H
