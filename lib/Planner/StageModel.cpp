//===- StageModel.cpp - Memory and time of a split, without compiling it --===//
//
// Each stage's forward and backward function is rebuilt as a list of
// virtual ops in the order the passes emit them:
//  - pd-partition-stages: compute ops by their chain position, sources
//    (parameter reads, constants) with their first forward user, gradient
//    ops with the op they differentiate;
//  - pd-outline-stages: operands materialised at first use (pd.input, a
//    re-read source, or a pd.recv), each clone followed by its sends, the
//    loss report, the stash returned by the forward and taken by the
//    backward;
//  - pd-recompute-forward: the backward starts with the forward ops its
//    stash needs, taking the stage inputs; the forward returns only those
//    and loses its now-dead pure ops;
//  - pd-fuse-bias-gradients: a bias gradient summed by the GELU or
//    layer-norm gradient it reads when both are in the backward;
//  - pd-concat-in-place: the GEMM results a concat joins written into its
//    workspace slot, the concat itself free;
//  - pd-accumulate-in-place and pd-allocate-buffers: regions in the pass's
//    order (parameters, state, stash, comm) and the workspace packed
//    first-fit over live ranges, gradient kernels writing over operands
//    that die at them.
// The buffer passes' part lives in StageArena.cpp, the functions' types in
// StageFunctions.h. Keep both in step with those passes; pdc compares the
// model with every plan it writes and tests run that comparison over the
// model zoo.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/StageModel.h"
#include "StageFunctions.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <set>

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::stage_model;
using GraphOp = ProgramGraph::OpKind;

namespace {

/// The forward ops a recomputing backward reruns, and the stage inputs
/// they start from (values of the forward function).
struct Slice {
  std::vector<int32_t> ops, inputs;
};

class Modeler {
public:
  Modeler(const ProgramGraph &g, ArrayRef<int64_t> cuts,
          ArrayRef<int64_t> recompute, Optimizer optimizer)
      : g(g), cuts(cuts), numStages(cuts.size() + 1),
        recompute(recompute.begin(), recompute.end()),
        optimizerStates(optimizerStateTensors(optimizer)) {}

  llvm::Expected<PipelineSummary> run();

private:
  llvm::Error assignStages();
  llvm::Error assignChannels();
  llvm::Error modelStage(int64_t s, StageSummary &out,
                         std::vector<std::vector<int64_t>> &owners);
  std::vector<int32_t> savedValues(int64_t s);
  void buildForward(int64_t s, ArrayRef<int32_t> saved, VFn &fn);
  void buildBackward(int64_t s, ArrayRef<int32_t> saved, const VFn &fwd,
                     const Slice *slice, VFn &fn);
  llvm::Expected<Slice> computeSlice(int64_t s, const VFn &fwd) const;
  void stashOnlyInputs(const Slice &slice, VFn &fwd) const;
  int32_t materialize(VFn &fn, int32_t v, int64_t s);
  void cloneInto(VFn &fn, int32_t op, int64_t s);
  int32_t addOp(VFn &fn, VKind kind, int32_t orig, ArrayRef<int32_t> operands,
                ArrayRef<int64_t> resultBytes, int32_t peer = -1);
  bool isPure(const VOp &op) const;
  void allocate(int64_t s, VFn &fwd, VFn &bwd, StageSummary &out,
                std::vector<std::vector<int64_t>> &owners);

  // The graph-value -> function-value map of the function being built.
  void beginFunction() { ++stamp; }
  int32_t lookup(int32_t v) const {
    return mapStamp[v] == stamp ? mapped[v] : -1;
  }
  void map(int32_t v, int32_t fv) {
    mapStamp[v] = stamp;
    mapped[v] = fv;
  }

  const ProgramGraph &g;
  ArrayRef<int64_t> cuts;
  int64_t numStages;
  std::set<int64_t> recompute;
  int64_t optimizerStates;
  std::vector<int32_t> stageOf;
  /// Per stage: its forward ops that are not sources, and its gradient
  /// ops, in program order.
  std::vector<std::vector<int32_t>> forwardOps, backwardOps;
  /// Stages receiving each value (ascending), by value.
  std::vector<uint32_t> receiverBegin;
  std::vector<int32_t> receivers;
  std::vector<uint32_t> mapStamp;
  std::vector<int32_t> mapped;
  uint32_t stamp = 0;
  /// The last stage that counted each pd.state.
  std::vector<int64_t> stateStage;
};

} // namespace

