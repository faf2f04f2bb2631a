//===- fake_stage0.cc - Hand-written stage 0 of the fake 2-stage model ------===//
//
// What pdc would generate for h = relu(x W1^T + b1): the forward loads x,
// stashes x and h and sends h on channel 0; the backward receives dh on
// channel 1 and accumulates dW1 and db1. Only pdrt_* calls touch data.
//
//===----------------------------------------------------------------------===//

#include "fake_stage_common.h"
#include "pdrt/pdrt.h"

static FakePlan plan;
static char manifest[4096];

// Weights: fc1.weight [16, 8] at 0, fc1.bias [16] at 512 (same in grads).
enum { kW1 = 0, kB1 = 512, kWeights = 576 };

extern "C" const char *pd_stage_manifest(void) {
  plan = fakePlan();
  int64_t b = plan.b;
  char params[512], inputs[256], channels[512];
  snprintf(params, sizeof(params),
           "{\"name\": \"fc1.weight\", \"shape\": [16, 8], \"offset\": 0,"
           " \"grad_offset\": 0, \"optimizer_offset\": 0},"
           " {\"name\": \"fc1.bias\", \"shape\": [16], \"offset\": 512,"
           " \"grad_offset\": 512, \"optimizer_offset\": 1024}");
  snprintf(inputs, sizeof(inputs),
           "{\"index\": 0, \"name\": \"x\", \"dtype\": \"float32\", \"shape\":"
           " [%lld, 8], \"classes\": 0}", (long long)b);
  snprintf(channels, sizeof(channels),
           "{\"id\": 0, \"peer\": 1, \"direction\": \"send\", \"phase\": "
           "\"forward\", \"bytes\": %lld}, {\"id\": 1, \"peer\": 1, \"direction\":"
           " \"recv\", \"phase\": \"backward\", \"bytes\": %lld}",
           (long long)(b * 64), (long long)(b * 64));
  fakeManifest(manifest, sizeof(manifest), 0, plan, kWeights, 1152,
               round64(b * 32 + b * 64), round64(b * 64 * 2 + 64 + 64),
               round64(b * 64), params, inputs, channels);
  return manifest;
}

// Stash: x [b, 8] at 0, h [b, 16] after it. Workspace: z, z2 [b, 16], tmp [16].
extern "C" void pd_stage_forward(pdrt_ctx *ctx, char *weights, char *grads,
                                 char *stash, char *workspace, char *comm) {
  int64_t b = plan.b;
  float *x = (float *)stash, *h = (float *)(stash + b * 32);
  float *z = (float *)workspace, *z2 = z + b * kHidden;
  const float *w1 = (const float *)(weights + kW1);
  const float *b1 = (const float *)(weights + kB1);
  pdrt_load_input(ctx, 0, x, b * 32);
  pdrt_matmul(ctx, x, w1, z, b, kHidden, kIn, 0, 1, 1.0f, 0.0f);
  int64_t desc[] = {2, b, kHidden, kHidden, 1, 0, 1};
  pdrt_binary(ctx, PDRT_ADD, z, b1, z2, desc);
  pdrt_relu(ctx, z2, h, b * kHidden);
  pdrt_send(ctx, 0, h, b * 64);
}

// Forward computed z = x W1^T + b1 (b1 broadcast over rows), h = relu(z).
// So dz = dh * (h > 0), dW1 += dz^T x and db1 += column sums of dz.
extern "C" void pd_stage_backward(pdrt_ctx *ctx, char *weights, char *grads,
                                  char *stash, char *workspace, char *comm) {
  int64_t b = plan.b;
  const float *x = (const float *)stash, *h = (const float *)(stash + b * 32);
  float *dh = (float *)comm;
  float *dz = (float *)workspace, *tmp = dz + 2 * b * kHidden;
  pdrt_recv(ctx, 1, dh, b * 64);
  pdrt_relu_grad(ctx, dh, h, dz, b * kHidden);
  pdrt_matmul(ctx, dz, x, (float *)(grads + kW1), kHidden, kIn, b, 1, 0, 1.0f, 1.0f);
  int64_t desc[] = {2, b, kHidden, 0, 1};
  pdrt_sum_to(ctx, dz, tmp, kHidden, desc);
  pdrt_accumulate(ctx, tmp, (float *)(grads + kB1), kHidden);
}
