//===- executor.cc - Runs one stage's schedule ---------------------------------===//
//
// Allocates the stage arena (one 64-byte-aligned block carved into regions,
// as llm.c carves its parameters), loads the initial weights into every
// version, then walks the action list of schedule.h: forwards and backwards
// call the generated functions with the right version and stash slot;
// updates allreduce gradients among replicas, step the optimizer, zero the
// gradients and log the loss. With run --trace each of these is a slice of
// the rank's timeline (exec/trace.h), gathered by rank 0 at the end.
//
//===----------------------------------------------------------------------===//

#include "executor.h"

#include "comm/comm_mpi.h"
#include "cpu/big_alloc.h"
#include "context.h"
#include "onnx_weights.h"
#include "optimizer.h"
#include "schedule.h"
#include "trace.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

namespace pdrt {

int64_t requiredStashSlots(const Manifest &m, int64_t steps) {
  int64_t total = std::max<int64_t>(steps * m.microbatches, 1);
  int64_t lag = m.stages - m.stage; // d - k microbatches in flight.
  switch (m.schedule) {
  case ScheduleKind::TwoBW: return std::min(lag, total);
  case ScheduleKind::Flush: return std::min(lag, m.microbatches);
  case ScheduleKind::GPipe: return m.microbatches;
  }
  return 1;
}

namespace {

struct FreeDeleter {
  void operator()(char *p) const { std::free(p); }
};

class Executor {
public:
  Executor(const Manifest &m, const RunOptions &o, const StageFunctions &f, int rank)
      : m_(m), opts_(o), fns_(f), rank_(rank) {}
  ~Executor() {
    comm_.stop();
    if (ctx_.replicaComm != MPI_COMM_NULL)
      MPI_Comm_free(&ctx_.replicaComm);
    for (auto &tie : ties_)
      MPI_Comm_free(&tie.second);
  }
  Status setup();
  Status run();
  Status finish();

private:
  char *weights(int v) { return arena_.get() + v * m_.regions.weights; }
  char *grads() { return arena_.get() + m_.regions.gradsOffset(); }
  char *optState() { return arena_.get() + m_.regions.optimizerOffset(); }
  char *state() { return arena_.get() + m_.regions.stateOffset(); }
  char *stash(int64_t slot) {
    return arena_.get() + m_.regions.stashOffset() + slot * m_.regions.stashSlot;
  }
  char *workspace() { return arena_.get() + m_.regions.workspaceOffset(); }
  char *comm() { return arena_.get() + m_.regions.commOffset(); }
  char *tieGrads() { return arena_.get() + m_.regions.tieGradsOffset(); }
  bool isLogger() const { return m_.stage == m_.stages - 1 && replica_ == 0; }

  Status allocate();
  Status callStage(const Action &a);
  Status update(const Action &a);
  Status startTiedSums(int64_t step);
  Status waitTiedSums();
  Status finishTiedUpdate();
  void step(const ParamInfo &p, const Action &a, const char *grad);
  Status createTies();
  Status checkTies();
  Status dumpGradients();
  void fillSyntheticWeights();
  Status writeOpTimes();
  Status writeTrace();
  Status logLoss(int64_t j);
  /// A compute-thread trace slice named `name` from `beginNs` to now.
  void traceSlice(const char *name, const char *category, int64_t beginNs,
                  int64_t step, int64_t microbatch = -1);

