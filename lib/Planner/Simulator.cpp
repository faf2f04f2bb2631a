//===- Simulator.cpp - Discrete-event simulation of a pipeline ------------===//
//
// Each stage walks its action list in order. An action is *posted* when its
// stage is free and the sends of the stage's previous action of the same
// kind are delivered (the runtime waits for them before reusing their
// buffers); a tensor it receives arrives `seconds` after both its sender's
// action ended and the receiver posted; the action computes from the last
// arrival. Sweeps advance every stage as far as the known times allow; a
// sweep without progress before every list is done is a deadlock.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/Simulator.h"
#include "exec/schedule.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::pd;

namespace {

/// Times of every simulated action, by kind, stage and microbatch (or
/// batch); NaN until known.
struct Timeline {
  std::vector<std::vector<double>> posted[3], ended[3];

  void init(int stages, int64_t indices) {
    for (int k = 0; k < 3; ++k) {
      posted[k].assign(stages, std::vector<double>(indices, kUnset));
      ended[k].assign(stages, std::vector<double>(indices, kUnset));
    }
  }
  static std::optional<double> get(const std::vector<std::vector<double>> &m,
                                   int64_t i, int stage) {
    const std::vector<double> &times = m[stage];
    if (i < 0 || i >= (int64_t)times.size() || std::isnan(times[i]))
      return std::nullopt;
    return times[i];
  }
  std::optional<double> postedAt(SimActionKind k, int64_t i, int stage) const {
    return get(posted[(int)k], i, stage);
  }
  std::optional<double> endedAt(SimActionKind k, int64_t i, int stage) const {
    return get(ended[(int)k], i, stage);
  }
  /// Records a posting time unless one is known; whether it was new.
  bool post(SimActionKind k, int64_t i, int stage, double t) {
    double &slot = posted[(int)k][stage][i];
    if (!std::isnan(slot))
      return false;
    slot = t;
    return true;
  }
  static constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
};

/// What a blocked stage waits for (formatted only for a deadlock report).
struct Wait {
  enum class Reason { Receiver, Sender, TiedUpdate, TiedSum };
  Reason reason = Reason::Sender;
  int stage = 0, other = 0;
  SimActionKind kind = SimActionKind::Forward;
  int64_t index = 0, previous = 0;
};

struct StageState {
  size_t pc = 0;
  double freeAt = 0;
  /// Index of the last forward and backward, whose sends the next one of
  /// the same kind waits for.
  std::optional<int64_t> lastForward, lastBackward;
  /// Under 2bw, the update whose tied-gradient sums (and the tied
  /// parameters' step) the stage completes before the first forward reading
  /// its weights (batch j+2's) or its next update.
  std::optional<int64_t> pendingTie;
  /// The microbatch forwarded into each stash slot and not yet
  /// back-propagated (-1: free).
  std::vector<int64_t> liveSlots;
  int64_t inFlight = 0;
};

class PipelineSimulation {
public:
  explicit PipelineSimulation(const SimInput &in) : in(in) {
    int d = (int)in.stages.size();
    actions = in.actions.empty() ? runtimeActions() : in.actions;
    state.resize(d);
    result.peakInFlight.assign(d, 0);
    result.busyFraction.assign(d, 0);
    int64_t indices = 1;
    for (const std::vector<SimAction> &list : actions)
      for (const SimAction &a : list)
        indices = std::max(indices, a.index + 1);
    times.init(d, indices);
    for (int k = 0; k < 2; ++k) {
      incoming[k].resize(d);
      outgoing[k].resize(d);
    }
    for (const SimTransfer &tr : in.transfers) {
      incoming[tr.forward].at(tr.to).push_back(&tr);
      outgoing[tr.forward].at(tr.from).push_back(&tr);
    }
  }

  SimResult run();

private:
  std::vector<std::vector<SimAction>> runtimeActions() const;
  /// Tries to simulate stage k's next action; false if it must wait (and
  /// `why` says for what).
  bool step(int k, Wait &why);
  /// Records that stage k posted `a` (waiting for what it receives).
  void post(int k, const SimAction &a, double t);
  /// When the tied sums of update `j` started by stage k are complete (all
  /// owners posted their update j), or nullopt (and `why`) if one has not.
  std::optional<double> tiesReady(int k, int64_t j, Wait &why);
  std::optional<double> postTime(int k, const SimAction &a, Wait &why);
  double duration(int k, const SimAction &a) const;
  void trackStash(int k, const SimAction &a);
  void summarize();