static llvm::Error modelError(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

/// pd-partition-stages' placement: compute ops by the cuts; other forward
/// ops (sources) on the first stage of their forward users; gradient ops
/// with the op they differentiate.
llvm::Error Modeler::assignStages() {
  int32_t n = g.ops.size();
  std::vector<int32_t> forwardStage(n, 0);
  for (int32_t i = 0; i < n; ++i)
    if (g.ops[i].chainPos >= 0)
      forwardStage[i] =
          std::upper_bound(cuts.begin(), cuts.end(), g.ops[i].chainPos) -
          cuts.begin();
  for (int32_t i = 0; i < n; ++i) {
    const ProgramGraph::Op &op = g.ops[i];
    if (op.backward || op.chainPos >= 0)
      continue;
    int32_t lo = -1, hi = -1;
    for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v)
      for (int32_t user : g.usersOf(v)) {
        if (g.ops[user].backward)
          continue;
        int32_t st = forwardStage[user];
        lo = lo < 0 ? st : std::min(lo, st);
        hi = std::max(hi, st);
      }
    if (lo != hi && op.kind == GraphOp::ParamRef)
      return modelError(llvm::formatv(
          "a read of parameter '{0}' is used on stages {1} and {2}",
          g.paramNames[op.param], lo, hi));
    forwardStage[i] = std::max(lo, 0);
  }
  stageOf.assign(n, 0);
  forwardOps.assign(numStages, {});
  backwardOps.assign(numStages, {});
  for (int32_t i = 0; i < n; ++i) {
    const ProgramGraph::Op &op = g.ops[i];
    stageOf[i] = op.owner >= 0 ? forwardStage[op.owner] : 0;
    if (op.backward)
      backwardOps[stageOf[i]].push_back(i);
    else if (!op.isSource())
      forwardOps[stageOf[i]].push_back(i);
  }
  return llvm::Error::success();
}

/// pd-outline-stages' channels: a non-source value used on another stage
/// is sent there (once per receiving stage).
llvm::Error Modeler::assignChannels() {
  std::vector<std::pair<int32_t, int32_t>> pairs; // (value, stage)
  for (int32_t i = 0, n = g.ops.size(); i < n; ++i) {
    const ProgramGraph::Op &op = g.ops[i];
    if (op.isSource())
      continue;
    for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v)
      for (int32_t user : g.usersOf(v)) {
        if (stageOf[user] == stageOf[i])
          continue;
        if (op.backward && !g.ops[user].backward)
          return modelError(llvm::formatv(
              "a forward op on stage {0} uses a gradient computed on stage "
              "{1}",
              stageOf[user], stageOf[i]));
        pairs.push_back({(int32_t)v, stageOf[user]});
      }
  }
  llvm::sort(pairs);
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  receiverBegin.assign(g.values.size() + 1, 0);
  for (auto [v, stage] : pairs)
    ++receiverBegin[v + 1];
  for (size_t v = 0; v < g.values.size(); ++v)
    receiverBegin[v + 1] += receiverBegin[v];
  receivers.clear();
  for (auto [v, stage] : pairs)
    receivers.push_back(stage);
  return llvm::Error::success();
}

int32_t Modeler::addOp(VFn &fn, VKind kind, int32_t orig,
                       ArrayRef<int32_t> operands,
                       ArrayRef<int64_t> resultBytes, int32_t peer) {
  VOp op;
  op.kind = kind;
  op.orig = orig;
  op.peer = peer;
  op.operandBegin = fn.pool.size();
  fn.pool.insert(fn.pool.end(), operands.begin(), operands.end());
  op.operandEnd = fn.pool.size();
  int32_t index = fn.ops.size();
  op.resultBegin = fn.vals.size();
  GraphOp origKind = orig >= 0 ? g.ops[orig].kind : GraphOp::Compute;
  bool inWeights =
      origKind == GraphOp::ParamRef || (orig >= 0 && g.ops[orig].weightView);
  for (int64_t bytes : resultBytes)
    fn.vals.push_back({bytes, index, inWeights ? Home::Weights : Home::None,
                       origKind == GraphOp::Constant});
  op.resultEnd = fn.vals.size();
  fn.ops.push_back(op);
  return index;
}