  const Manifest &m_;
  const RunOptions &opts_;
  const StageFunctions &fns_;
  int rank_, replica_ = 0;
  OptimizerConfig optimizer_;
  pdrt_ctx ctx_;
  DataSource data_;
  std::unique_ptr<char, FreeDeleter> arena_;
  int newestVersion_ = 0;
  /// Tied parameters of this stage and the communicator of their owners
  /// (same replica), in name order on every owner.
  std::vector<std::pair<const ParamInfo *, MPI_Comm>> ties_;
  /// Under 2bw, the update whose tied parameters wait for their gradient
  /// sums (in the tie_grads region) and those sums' requests.
  std::optional<Action> pendingTies_;
  /// The optimizer updates' time and count (run --profile-ops), after the
  /// first step as the op times.
  double updateSeconds_ = 0;
  int64_t updates_ = 0;
  std::vector<std::unique_ptr<CommOp>> tieOps_;
  TraceRecorder trace_;
  /// Declared after everything its thread may touch (destroyed first).
  PipelineComm comm_;
  std::chrono::steady_clock::time_point lastLog_;
  int64_t lastLoggedStep_ = 0;
};

Status Executor::allocate() {
  const Regions &r = m_.regions;
  int64_t total = r.total();
  int64_t need = requiredStashSlots(m_, opts_.steps);
  if (r.stashSlot > 0 && r.stashSlots < need)
    return Status::error(format("manifest: %lld stash slots, schedule %s needs "
                                "%lld at this stage", (long long)r.stashSlots,
                                scheduleName(m_.schedule), (long long)need));
  size_t bytes = bigAllocSize((size_t)std::max<int64_t>(total, 64));
  arena_.reset(static_cast<char *>(bigAlloc(bytes)));
  if (!arena_)
    return Status::error(format("cannot allocate the arena of %lld bytes",
                                (long long)total));
  std::memset(arena_.get(), 0, bytes);
  if (opts_.printMemory && replica_ == 0) {
    std::printf("memory stage=%d arena=%lld weights=%lld versions=%lld "
                "grads=%lld optimizer=%lld state=%lld stash_slot=%lld "
                "stash_slots=%lld workspace=%lld comm=%lld tie_grads=%lld\n", m_.stage,
                (long long)total, (long long)r.weights,
                (long long)r.weightVersions, (long long)r.grads,
                (long long)r.optimizer, (long long)r.state, (long long)r.stashSlot,
                (long long)r.stashSlots, (long long)r.workspace, (long long)r.comm,
                (long long)r.tieGrads);
    std::fflush(stdout);
  }
  return Status::ok();
}

Status Executor::setup() {
  replica_ = rank_ % m_.replicas;
  ctx_.manifest = &m_;
  ctx_.rank = rank_;
  ctx_.replica = replica_;
  ctx_.seed = opts_.seed;
  ctx_.data = &data_;
  ctx_.comm = &comm_;
  ctx_.trace = &trace_;
  optimizer_ = m_.optimizer;
  if (opts_.hasLr)
    optimizer_.lr = opts_.lr;
  int rc = MPI_Comm_split(MPI_COMM_WORLD, m_.stage, replica_, &ctx_.replicaComm);
  if (rc != MPI_SUCCESS)
    return Status::error(mpiErrorString("MPI_Comm_split of the replicas", rc));
  MPI_Comm local;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL,
                          &local) == MPI_SUCCESS) {
    int localRanks = 1;
    MPI_Comm_size(local, &localRanks);
    setBlasThreads(localRanks);
    MPI_Comm_free(&local);
  }
  PDRT_RETURN_IF_ERROR(createTies());
  PDRT_RETURN_IF_ERROR(allocate());
  ctx_.profile = !opts_.profileOps.empty();
  // State (BatchNormalization running statistics) is updated in place by
  // each forward, in microbatch order, whatever weight version it uses.
  ctx_.state = state();
  if (opts_.syntheticWeights) {
    fillSyntheticWeights();
  } else {
    std::string model = opts_.model.empty() ? m_.model : opts_.model;
    if (model.empty())
      return Status::error("no model: pass --model PATH.onnx");
    Status loaded = loadInitialWeights(m_, model, weights(0),
                                       m_.regions.weights,
                                       (int)m_.regions.weightVersions);
    if (loaded.isOk())
      loaded = loadInitialState(m_, model, state());
    if (!loaded.isOk() && opts_.syntheticWeightsIfMissing) {
      std::memset(state(), 0, (size_t)m_.regions.state);
      fillSyntheticWeights();
    } else {
      PDRT_RETURN_IF_ERROR(loaded);
    }
  }
  if (opts_.synthetic)
    data_.openSynthetic(m_, opts_.seed);
  else
    PDRT_RETURN_IF_ERROR(data_.openDir(m_, opts_.dataDir));
  return Status::ok();
}