  const SimInput &in;
  std::vector<std::vector<SimAction>> actions;
  std::vector<StageState> state;
  Timeline times;
  /// Transfers by direction (1: forward) and receiving / sending stage.
  std::vector<std::vector<const SimTransfer *>> incoming[2], outgoing[2];
  SimResult result;
  /// Set when a blocked action is posted for the first time: the sweep
  /// made progress (its senders may now deliver).
  bool newPost = false;
};

} // namespace

static const char *kindName(SimActionKind k) {
  switch (k) {
  case SimActionKind::Forward:
    return "forward";
  case SimActionKind::Backward:
    return "backward";
  case SimActionKind::Update:
    return "update";
  }
  return "?";
}

static std::string describe(const Wait &w) {
  switch (w.reason) {
  case Wait::Reason::Receiver:
    return llvm::formatv("stage {0} waits at {1} {2} for stage {3} to "
                         "receive {1} {4}",
                         w.stage, kindName(w.kind), w.index, w.other,
                         w.previous);
  case Wait::Reason::Sender:
    return llvm::formatv("stage {0} waits at {1} {2} for stage {3}'s {1} {2}",
                         w.stage, kindName(w.kind), w.index, w.other);
  case Wait::Reason::TiedUpdate:
    return llvm::formatv("stage {0} waits at update {1} for stage {2}'s "
                         "update (tied parameters)",
                         w.stage, w.index, w.other);
  case Wait::Reason::TiedSum:
    return llvm::formatv("stage {0} waits before its next backward for "
                         "stage {1}'s update {2} (tied parameters)",
                         w.stage, w.other, w.index);
  }
  return "";
}

std::vector<std::vector<SimAction>>
PipelineSimulation::runtimeActions() const {
  int d = (int)in.stages.size();
  pdrt::ScheduleKind kind = in.schedule == SimSchedule::TwoBW
                                ? pdrt::ScheduleKind::TwoBW
                            : in.schedule == SimSchedule::Flush
                                ? pdrt::ScheduleKind::Flush
                                : pdrt::ScheduleKind::GPipe;
  std::vector<std::vector<SimAction>> lists(d);
  for (int k = 0; k < d; ++k) {
    int64_t slots = in.stashSlots.empty() ? in.microbatches * in.steps
                                          : in.stashSlots[k];
    for (const pdrt::Action &a :
         pdrt::buildSchedule(kind, d, k, in.microbatches, in.steps, slots)) {
      SimActionKind sk = a.kind == pdrt::ActionKind::Forward ? SimActionKind::Forward
                         : a.kind == pdrt::ActionKind::Backward
                             ? SimActionKind::Backward
                             : SimActionKind::Update;
      lists[k].push_back({sk, a.index, a.slot});
    }
  }
  return lists;
}

double PipelineSimulation::duration(int k, const SimAction &a) const {
  const SimStage &s = in.stages[k];
  switch (a.kind) {
  case SimActionKind::Forward:
    return s.forward;
  case SimActionKind::Backward:
    return s.backward;
  case SimActionKind::Update:
    return s.update + s.allreduce;
  }
  return 0;
}

/// When stage k can post `a`: its previous action is done and the sends of
/// its previous action of the same kind are delivered.
std::optional<double> PipelineSimulation::postTime(int k, const SimAction &a,
                                                   Wait &why) {
  StageState &st = state[k];
  double t = st.freeAt;
  if (a.kind == SimActionKind::Update)
    return t;
  bool fwd = a.kind == SimActionKind::Forward;
  std::optional<int64_t> prev = fwd ? st.lastForward : st.lastBackward;
  if (!prev)
    return t;
  for (const SimTransfer *out : outgoing[fwd][k]) {
    const SimTransfer &tr = *out;
    if (tr.eager)
      continue;
    std::optional<double> recvPosted = times.postedAt(a.kind, *prev, tr.to);
    if (!recvPosted) {
      why = {Wait::Reason::Receiver, k, tr.to, a.kind, a.index, *prev};
      return std::nullopt;
    }
    double sent = *times.endedAt(a.kind, *prev, k);
    t = std::max(t, std::max(sent, *recvPosted) + tr.seconds);
  }
  return t;
}