/// The value `v` of the training function in the function being built: a
/// pd.input, a re-read source or a pd.recv at its first use.
int32_t Modeler::materialize(VFn &fn, int32_t v, int64_t s) {
  if (int32_t fv = lookup(v); fv >= 0)
    return fv;
  const ProgramGraph::Value &value = g.values[v];
  int32_t op;
  if (value.def < 0)
    op = addOp(fn, VKind::Input, -1, {}, {value.bytes});
  else if (g.ops[value.def].isSource())
    op = addOp(fn, VKind::Source, value.def, {}, {value.bytes});
  else
    op = addOp(fn, VKind::Recv, -1, {}, {value.bytes}, stageOf[value.def]);
  int32_t fv = fn.ops[op].resultBegin;
  map(v, fv);
  return fv;
}

/// A clone of graph op `op`, then its sends (one per receiving stage).
void Modeler::cloneInto(VFn &fn, int32_t op, int64_t s) {
  const ProgramGraph::Op &o = g.ops[op];
  llvm::SmallVector<int32_t, 4> operands;
  for (int32_t v : g.operandsOf(o))
    operands.push_back(materialize(fn, v, s));
  llvm::SmallVector<int64_t, 2> bytes;
  for (uint32_t v = o.resultBegin; v < o.resultEnd; ++v)
    bytes.push_back(g.values[v].bytes);
  int32_t clone = addOp(fn, VKind::Clone, op, operands, bytes);
  for (uint32_t v = o.resultBegin; v < o.resultEnd; ++v) {
    int32_t fv = fn.ops[clone].resultBegin + (v - o.resultBegin);
    map(v, fv);
    for (uint32_t r = receiverBegin[v]; r < receiverBegin[v + 1]; ++r)
      addOp(fn, VKind::Send, -1, {fv}, {}, -1);
  }
}

/// The forward values (not sources, not gradients) the backward of stage
/// `s` reads, in the order its ops first read them.
std::vector<int32_t> Modeler::savedValues(int64_t s) {
  std::vector<int32_t> saved;
  beginFunction(); // the value map marks the values already saved
  for (int32_t i : backwardOps[s])
    for (int32_t v : g.operandsOf(g.ops[i])) {
      int32_t def = g.values[v].def;
      if (def >= 0 && (g.ops[def].isSource() || g.ops[def].backward))
        continue;
      if (lookup(v) < 0) {
        map(v, 0);
        saved.push_back(v);
      }
    }
  return saved;
}

void Modeler::buildForward(int64_t s, ArrayRef<int32_t> saved, VFn &fn) {
  beginFunction();
  for (int32_t op : forwardOps[s])
    cloneInto(fn, op, s);
  if (g.loss >= 0 && stageOf[g.values[g.loss].def] == s)
    addOp(fn, VKind::ReportLoss, -1, {materialize(fn, g.loss, s)}, {});
  for (int32_t v : saved)
    fn.returned.push_back(materialize(fn, v, s));
}

void Modeler::buildBackward(int64_t s, ArrayRef<int32_t> saved,
                            const VFn &fwd, const Slice *slice, VFn &fn) {
  beginFunction();
  if (!slice) {
    for (int32_t v : saved)
      map(v, fn.addArgument(g.values[v].bytes));
  } else {
    // The stage inputs become the arguments and the slice is rerun first;
    // the stashed values are read from its clones.
    std::vector<int32_t> fromForward(fwd.vals.size(), -1);
    for (int32_t in : slice->inputs)
      fromForward[in] = fn.addArgument(fwd.vals[in].bytes);
    for (int32_t i : slice->ops) {
      const VOp &op = fwd.ops[i];
      llvm::SmallVector<int32_t, 4> operands;
      for (int32_t v : fwd.operandsOf(op))
        operands.push_back(fromForward[v]);
      llvm::SmallVector<int64_t, 2> bytes;
      for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v)
        bytes.push_back(fwd.vals[v].bytes);
      int32_t clone = addOp(fn, op.kind, op.orig, operands, bytes);
      for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v)
        fromForward[v] = fn.ops[clone].resultBegin + (v - op.resultBegin);
    }
    for (auto [v, fv] : llvm::zip(saved, fwd.returned))
      map(v, fromForward[fv]);
  }
  for (int32_t op : backwardOps[s])
    cloneInto(fn, op, s);
}