Status Executor::callStage(const Action &a) {
  bool backward = a.kind == ActionKind::Backward;
  // Sends started by the previous call of the same function must be done
  // before it runs again (it may reuse their buffers).
  PDRT_RETURN_IF_ERROR(comm_.waitSends(backward));
  ctx_.microbatch = a.index;
  ctx_.inBackward = backward;
  auto fn = backward ? fns_.backward : fns_.forward;
  int64_t begin = trace_.on() ? trace_.now() : 0;
  fn(&ctx_, weights(a.version), grads(), stash(a.slot), workspace(), comm());
  if (trace_.on())
    traceSlice(backward ? "backward" : "forward", "compute", begin,
               a.index / m_.microbatches + 1, a.index % m_.microbatches);
  if (ctx_.failed)
    return Status::error(format("%s of step %lld, microbatch %lld of %lld: %s",
                                backward ? "backward" : "forward",
                                (long long)(a.index / m_.microbatches + 1),
                                (long long)(a.index % m_.microbatches),
                                (long long)m_.microbatches, ctx_.error.c_str()));
  return Status::ok();
}

/// One parameter's optimizer step of update `a` with gradient `grad`.
void Executor::step(const ParamInfo &p, const Action &a, const char *grad) {
  float *s1 = reinterpret_cast<float *>(optState() + p.optimizerOffset);
  optimizerStep(optimizer_,
                reinterpret_cast<const float *>(weights(a.version) + p.offset),
                reinterpret_cast<float *>(weights(a.writeVersion) + p.offset),
                reinterpret_cast<const float *>(grad), s1, s1 + p.numel,
                p.numel, a.index + 1);
}

/// Copies the tied parameters' gradients to the tie_grads region and starts
/// summing them over their owners (embedding and LM head get identical
/// updates and stay identical).
Status Executor::startTiedSums(int64_t step) {
  int64_t offset = 0;
  for (auto &[p, comm] : ties_) {
    int64_t bytes = p->numel * 4;
    std::memcpy(tieGrads() + offset, grads() + p->gradOffset, (size_t)bytes);
    int64_t begin = trace_.on() ? trace_.now() : 0;
    std::vector<MPI_Request> requests;
    PDRT_RETURN_IF_ERROR(startAllreduceSum(
        comm, reinterpret_cast<float *>(tieGrads() + offset), p->numel,
        requests));
    for (MPI_Request request : requests) {
      auto op = std::make_unique<CommOp>();
      op->request = request;
      op->what = "MPI_Iallreduce of tied gradients";
      op->event.name = "allreduce ties";
      op->event.category = "collective";
      op->event.beginNs = begin;
      op->event.step = step;
      op->event.bytes = bytes;
      comm_.track(op.get());
      tieOps_.push_back(std::move(op));
    }
    offset += (bytes + 63) / 64 * 64;
  }
  return Status::ok();
}

/// Completes the tied gradients' sums started by startTiedSums.
Status Executor::waitTiedSums() {
  int64_t begin = trace_.on() ? trace_.now() : 0;
  bool waited = false;
  Status s;
  for (auto &op : tieOps_) {
    waited |= !op->done.load(std::memory_order_acquire);
    s = comm_.wait(*op);
    if (!s.isOk())
      break;
  }
  if (trace_.on() && waited)
    traceSlice("wait ties", "blocked", begin, -1);
  if (!s.isOk())
    for (auto &op : tieOps_)
      (void)op.release(); // May still be with MPI; MPI_Abort follows.
  tieOps_.clear();
  return s;
}

