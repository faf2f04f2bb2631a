//===- context.h - The runtime state behind pdrt_ctx ---------------*- C++ -*-===//
//
// Defines struct pdrt_ctx, the opaque handle generated code passes to every
// pdrt_* call: MPI placement, the microbatch being run, the data source,
// the stage-to-stage messages, the trace, per-step loss sums and the sticky
// error.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_CONTEXT_H
#define PDRT_EXEC_CONTEXT_H

#include "pdrt/pdrt.h"

#include "data_npy.h"
#include "manifest.h"
#include "interleave.h"

#include <mpi.h>

#include <array>
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace pdrt {
class PipelineComm;
class TraceRecorder;
} // namespace pdrt

struct pdrt_ctx {
  const pdrt::Manifest *manifest = nullptr;
  int rank = 0, replica = 0;
  MPI_Comm replicaComm = MPI_COMM_NULL; ///< This stage's W replicas.
  int64_t microbatch = 0; ///< Global index g = t*m + i of the running call.
  char *state = nullptr;  ///< The stage's state region (pdrt_state_region).
  uint64_t seed = 0;      ///< run --seed: the key of random ops (dropout).
  bool inBackward = false;
  pdrt::DataSource *data = nullptr;
  pdrt::PipelineComm *comm = nullptr; ///< pdrt_send / pdrt_recv.
  pdrt::TraceRecorder *trace = nullptr; ///< run --trace (on() or not).
  std::map<int64_t, double> stepLossSum; ///< Step t -> sum of reported losses.
  /// Op timing (run --profile-ops): on when `profile`; the mark last passed
  /// (-1: none) and when; each mark's total seconds to the next and calls.
  bool profile = false;
  int64_t profileMark = -1;
  std::chrono::steady_clock::time_point profileAt;
  std::map<int64_t, std::pair<double, int64_t>> opTimes;
  /// The pdrt_matmul shapes each timed op ran (cpu/gemm_library.h).
  std::map<int64_t, std::vector<pdrt::GemmShape2D>> opGemms;
  /// Under PDRT_GEMM_LIBRARY=alternate, each mark's seconds and calls per
  /// GEMM library (indexed by pdrt::GemmLibrary) as well.
  std::map<int64_t, std::array<std::pair<double, int64_t>, 2>>
      opTimesByLibrary;
  /// Kernel calls recorded between pdrt_interleave_begin and _end.
  pdrt::InterleavedGroup interleaved;
  bool failed = false;
  std::string error; ///< First error raised by a kernel or service (sticky).
};

namespace pdrt {

/// Records `message` as ctx's sticky error unless one is already set. The
/// executor checks it after every stage function call. A NULL ctx (kernels
/// called outside a stage, e.g. from tests) only prints the message.
void setError(pdrt_ctx *ctx, const std::string &message);

/// Gives OpenBLAS cores / localRanks threads unless OPENBLAS_NUM_THREADS or
/// OMP_NUM_THREADS is set (runtime/cpu/matmul.cc).
void setBlasThreads(int localRanks);

/// True when ctx carries an error (kernels then skip their work).
inline bool hasError(const pdrt_ctx *ctx) { return ctx && ctx->failed; }

/// The objective's gradient with respect to one microbatch's loss (the
/// value of pdrt_grad_seed): 1 / (microbatches * replicas); 1 without a
/// manifest (kernels called outside a stage).
inline float gradSeed(const pdrt_ctx *ctx) {
  if (!ctx || !ctx->manifest)
    return 1.0f;
  return 1.0f / (float)(ctx->manifest->microbatches * ctx->manifest->replicas);
}

/// The position t*m*W + r*m + i in the run of the samples of ctx's running
/// microbatch (microbatch i of replica r at step t): the microbatch part of
/// the key of random ops, independent of the pipeline depth.
inline uint64_t microbatchKey(const pdrt_ctx *ctx) {
  int64_t m = ctx->manifest ? ctx->manifest->microbatches : 1;
  int64_t w = ctx->manifest ? ctx->manifest->replicas : 1;
  int64_t t = ctx->microbatch / m, i = ctx->microbatch % m;
  return (uint64_t)(t * m * w + (int64_t)ctx->replica * m + i);
}

} // namespace pdrt

#endif // PDRT_EXEC_CONTEXT_H
