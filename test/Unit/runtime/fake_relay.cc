//===- fake_relay.cc - A hand-written stage of any position in a pipeline ---===//
//
// One executable for every stage k of a d-stage pipeline (k = MPI rank / W,
// read from Open MPI's environment), for the communication tests and the
// overlap benchmark (bench/pipeline_overlap.py). The forward receives an
// activation of FAKE_BYTES bytes from stage k-1 into its stash slot, runs
// FAKE_REPS matmuls of FAKE_N x FAKE_N, and sends an activation to stage
// k+1; the backward receives a gradient from k+1 into the workspace, runs
// twice the matmuls and sends a gradient to k-1. Every message carries a
// pattern of (channel, microbatch, replica) that the receiver checks word
// by word, so a message routed to the wrong call, buffer or rank fails
// the run with one line naming it. The last stage reports loss 1. With
// FAKE_TIED=1 the first and the last stage share a tied parameter whose
// gradient (the same on both) is summed over them at every update.
//
// Channels: forward k -> k+1 has id 2k, backward k+1 -> k has id 2k+1.
//
//===----------------------------------------------------------------------===//

#include "fake_stage_common.h"
#include "pdrt/pdrt.h"

namespace {

struct RelayPlan {
  FakePlan base;
  int d, k, replica;
  int64_t bytes, n, reps;
  bool tied; ///< This stage owns relay.tied (weights and grads at 64).
};

RelayPlan plan;
char manifest[8192];
int64_t forwardCalls, backwardCalls;

int64_t envInt(const char *name, const char *fallback) {
  return atoll(fakeEnv(name, fallback));
}

/// The MPI rank Open MPI (or another launcher) gives this process; 0
/// without one (the launcher's --manifest query).
int64_t worldRank() {
  const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (const char *name : names)
    if (getenv(name))
      return atoll(getenv(name));
  return 0;
}

int64_t bytesOfWork() { return round64(3 * plan.n * plan.n * 4); }

uint32_t patternWord(int64_t channel, int64_t g, int64_t j) {
  uint32_t h = (uint32_t)g * 0x9E3779B1u ^ (uint32_t)channel * 0x85EBCA77u ^
               (uint32_t)plan.replica * 0xC2B2AE3Du;
  return h + (uint32_t)j * 2654435761u;
}

void fillPattern(char *buf, int64_t channel, int64_t g) {
  uint32_t *w = (uint32_t *)buf;
  for (int64_t j = 0; j < plan.bytes / 4; ++j)
    w[j] = patternWord(channel, g, j);
}

void checkPattern(const char *buf, int64_t channel, int64_t g) {
  const uint32_t *w = (const uint32_t *)buf;
  for (int64_t j = 0; j < plan.bytes / 4; ++j) {
    uint32_t want = patternWord(channel, g, j);
    if (w[j] != want) {
      fprintf(stderr, "fake_relay: stage %d: channel %lld, message %lld: word "
              "%lld is %08x, expected %08x\n", plan.k, (long long)channel,
              (long long)g, (long long)j, w[j], want);
      fflush(stderr);
      _Exit(3);
    }
  }
}

/// `reps` products C = A B of n x n matrices in the workspace.
void work(pdrt_ctx *ctx, char *workspace, int64_t reps) {
  if (plan.n == 0)
    return;
  float *a = (float *)workspace, *b = a + plan.n * plan.n, *c = b + plan.n * plan.n;
  for (int64_t r = 0; r < reps; ++r)
    pdrt_matmul(ctx, a, b, c, plan.n, plan.n, plan.n, 0, 0, 1.0f, 0.0f);
}

} // namespace