/// The tied parameters' part of the pending 2bw update, once their sums
/// are complete.
Status Executor::finishTiedUpdate() {
  if (!pendingTies_)
    return Status::ok();
  Action a = *pendingTies_;
  pendingTies_.reset();
  PDRT_RETURN_IF_ERROR(waitTiedSums());
  int64_t offset = 0;
  for (auto &[p, comm] : ties_) {
    step(*p, a, tieGrads() + offset);
    offset += (p->numel * 4 + 63) / 64 * 64;
  }
  return Status::ok();
}

/// Sums the gradients over the replicas and turns W(j) and them into
/// W(j+1). Under flush and GPipe the tied parameters' gradients are summed
/// over their owner stages first. Under 2bw their sum only starts here, on
/// a copy, and their step waits until W(j+1) is first read (the first
/// forward of batch j+2, DESIGN.md section 4): the owners need not meet at
/// the update, which would stall the pipeline like a flush (the first and
/// the last stage reach update j d-1 microbatches apart) or deadlock it (a
/// stage between them blocked sending to one that waits).
Status Executor::update(const Action &a) {
  int64_t begin = trace_.on() ? trace_.now() : 0;
  PDRT_RETURN_IF_ERROR(finishTiedUpdate());
  float *g = reinterpret_cast<float *>(grads());
  int64_t reduceBegin = trace_.on() ? trace_.now() : 0;
  PDRT_RETURN_IF_ERROR(allreduceSum(ctx_.replicaComm, g, m_.regions.grads / 4));
  if (trace_.on() && m_.replicas > 1)
    traceSlice("allreduce replicas", "collective", reduceBegin, a.index + 1);
  bool defer = m_.schedule == ScheduleKind::TwoBW && !ties_.empty();
  if (defer) {
    PDRT_RETURN_IF_ERROR(startTiedSums(a.index + 1));
    pendingTies_ = a;
    // Gradients dumped for inspection include the summed tied ones.
    if (a.index == 0 && replica_ == 0 && !opts_.dumpGrads.empty()) {
      PDRT_RETURN_IF_ERROR(waitTiedSums());
      int64_t offset = 0;
      for (auto &[p, comm] : ties_) {
        std::memcpy(grads() + p->gradOffset, tieGrads() + offset,
                    (size_t)p->numel * 4);
        offset += (p->numel * 4 + 63) / 64 * 64;
      }
    }
  } else if (!ties_.empty()) {
    int64_t tieBegin = trace_.on() ? trace_.now() : 0;
    for (auto &[p, comm] : ties_)
      PDRT_RETURN_IF_ERROR(allreduceSum(
          comm, reinterpret_cast<float *>(grads() + p->gradOffset), p->numel));
    if (trace_.on())
      traceSlice("allreduce ties", "collective", tieBegin, a.index + 1);
  }
  if (a.index == 0 && replica_ == 0 && !opts_.dumpGrads.empty())
    PDRT_RETURN_IF_ERROR(dumpGradients());
  int64_t stepBegin = trace_.on() ? trace_.now() : 0;
  for (const ParamInfo &p : m_.params)
    if (!defer || p.owners.size() <= 1)
      step(p, a, grads() + p.gradOffset);
  std::memset(grads(), 0, (size_t)m_.regions.grads);
  if (trace_.on())
    traceSlice("optimizer", "compute", stepBegin, a.index + 1);
  newestVersion_ = a.writeVersion;
  if (m_.stage == m_.stages - 1)
    PDRT_RETURN_IF_ERROR(logLoss(a.index));
  if (trace_.on())
    traceSlice("update", "compute", begin, a.index + 1);
  return Status::ok();
}

void Executor::traceSlice(const char *name, const char *category,
                          int64_t beginNs, int64_t step, int64_t microbatch) {
  TraceEvent e;
  e.name = name;
  e.category = category;
  e.beginNs = beginNs;
  e.endNs = trace_.now();
  e.step = step;
  e.microbatch = microbatch;
  trace_.record(TraceThread::Compute, e);
}