bool PipelineSimulation::step(int k, Wait &why) {
  StageState &st = state[k];
  const SimAction &a = actions[k][st.pc];
  std::optional<double> posted = postTime(k, a, why);
  if (!posted)
    return false;
  double begin = *posted;
  bool twoBW = in.schedule == SimSchedule::TwoBW;
  bool readsPending =
      st.pendingTie &&
      ((a.kind == SimActionKind::Forward &&
        a.index / in.microbatches >= *st.pendingTie + 2) ||
       a.kind == SimActionKind::Update);
  if (readsPending) {
    std::optional<double> ready = tiesReady(k, *st.pendingTie, why);
    if (!ready) {
      post(k, a, *posted);
      return false;
    }
    begin = std::max(begin, *ready);
  }
  std::optional<int64_t> startsTie;
  if (a.kind == SimActionKind::Update && twoBW) {
    // The tied sums are only started here.
    if (llvm::any_of(in.ties, [&](const SimTie &t) {
          return llvm::is_contained(t.stages, k);
        }))
      startsTie = a.index;
  } else if (a.kind == SimActionKind::Update) {
    // Tied copies sum their gradients: every owner's update starts together.
    for (const SimTie &tie : in.ties) {
      if (!llvm::is_contained(tie.stages, k))
        continue;
      for (int other : tie.stages) {
        if (other == k)
          continue;
        std::optional<double> p = times.postedAt(a.kind, a.index, other);
        if (!p) {
          // Post ours so that the other owner can proceed.
          post(k, a, *posted);
          why = {Wait::Reason::TiedUpdate, k, other, a.kind, a.index, 0};
          return false;
        }
        begin = std::max(begin, *p);
      }
      begin += tie.seconds;
    }
  } else {
    bool fwd = a.kind == SimActionKind::Forward;
    for (const SimTransfer *t : incoming[fwd][k]) {
      const SimTransfer &tr = *t;
      std::optional<double> sent = times.endedAt(a.kind, a.index, tr.from);
      if (!sent) {
        post(k, a, *posted);
        why = {Wait::Reason::Sender, k, tr.from, a.kind, a.index, 0};
        return false;
      }
      begin = std::max(begin, std::max(*sent, *posted) + tr.seconds);
    }
  }
  double end = begin + duration(k, a);
  times.posted[(int)a.kind][k][a.index] = *posted;
  times.ended[(int)a.kind][k][a.index] = end;
  result.events.push_back({k, a, begin, end});
  trackStash(k, a);
  if (readsPending)
    st.pendingTie.reset();
  if (startsTie)
    st.pendingTie = startsTie;
  if (a.kind == SimActionKind::Forward)
    st.lastForward = a.index;
  else if (a.kind == SimActionKind::Backward)
    st.lastBackward = a.index;
  st.freeAt = end;
  ++st.pc;
  return true;
}

std::optional<double> PipelineSimulation::tiesReady(int k, int64_t j,
                                                    Wait &why) {
  double ready = 0;
  for (const SimTie &tie : in.ties) {
    if (!llvm::is_contained(tie.stages, k))
      continue;
    double all = 0;
    for (int other : tie.stages) {
      std::optional<double> p = times.postedAt(SimActionKind::Update, j, other);
      if (!p) {
        why = {Wait::Reason::TiedSum, k, other, SimActionKind::Update, j, 0};
        return std::nullopt;
      }
      all = std::max(all, *p);
    }
    ready = std::max(ready, all + tie.seconds);
  }
  return ready;
}

void PipelineSimulation::post(int k, const SimAction &a, double t) {
  newPost |= times.post(a.kind, a.index, k, t);
}

