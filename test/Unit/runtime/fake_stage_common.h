//===- fake_stage_common.h - Shared config of the hand-written fake stages ===//
//
// The fake 2-stage model of the runtime's MPI test: stage 0 computes
// h = relu(x W1^T + b1), stage 1 logits = h W2^T + b2 and the softmax
// cross-entropy against labels y. The plan (schedule, b, m, W, optimizer)
// comes from FAKE_* environment variables so one pair of executables covers
// every schedule; the manifest is built once from them.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_TEST_FAKE_STAGE_COMMON_H
#define PDRT_TEST_FAKE_STAGE_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kIn = 8, kHidden = 16, kClasses = 4, kIgnore = -100 };

struct FakePlan {
  const char *schedule, *optimizer;
  int64_t b, m, w;
  double lr, weightDecay;
};

static inline const char *fakeEnv(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v && *v ? v : fallback;
}

static inline FakePlan fakePlan() {
  FakePlan p;
  p.schedule = fakeEnv("FAKE_SCHEDULE", "2bw");
  p.optimizer = fakeEnv("FAKE_OPT", "sgd");
  p.b = atoll(fakeEnv("FAKE_B", "3"));
  p.m = atoll(fakeEnv("FAKE_M", "2"));
  p.w = atoll(fakeEnv("FAKE_W", "1"));
  p.lr = atof(fakeEnv("FAKE_LR", "0.1"));
  p.weightDecay = atof(fakeEnv("FAKE_WD", "0"));
  return p;
}

static inline int64_t round64(int64_t n) { return (n + 63) / 64 * 64; }

/// Writes the stage manifest of stage `k` into buf. `params` and
/// `channels`/`inputs` are the stage-specific JSON fragments.
static inline void fakeManifest(char *buf, size_t size, int k, const FakePlan &p,
                                int64_t weights, int64_t optimizer,
                                int64_t stashSlot, int64_t workspace,
                                int64_t comm, const char *params,
                                const char *inputs, const char *channels) {
  int gpipe = strcmp(p.schedule, "gpipe") == 0;
  int versions = strcmp(p.schedule, "2bw") == 0 ? 2 : 1;
  int64_t slots = gpipe ? p.m : 2 - k;
  snprintf(buf, size,
           "{\"format\": \"pdc-stage-manifest\", \"version\": 1, \"stage\": %d,"
           " \"stages\": 2, \"replicas\": %lld, \"schedule\": \"%s\","
           " \"microbatch\": %lld, \"microbatches\": %lld,"
           " \"optimizer\": {\"name\": \"%s\", \"lr\": %.17g, \"momentum\": 0.9,"
           " \"beta1\": 0.9, \"beta2\": 0.999, \"eps\": 1e-8, \"weight_decay\": %.17g},"
           " \"model\": \"\", \"regions\": {\"weights\": %lld, \"weight_versions\": %d,"
           " \"grads\": %lld, \"optimizer\": %lld, \"stash_slot\": %lld,"
           " \"stash_slots\": %lld, \"workspace\": %lld, \"comm\": %lld},"
           " \"params\": [%s], \"inputs\": [%s], \"channels\": [%s], \"loss\": %s}",
           k, (long long)p.w, p.schedule, (long long)p.b, (long long)p.m,
           p.optimizer, p.lr, p.weightDecay, (long long)weights, versions,
           (long long)weights, (long long)optimizer, (long long)stashSlot,
           (long long)slots, (long long)workspace, (long long)comm, params, inputs,
           channels, k == 1 ? "true" : "false");
}

#endif // PDRT_TEST_FAKE_STAGE_COMMON_H