/// Small pseudo-random weights (uniform in [-0.02, 0.02), the same on every
/// rank for a parameter), in every weight version; state stays zero.
void Executor::fillSyntheticWeights() {
  for (const ParamInfo &p : m_.params) {
    uint64_t x = std::hash<std::string>()(p.name) | 1;
    auto *w = reinterpret_cast<float *>(weights(0) + p.offset);
    for (int64_t i = 0; i < p.numel; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      w[i] = 0.04f * ((float)(x >> 40) / (float)(1 << 24)) - 0.02f;
    }
  }
  for (int v = 1; v < m_.regions.weightVersions; ++v)
    std::memcpy(weights(v), weights(0), (size_t)m_.regions.weights);
}

/// run --profile-ops: each op's total seconds and calls after the first
/// step, and the optimizer updates', every rank's gathered by rank 0 into
/// one file: {"ranks": [{"rank": R, "stage": S, "replica": W, "ops":
/// [{"id": N, "seconds": T, "calls": C}, ...], "update": {"seconds": T,
/// "calls": C}}, ...]}, ranks in order (the ids: the profiling stage's, or
/// the plan's ops.json under pdc --instrument-ops). An op that ran GEMMs
/// lists their shapes ("gemms": [[m, n, k, trans_a, trans_b], ...]); under
/// PDRT_GEMM_LIBRARY=alternate each op also has "by_library": {"onednn":
/// {"seconds": T, "calls": C}, "openblas": {...}}.
Status Executor::writeOpTimes() {
  std::string mine = format("{\"rank\": %d, \"stage\": %d, \"replica\": %d, "
                            "\"ops\": [",
                            rank_, m_.stage, replica_);
  bool first = true;
  for (const auto &[id, entry] : ctx_.opTimes) {
    mine += format("%s\n    {\"id\": %lld, \"seconds\": %.9g, \"calls\": %lld",
                   first ? "" : ",", (long long)id, entry.first,
                   (long long)entry.second);
    auto gemms = ctx_.opGemms.find(id);
    if (gemms != ctx_.opGemms.end()) {
      mine += ", \"gemms\": [";
      for (size_t i = 0; i < gemms->second.size(); ++i) {
        const GemmShape2D &g = gemms->second[i];
        mine += format("%s[%lld, %lld, %lld, %d, %d]", i ? ", " : "",
                       (long long)g.m, (long long)g.n, (long long)g.k,
                       (int)g.transA, (int)g.transB);
      }
      mine += "]";
    }
    auto byLibrary = ctx_.opTimesByLibrary.find(id);
    if (byLibrary != ctx_.opTimesByLibrary.end()) {
      const auto &[oneDnn, openBlas] = byLibrary->second;
      mine += format(", \"by_library\": {\"onednn\": {\"seconds\": %.9g, "
                     "\"calls\": %lld}, \"openblas\": {\"seconds\": %.9g, "
                     "\"calls\": %lld}}",
                     oneDnn.first, (long long)oneDnn.second, openBlas.first,
                     (long long)openBlas.second);
    }
    mine += "}";
    first = false;
  }
  mine += format("],\n    \"update\": {\"seconds\": %.9g, \"calls\": %lld}}",
                 updateSeconds_, (long long)updates_);
  std::vector<std::string> all;
  PDRT_RETURN_IF_ERROR(gatherToRankZero(std::move(mine), rank_,
                                        m_.stages * m_.replicas,
                                        kTagOpTimesSize, kTagOpTimesData, &all));
  if (rank_ != 0)
    return Status::ok();
  // pdc marks every stage of a plan or none.
  if (ctx_.opTimes.empty())
    std::fprintf(stderr, "pdrt: warning: --profile-ops: no op was timed: the "
                         "stages have no marks (compile the plan with pdc "
                         "--instrument-ops)\n");
  std::string doc = "{\"ranks\": [";
  for (size_t i = 0; i < all.size(); ++i)
    doc += (i ? ",\n  " : "\n  ") + all[i];
  doc += "\n]}\n";
  FILE *f = std::fopen(opts_.profileOps.c_str(), "w");
  bool ok = f && std::fwrite(doc.data(), 1, doc.size(), f) == doc.size();
  if (f)
    ok = std::fclose(f) == 0 && ok;
  return ok ? Status::ok()
            : Status::error(format("cannot write --profile-ops file '%s'",
                                   opts_.profileOps.c_str()));
}

