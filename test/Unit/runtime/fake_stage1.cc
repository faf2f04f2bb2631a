//===- fake_stage1.cc - Hand-written stage 1 of the fake 2-stage model ------===//
//
// What pdc would generate for logits = h W2^T + b2 and the softmax
// cross-entropy loss (ignore_index -100): the forward receives h on channel
// 0, loads labels y and reports the loss; the backward seeds the gradient,
// accumulates dW2 and db2 and sends dh on channel 1.
//
//===----------------------------------------------------------------------===//

#include "fake_stage_common.h"
#include "pdrt/pdrt.h"

static FakePlan plan;
static char manifest[4096];

// Weights: fc2.weight [4, 16] at 0, fc2.bias [4] at 256 (same in grads).
enum { kW2 = 0, kB2 = 256, kWeights = 320 };

extern "C" const char *pd_stage_manifest(void) {
  plan = fakePlan();
  int64_t b = plan.b;
  char params[512], inputs[256], channels[512];
  snprintf(params, sizeof(params),
           "{\"name\": \"fc2.weight\", \"shape\": [4, 16], \"offset\": 0,"
           " \"grad_offset\": 0, \"optimizer_offset\": 0},"
           " {\"name\": \"fc2.bias\", \"shape\": [4], \"offset\": 256,"
           " \"grad_offset\": 256, \"optimizer_offset\": 512}");
  snprintf(inputs, sizeof(inputs),
           "{\"index\": 1, \"name\": \"y\", \"dtype\": \"int64\", \"shape\":"
           " [%lld], \"classes\": 4}", (long long)b);
  snprintf(channels, sizeof(channels),
           "{\"id\": 0, \"peer\": 0, \"direction\": \"recv\", \"phase\": "
           "\"forward\", \"bytes\": %lld}, {\"id\": 1, \"peer\": 0, \"direction\":"
           " \"send\", \"phase\": \"backward\", \"bytes\": %lld}",
           (long long)(b * 64), (long long)(b * 64));
  fakeManifest(manifest, sizeof(manifest), 1, plan, kWeights, 576,
               round64(b * 64 + b * 8 + b * 16), round64(b * 16 * 2 + 64 + 64),
               round64(b * 64), params, inputs, channels);
  return manifest;
}

// Stash: h [b, 16] at 0, y [b] int64, logits [b, 4]. Workspace: z [b, 4],
// dlogits [b, 4], loss, seed, tmp [4].
extern "C" void pd_stage_forward(pdrt_ctx *ctx, char *weights, char *grads,
                                 char *stash, char *workspace, char *comm) {
  int64_t b = plan.b;
  float *h = (float *)stash;
  int64_t *y = (int64_t *)(stash + b * 64);
  float *logits = (float *)(stash + b * 72);
  float *z = (float *)workspace, *loss = z + 2 * b * kClasses;
  pdrt_recv(ctx, 0, h, b * 64);
  pdrt_load_input(ctx, 1, y, b * 8);
  pdrt_matmul(ctx, h, (const float *)(weights + kW2), z, b, kClasses, kHidden, 0,
              1, 1.0f, 0.0f);
  int64_t desc[] = {2, b, kClasses, kClasses, 1, 0, 1};
  pdrt_binary(ctx, PDRT_ADD, z, (const float *)(weights + kB2), logits, desc);
  pdrt_softmax_xent(ctx, logits, y, loss, b, kClasses, kIgnore);
  pdrt_report_loss(ctx, loss);
}

// Forward computed logits = h W2^T + b2 and loss = xent(logits, y). So
// dlogits = seed * (softmax - onehot) / K, dW2 += dlogits^T h,
// db2 += column sums of dlogits and dh = dlogits W2.
extern "C" void pd_stage_backward(pdrt_ctx *ctx, char *weights, char *grads,
                                  char *stash, char *workspace, char *comm) {
  int64_t b = plan.b;
  const float *h = (const float *)stash;
  const int64_t *y = (const int64_t *)(stash + b * 64);
  const float *logits = (const float *)(stash + b * 72);
  float *dlogits = (float *)workspace + b * kClasses;
  float *seed = dlogits + b * kClasses + 1, *tmp = seed + 1;
  float *dh = (float *)comm;
  pdrt_grad_seed(ctx, seed);
  pdrt_softmax_xent_grad(ctx, seed, logits, y, dlogits, b, kClasses, kIgnore);
  pdrt_matmul(ctx, dlogits, h, (float *)(grads + kW2), kClasses, kHidden, b, 1, 0,
              1.0f, 1.0f);
  int64_t desc[] = {2, b, kClasses, 0, 1};
  pdrt_sum_to(ctx, dlogits, tmp, kClasses, desc);
  pdrt_accumulate(ctx, tmp, (float *)(grads + kB2), kClasses);
  pdrt_matmul(ctx, dlogits, (const float *)(weights + kW2), dh, b, kHidden,
              kClasses, 0, 0, 1.0f, 0.0f);
  pdrt_send(ctx, 1, dh, b * 64);
}