extern "C" const char *pd_stage_manifest(void) {
  plan.base = fakePlan();
  plan.d = (int)envInt("FAKE_STAGES", "2");
  plan.k = (int)(worldRank() / plan.base.w);
  plan.replica = (int)(worldRank() % plan.base.w);
  plan.bytes = round64(envInt("FAKE_BYTES", "4096"));
  plan.n = envInt("FAKE_N", "0");
  plan.reps = envInt("FAKE_REPS", "1");
  const FakePlan &p = plan.base;
  int d = plan.d, k = plan.k;
  plan.tied = envInt("FAKE_TIED", "0") && d > 1 && (k == 0 || k == d - 1);
  long long s = (long long)plan.bytes;
  char channels[512] = "";
  size_t at = 0;
  auto channel = [&](int id, int peer, const char *dir, const char *phase) {
    at += snprintf(channels + at, sizeof(channels) - at,
                   "%s{\"id\": %d, \"peer\": %d, \"direction\": \"%s\", "
                   "\"phase\": \"%s\", \"bytes\": %lld}", at ? ", " : "", id,
                   peer, dir, phase, s);
  };
  if (k > 0) {
    channel(2 * (k - 1), k - 1, "recv", "forward");
    channel(2 * (k - 1) + 1, k - 1, "send", "backward");
  }
  if (k < d - 1) {
    channel(2 * k, k + 1, "send", "forward");
    channel(2 * k + 1, k + 1, "recv", "backward");
  }
  int gpipe = strcmp(p.schedule, "gpipe") == 0;
  int versions = strcmp(p.schedule, "2bw") == 0 ? 2 : 1;
  long long slots = gpipe ? p.m : d - k;
  char params[512];
  size_t n = snprintf(params, sizeof(params),
                      "{\"name\": \"relay%d.weight\", \"shape\": [16], "
                      "\"offset\": 0, \"grad_offset\": 0, \"optimizer_offset\": 0}", k);
  if (plan.tied)
    snprintf(params + n, sizeof(params) - n,
             ", {\"name\": \"relay.tied\", \"shape\": [16], \"offset\": 64, "
             "\"grad_offset\": 64, \"optimizer_offset\": 128, \"owners\": [0, %d]}",
             d - 1);
  long long paramBytes = plan.tied ? 128 : 64;
  long long tieGrads = plan.tied && versions == 2 ? 64 : 0;
  snprintf(manifest, sizeof(manifest),
           "{\"format\": \"pdc-stage-manifest\", \"version\": 1, \"stage\": %d,"
           " \"stages\": %d, \"replicas\": %lld, \"schedule\": \"%s\","
           " \"microbatch\": %lld, \"microbatches\": %lld,"
           " \"optimizer\": {\"name\": \"%s\", \"lr\": %.17g, \"momentum\": 0.9,"
           " \"beta1\": 0.9, \"beta2\": 0.999, \"eps\": 1e-8, \"weight_decay\": 0},"
           " \"model\": \"\", \"regions\": {\"weights\": %lld, \"weight_versions\": %d,"
           " \"grads\": %lld, \"optimizer\": %lld, \"stash_slot\": %lld,"
           " \"stash_slots\": %lld, \"workspace\": %lld, \"comm\": %lld,"
           " \"tie_grads\": %lld},"
           " \"params\": [%s], \"inputs\": [], \"channels\": [%s], \"loss\": %s}",
           k, d, (long long)p.w, p.schedule, (long long)p.b, (long long)p.m,
           p.optimizer, p.lr, paramBytes, versions, paramBytes, 2 * paramBytes, s,
           slots, s + bytesOfWork() + 64, 2 * s, tieGrads, params, channels,
           k == d - 1 ? "true" : "false");
  return manifest;
}

// Stash: the received activation. Comm: the sent activation.
extern "C" void pd_stage_forward(pdrt_ctx *ctx, char *weights, char *grads,
                                 char *stash, char *workspace, char *comm) {
  int64_t g = forwardCalls++;
  int k = plan.k;
  if (k > 0) {
    pdrt_recv(ctx, 2 * (k - 1), stash, plan.bytes);
    checkPattern(stash, 2 * (k - 1), g);
  }
  work(ctx, workspace + plan.bytes, plan.reps);
  if (k < plan.d - 1) {
    fillPattern(comm, 2 * k, g);
    pdrt_send(ctx, 2 * k, comm, plan.bytes);
  } else {
    float *loss = (float *)(workspace + plan.bytes + bytesOfWork());
    *loss = 1.0f;
    pdrt_report_loss(ctx, loss);
  }
}

// Workspace: the received gradient, then the matmul operands. Comm: the
// sent gradient after the activation (both may be in flight at once).
extern "C" void pd_stage_backward(pdrt_ctx *ctx, char *weights, char *grads,
                                  char *stash, char *workspace, char *comm) {
  int64_t g = backwardCalls++;
  int k = plan.k;
  if (k < plan.d - 1) {
    pdrt_recv(ctx, 2 * k + 1, workspace, plan.bytes);
    checkPattern(workspace, 2 * k + 1, g);
  }
  work(ctx, workspace + plan.bytes, 2 * plan.reps);
  if (plan.tied) {
    float *dtied = (float *)(grads + 64);
    for (int i = 0; i < 16; ++i)
      dtied[i] += 0.01f * (float)(i + 1);
  }
  if (k > 0) {
    fillPattern(comm + plan.bytes, 2 * (k - 1) + 1, g);
    pdrt_send(ctx, 2 * (k - 1) + 1, comm + plan.bytes, plan.bytes);
  }
}