bool Modeler::isPure(const VOp &op) const {
  switch (op.kind) {
  case VKind::Input:
  case VKind::Source:
    return true;
  case VKind::Clone:
    return g.ops[op.orig].pure;
  default:
    return false;
  }
}

/// pd-recompute-forward's slice: the forward ops computing the stash, back
/// to the stage inputs (pd.input, pd.recv).
llvm::Expected<Slice> Modeler::computeSlice(int64_t s, const VFn &fwd) const {
  std::vector<bool> needed(fwd.ops.size(), false);
  std::vector<int32_t> worklist;
  for (int32_t v : fwd.returned)
    if (fwd.vals[v].def >= 0)
      worklist.push_back(fwd.vals[v].def);
  while (!worklist.empty()) {
    int32_t i = worklist.back();
    worklist.pop_back();
    if (needed[i])
      continue;
    needed[i] = true;
    const VOp &op = fwd.ops[i];
    if (op.kind == VKind::Input || op.kind == VKind::Recv)
      continue;
    if (op.kind == VKind::Clone && !g.ops[op.orig].recomputable)
      return modelError(llvm::formatv(
          "'{0}' op cannot be recomputed in the backward of stage {1}: it "
          "has side effects",
          g.ops[op.orig].name, s));
    for (int32_t v : fwd.operandsOf(op))
      if (fwd.vals[v].def >= 0)
        worklist.push_back(fwd.vals[v].def);
  }
  Slice slice;
  for (size_t i = 0; i < fwd.ops.size(); ++i) {
    if (!needed[i])
      continue;
    const VOp &op = fwd.ops[i];
    if (op.kind == VKind::Input || op.kind == VKind::Recv)
      for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v)
        slice.inputs.push_back(v);
    else
      slice.ops.push_back(i);
  }
  return slice;
}

/// The forward returns only the stage inputs; pure ops left without users
/// go.
void Modeler::stashOnlyInputs(const Slice &slice, VFn &fwd) const {
  fwd.returned = slice.inputs;
  std::vector<int32_t> uses(fwd.vals.size(), 0);
  for (const VOp &op : fwd.ops)
    for (int32_t v : fwd.operandsOf(op))
      ++uses[v];
  for (int32_t v : fwd.returned)
    ++uses[v];
  for (VOp &op : llvm::reverse(fwd.ops)) {
    if (!isPure(op))
      continue;
    bool unused = true;
    for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v)
      unused &= uses[v] == 0;
    if (!unused)
      continue;
    op.alive = false;
    for (int32_t v : fwd.operandsOf(op))
      --uses[v];
  }
}