/// run --trace: rank 0 gathers every rank's events and writes the file.
Status Executor::writeTrace() {
  std::string mine = traceEventsJson(
      rank_, format("stage %d replica %d (rank %d)", m_.stage, replica_, rank_),
      trace_.compute(), trace_.comm());
  std::vector<std::string> fragments;
  PDRT_RETURN_IF_ERROR(gatherToRankZero(std::move(mine), rank_,
                                        m_.stages * m_.replicas, kTagTraceSize,
                                        kTagTraceData, &fragments));
  return rank_ == 0 ? writeTraceFile(opts_.trace, fragments) : Status::ok();
}

Status Executor::dumpGradients() {
  for (const ParamInfo &p : m_.params) {
    std::string name = p.name;
    for (size_t at = name.find('/'); at != std::string::npos;
         at = name.find('/', at + 2))
      name.replace(at, 1, "__");
    PDRT_RETURN_IF_ERROR(writeNpy(opts_.dumpGrads + "/" + name + ".npy",
                                  DType::Float32, p.shape,
                                  grads() + p.gradOffset));
  }
  return Status::ok();
}

Status Executor::logLoss(int64_t j) {
  double sum = 0.0;
  auto it = ctx_.stepLossSum.find(j);
  if (it != ctx_.stepLossSum.end()) {
    sum = it->second;
    ctx_.stepLossSum.erase(it);
  }
  if (m_.replicas > 1)
    PDRT_RETURN_IF_ERROR(allreduceSum(ctx_.replicaComm, &sum));
  if (!isLogger() || ((j + 1) % opts_.logEvery != 0 && j + 1 != opts_.steps))
    return Status::ok();
  auto now = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(now - lastLog_).count();
  int64_t steps = j + 1 - lastLoggedStep_;
  lastLog_ = now;
  lastLoggedStep_ = j + 1;
  double samples = (double)(m_.microbatch * m_.microbatches * m_.replicas * steps);
  std::printf("step %lld loss %.6f ms/step %.3f samples/s %.1f\n", (long long)(j + 1),
              sum / (double)(m_.microbatches * m_.replicas),
              1e3 * seconds / (double)steps, seconds > 0 ? samples / seconds : 0.0);
  std::fflush(stdout);
  return Status::ok();
}

Status Executor::run() {
  std::vector<Action> actions =
      buildSchedule(m_.schedule, m_.stages, m_.stage, m_.microbatches, opts_.steps,
                    m_.regions.stashSlots);
  int64_t calls[2] = {0, 0};
  for (const Action &a : actions)
    if (a.kind != ActionKind::Update)
      ++calls[a.kind == ActionKind::Backward];
  PDRT_RETURN_IF_ERROR(
      comm_.setup(m_, replica_, opts_.comm, &trace_, calls[0], calls[1]));
  if (!opts_.trace.empty()) {
    // A common start: times of all ranks are comparable.
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return Status::error(mpiErrorString("MPI_Barrier before tracing", rc));
    trace_.start();
  }
  comm_.start();
  lastLog_ = std::chrono::steady_clock::now();
  for (const Action &a : actions) {
    if (a.kind == ActionKind::Update) {
      auto begin = std::chrono::steady_clock::now();
      PDRT_RETURN_IF_ERROR(update(a));
      updateSeconds_ += std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - begin)
                            .count();
      ++updates_;
      // Op timing leaves out the first step (caches, first-touch pages).
      if (a.index == 0 && opts_.steps > 1) {
        ctx_.opTimes.clear();
        ctx_.opGemms.clear();
        ctx_.opTimesByLibrary.clear();
        updateSeconds_ = 0;
        updates_ = 0;
      }
      continue;
    }
    // The first forward reading the pending update's weights.
    if (pendingTies_ && a.kind == ActionKind::Forward &&
        a.version == pendingTies_->writeVersion)
      PDRT_RETURN_IF_ERROR(finishTiedUpdate());
    PDRT_RETURN_IF_ERROR(callStage(a));
  }
  PDRT_RETURN_IF_ERROR(finishTiedUpdate());
  if (ctx_.profile)
    PDRT_RETURN_IF_ERROR(writeOpTimes());
  return comm_.finish();
}