void PipelineSimulation::trackStash(int k, const SimAction &a) {
  StageState &st = state[k];
  if (a.kind == SimActionKind::Forward) {
    if (a.slot >= (int64_t)st.liveSlots.size())
      st.liveSlots.resize(a.slot + 1, -1);
    int64_t &holder = st.liveSlots[a.slot];
    if (holder >= 0 && result.stashOverflow.empty())
      result.stashOverflow = llvm::formatv(
          "stage {0}: forward {1} overwrites stash slot {2} of microbatch "
          "{3}, not yet back-propagated",
          k, a.index, a.slot, holder);
    if (holder < 0)
      holder = a.index;
    result.peakInFlight[k] = std::max(result.peakInFlight[k], ++st.inFlight);
  } else if (a.kind == SimActionKind::Backward) {
    if (a.slot >= 0 && a.slot < (int64_t)st.liveSlots.size())
      st.liveSlots[a.slot] = -1;
    --st.inFlight;
  }
}

SimResult PipelineSimulation::run() {
  int d = (int)in.stages.size();
  while (true) {
    bool progress = false, done = true;
    newPost = false;
    std::vector<std::string> waits;
    for (int k = 0; k < d; ++k) {
      Wait why;
      while (state[k].pc < actions[k].size() && step(k, why))
        progress = true;
      if (state[k].pc < actions[k].size()) {
        done = false;
        waits.push_back(describe(why));
      }
    }
    if (done)
      break;
    if (!progress && !newPost) {
      result.deadlock = llvm::join(waits, "; ");
      return result;
    }
  }
  summarize();
  return result;
}

void PipelineSimulation::summarize() {
  int d = (int)in.stages.size();
  for (const SimEvent &e : result.events)
    result.totalSeconds = std::max(result.totalSeconds, e.end);
  // The end of batch j: the last stage to finish its update j.
  std::map<int64_t, double> batchEnd;
  for (const SimEvent &e : result.events)
    if (e.action.kind == SimActionKind::Update)
      batchEnd[e.action.index] = std::max(batchEnd[e.action.index], e.end);
  // The steady state: not the first batch (2BW's warm-up) nor the last
  // (its cool-down), when there are enough.
  double from = 0, to = result.totalSeconds;
  std::vector<double> ends;
  for (auto &entry : batchEnd)
    ends.push_back(entry.second);
  if (ends.size() >= 2) {
    size_t last = ends.size() >= 4 ? ends.size() - 2 : ends.size() - 1;
    from = ends[last - 1];
    to = ends[last];
  }
  result.stepSeconds = to - from;
  if (result.stepSeconds <= 0)
    return;
  std::vector<double> busy(d, 0);
  for (const SimEvent &e : result.events)
    busy[e.stage] +=
        std::max(0.0, std::min(e.end, to) - std::max(e.start, from));
  double mean = 0;
  for (int k = 0; k < d; ++k) {
    result.busyFraction[k] = busy[k] / result.stepSeconds;
    mean += result.busyFraction[k] / d;
  }
  result.bubbleFraction = std::max(0.0, 1 - mean);
}

SimResult mlir::pd::simulatePipeline(const SimInput &input) {
  return PipelineSimulation(input).run();
}

void mlir::pd::writeChromeTrace(const SimResult &result,
                                llvm::raw_ostream &os) {
  // Streamed: a long pipeline has hundreds of thousands of events.
  llvm::json::OStream j(os, /*IndentSize=*/0);
  j.object([&] {
    j.attributeArray("traceEvents", [&] {
      for (const SimEvent &e : result.events)
        j.object([&] {
          j.attribute("name", std::string(kindName(e.action.kind)) + " " +
                                  std::to_string(e.action.index));
          j.attribute("cat", kindName(e.action.kind));
          j.attribute("ph", "X");
          j.attribute("pid", 0);
          j.attribute("tid", e.stage);
          j.attribute("ts", e.start * 1e6);
          j.attribute("dur", (e.end - e.start) * 1e6);
        });
      for (size_t k = 0; k < result.peakInFlight.size(); ++k)
        j.object([&] {
          j.attribute("name", "thread_name");
          j.attribute("ph", "M");
          j.attribute("pid", 0);
          j.attribute("tid", (int64_t)k);
          j.attributeObject("args", [&] {
            j.attribute("name", "stage " + std::to_string(k));
          });
        });
    });
    j.attribute("displayTimeUnit", "ms");
  });
}