/// pd-accumulate-in-place and pd-allocate-buffers on the two functions.
void Modeler::allocate(int64_t s, VFn &fwd, VFn &bwd, StageSummary &out,
                       std::vector<std::vector<int64_t>> &owners) {
  StageRegions &r = out.regions;
  // Weight gradients computed straight into their accumulators.
  for (const VOp &op : bwd.ops) {
    if (op.kind != VKind::Clone || g.ops[op.orig].accumulateUser < 0)
      continue;
    int32_t acc = g.ops[op.orig].accumulateUser;
    if (stageOf[acc] == s && g.ops[acc].backward == g.ops[op.orig].backward)
      bwd.vals[op.resultBegin].home = Home::Grads;
  }
  // Parameters: weights, gradient accumulator and optimizer state.
  for (const VFn *fn : {&fwd, &bwd})
    for (const VOp &op : fn->ops) {
      if (!op.alive || op.orig < 0 ||
          (g.ops[op.orig].kind != GraphOp::ParamRef &&
           g.ops[op.orig].kind != GraphOp::AccumulateGrad))
        continue;
      int32_t p = g.ops[op.orig].param;
      if (!owners[p].empty() && owners[p].back() == s)
        continue;
      int64_t bytes = alignArena(g.paramBytes[p]);
      r.weights += bytes;
      r.grads += bytes;
      r.optimizer += optimizerStates * bytes;
      owners[p].push_back(s);
    }
  // State the forward updates (each once).
  for (const VOp &op : fwd.ops)
    if (op.alive && op.kind == VKind::Clone)
      for (uint32_t i = g.ops[op.orig].stateBegin; i < g.ops[op.orig].stateEnd;
           ++i)
        if (stateStage[g.stateRefs[i]] != s) {
          stateStage[g.stateRefs[i]] = s;
          r.state += alignArena(g.stateBytes[g.stateRefs[i]]);
        }
  // The stash: what the forward returns, a reshape by the value it views.
  for (int32_t v : fwd.returned) {
    int32_t root = homeRoot(g, fwd, v);
    if (fwd.vals[root].home == Home::None) {
      fwd.vals[root].home = Home::Stash;
      r.stashSlot += alignArena(fwd.vals[root].bytes);
      shareWithOperand(g, fwd, root);
    }
  }
  // Sent values not homed yet, a reshape by the value it views (in the
  // stash when it is stashed).
  for (VFn *fn : {&fwd, &bwd})
    for (const VOp &op : fn->ops) {
      if (!op.alive || op.kind != VKind::Send)
        continue;
      int32_t sent = fn->pool[op.operandBegin];
      if (fn->vals[sent].def < 0)
        continue;
      VVal &v = fn->vals[homeRoot(g, *fn, sent)];
      if (v.home != Home::None)
        continue;
      v.home = Home::Comm;
      r.comm += alignArena(v.bytes);
    }
  fuseBiasGradients(g, bwd);
  concatInPlace(g, fwd);
  concatInPlace(g, bwd);
  allocateViews(g, fwd);
  allocateViews(g, bwd);
  r.workspace = std::max(workspaceBytes(g, fwd), workspaceBytes(g, bwd));
  // Time and what the stage receives.
  for (const VFn *fn : {&fwd, &bwd}) {
    bool forward = fn == &fwd;
    double &seconds = forward ? out.forwardSeconds : out.backwardSeconds;
    for (const VOp &op : fn->ops) {
      if (!op.alive || op.partsInPlace || op.viewed)
        continue;
      if (op.absorbed >= 0)
        seconds += g.ops[fn->ops[op.absorbed].orig].fusedSeconds;
      else if (op.orig >= 0)
        seconds += g.ops[op.orig].seconds;
      if (op.kind == VKind::Recv)
        out.recvs.push_back({op.peer, fn->vals[op.resultBegin].bytes, forward});
    }
  }
}

llvm::Error Modeler::modelStage(int64_t s, StageSummary &out,
                                std::vector<std::vector<int64_t>> &owners) {
  std::vector<int32_t> saved = savedValues(s);
  VFn fwd, bwd;
  buildForward(s, saved, fwd);
  out.recompute = recompute.count(s);
  if (!out.recompute) {
    buildBackward(s, saved, fwd, nullptr, bwd);
  } else {
    llvm::Expected<Slice> slice = computeSlice(s, fwd);
    if (!slice)
      return slice.takeError();
    buildBackward(s, saved, fwd, &*slice, bwd);
    stashOnlyInputs(*slice, fwd);
  }
  allocate(s, fwd, bwd, out, owners);
  return llvm::Error::success();
}

llvm::Expected<PipelineSummary> Modeler::run() {
  if ((int64_t)g.chain.opIds.size() < numStages)
    return modelError(llvm::formatv("cannot split {0} compute ops into {1} "
                                    "stages",
                                    g.chain.opIds.size(), numStages));
  if (llvm::Error e = assignStages())
    return std::move(e);
  if (llvm::Error e = assignChannels())
    return std::move(e);
  mapStamp.assign(g.values.size(), 0);
  mapped.assign(g.values.size(), -1);
  stateStage.assign(g.stateBytes.size(), -1);
  PipelineSummary summary;
  summary.stages.resize(numStages);
  std::vector<std::vector<int64_t>> owners(g.paramBytes.size());
  for (int64_t s = 0; s < numStages; ++s)
    if (llvm::Error e = modelStage(s, summary.stages[s], owners))
      return std::move(e);
  for (size_t p = 0; p < owners.size(); ++p) {
    if (owners[p].size() <= 1)
      continue;
    summary.tiedBytes[owners[p]] += g.paramBytes[p];
    for (int64_t s : owners[p])
      summary.stages[s].alignedTiedBytes += alignArena(g.paramBytes[p]);
  }
  return summary;
}

llvm::Expected<PipelineSummary>
mlir::pd::modelStages(const ProgramGraph &graph, ArrayRef<int64_t> cuts,
                      ArrayRef<int64_t> recomputeStages, Optimizer optimizer) {
  return Modeler(graph, cuts, recomputeStages, optimizer).run();
}