Status Executor::createTies() {
  std::vector<const ParamInfo *> tied;
  for (const ParamInfo &p : m_.params)
    if (p.owners.size() > 1)
      tied.push_back(&p);
  std::sort(tied.begin(), tied.end(), [](const ParamInfo *a, const ParamInfo *b) {
    return a->name < b->name;
  });
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  for (const ParamInfo *p : tied) {
    std::vector<int> ranks;
    for (int64_t owner : p->owners)
      ranks.push_back((int)(owner * m_.replicas + replica_));
    MPI_Group group;
    MPI_Comm comm;
    MPI_Group_incl(world, (int)ranks.size(), ranks.data(), &group);
    int tag = (int)(std::hash<std::string>()(p->name) % 30000);
    int rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm);
    MPI_Group_free(&group);
    if (rc != MPI_SUCCESS)
      return Status::error(mpiErrorString(
          ("MPI_Comm_create_group for tied '" + p->name + "'").c_str(), rc));
    ties_.emplace_back(p, comm);
  }
  MPI_Group_free(&world);
  return Status::ok();
}

Status Executor::checkTies() {
  for (auto &[p, comm] : ties_)
    for (int v = 0; v < m_.regions.weightVersions; ++v) {
      const auto *words = reinterpret_cast<const uint32_t *>(weights(v) + p->offset);
      std::vector<uint32_t> all(words, words + p->numel), any(all);
      MPI_Allreduce(MPI_IN_PLACE, all.data(), (int)all.size(), MPI_UINT32_T,
                    MPI_BAND, comm);
      MPI_Allreduce(MPI_IN_PLACE, any.data(), (int)any.size(), MPI_UINT32_T,
                    MPI_BOR, comm);
      if (all != any)
        return Status::error(format("tied parameter '%s' differs between its "
                                    "owner stages (weight version %d)",
                                    p->name.c_str(), v));
    }
  return Status::ok();
}

Status Executor::finish() {
  if (opts_.checkTies)
    PDRT_RETURN_IF_ERROR(checkTies());
  if (!opts_.saveOnnx.empty()) {
    std::string model = opts_.model.empty() ? m_.model : opts_.model;
    PDRT_RETURN_IF_ERROR(saveTrainedModel(m_, rank_, weights(newestVersion_),
                                          state(), model, opts_.saveOnnx));
  }
  if (!opts_.trace.empty())
    PDRT_RETURN_IF_ERROR(writeTrace());
  int rc = MPI_Barrier(MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS)
    return Status::error(mpiErrorString("MPI_Barrier at the end of training", rc));
  if (isLogger()) {
    std::printf("done %lld steps\n", (long long)opts_.steps);
    std::fflush(stdout);
  }
  return Status::ok();
}

} // namespace

Status runStage(const Manifest &m, const RunOptions &opts,
                const StageFunctions &fns, int rank) {
  Executor e(m, opts, fns, rank);
  PDRT_RETURN_IF_ERROR(e.setup());
  PDRT_RETURN_IF_ERROR(e.run());
  return e.finish();
}

} // namespace pdrt
