//===- services.cc - Training services called by generated code --------------===//
//
// pdrt_load_input (rows of the current microbatch from the data source),
// pdrt_grad_seed (1 / (m * W)), pdrt_report_loss (per-step loss sums),
// pdrt_state_region, pdrt_profile_mark (op timing of profiling stages) and
// the sticky error every kernel reports through.
//
//===----------------------------------------------------------------------===//

#include "context.h"
#include "cpu/gemm_library.h"

#include <cstdio>
#include <optional>

namespace pdrt {

void setError(pdrt_ctx *ctx, const std::string &message) {
  if (!ctx) {
    std::fprintf(stderr, "pdrt: error: %s\n", message.c_str());
    return;
  }
  if (ctx->failed)
    return;
  ctx->failed = true;
  ctx->error = message;
}

} // namespace pdrt

using pdrt::format;

extern "C" void pdrt_load_input(pdrt_ctx *ctx, int64_t index, void *dst,
                                int64_t bytes) {
  if (pdrt::hasError(ctx))
    return;
  const pdrt::Manifest &m = *ctx->manifest;
  const pdrt::InputInfo *in = m.findInput(index);
  if (!in || !ctx->data) {
    pdrt::setError(ctx, format("pdrt_load_input: graph input %lld is not an "
                               "input of this stage", (long long)index));
    return;
  }
  int64_t b = m.microbatch;
  if (bytes != b * in->rowBytes()) {
    pdrt::setError(ctx, format("pdrt_load_input: input '%s' has %lld bytes per "
                               "microbatch, called with %lld", in->name.c_str(),
                               (long long)(b * in->rowBytes()), (long long)bytes));
    return;
  }
  int64_t t = ctx->microbatch / m.microbatches;
  int64_t i = ctx->microbatch % m.microbatches;
  int64_t global = b * m.microbatches * m.replicas;
  int64_t first = t * global + ctx->replica * b * m.microbatches + i * b;
  ctx->data->read(*in, first, b, dst);
}

extern "C" void pdrt_grad_seed(pdrt_ctx *ctx, float *seed) {
  if (pdrt::hasError(ctx))
    return;
  *seed = pdrt::gradSeed(ctx);
}

extern "C" char *pdrt_state_region(pdrt_ctx *ctx) { return ctx->state; }

extern "C" void pdrt_profile_mark(pdrt_ctx *ctx, int64_t id) {
  if (!ctx || !ctx->profile)
    return;
  auto now = std::chrono::steady_clock::now();
  if (ctx->profileMark >= 0) {
    double seconds = std::chrono::duration<double>(now - ctx->profileAt).count();
    auto &entry = ctx->opTimes[ctx->profileMark];
    entry.first += seconds;
    ++entry.second;
    if (std::optional<pdrt::GemmLibrary> library =
            pdrt::alternatingGemmLibrary(ctx)) {
      auto &byLibrary =
          ctx->opTimesByLibrary[ctx->profileMark][(size_t)*library];
      byLibrary.first += seconds;
      ++byLibrary.second;
    }
  }
  ctx->profileMark = id;
  ctx->profileAt = std::chrono::steady_clock::now();
}

extern "C" void pdrt_report_loss(pdrt_ctx *ctx, const float *loss) {
  if (pdrt::hasError(ctx))
    return;
  ctx->stepLossSum[ctx->microbatch / ctx->manifest->microbatches] += *loss;
}
