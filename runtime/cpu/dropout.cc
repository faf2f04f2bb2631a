//===- dropout.cc - CPU kernel of training-mode dropout ----------------===//
//
// pdrt_dropout of runtime/include/pdrt/pdrt_nn.h: the keep mask comes from
// Philox4x32-10 (pdrt_random.h) keyed by the run's seed, the running
// microbatch and the op's rng_id, so forward and backward (and a
// recomputed forward) regenerate the same mask and nothing is stashed.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_random.h"

#include <string>

extern "C" void pdrt_dropout(pdrt_ctx *ctx, const float *x, float *y,
                             int64_t n, float ratio, int64_t rng_id) {
  if (pdrt::hasError(ctx))
    return;
  if (n >= (int64_t(1) << 34)) {
    pdrt::setError(ctx, "pdrt_dropout: " + std::to_string(n) +
                            " elements exceed the 2^34 of one random stream");
    return;
  }
  const uint64_t seed = ctx ? ctx->seed : 0;
  const uint64_t key = ctx ? pdrt::microbatchKey(ctx) : 0;
  const float scale = 1.0f / (1.0f - ratio);
  for (int64_t base = 0; base < n; base += 4) {
    pdrt_philox4 r =
        pdrt_dropout_block(seed, (uint32_t)rng_id, key, (uint32_t)(base / 4));
    for (int64_t j = 0; j < 4 && base + j < n; ++j)
      y[base + j] = pdrt_uniform24(r.v[j]) >= ratio ? x[base + j] * scale : 0.0f;
  }
}
