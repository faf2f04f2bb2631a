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
// Keep this file in step with those passes; pdc compares the two on every
// plan it writes and tests run that comparison over the model zoo.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/StageModel.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace mlir;
using namespace mlir::pd;
using GraphOp = ProgramGraph::OpKind;

namespace {

enum class VKind : uint8_t { Clone, Input, Source, Recv, Send, ReportLoss };
enum class Home : uint8_t { None, Weights, Grads, Stash, Comm };

/// An op of a modelled stage function.
struct VOp {
  VKind kind = VKind::Clone;
  bool alive = true;
  int32_t orig = -1; ///< Graph op of a clone or a re-read source.
  int32_t peer = -1; ///< Sender of a recv.
  /// The sum_to this GELU or layer-norm gradient absorbed
  /// (pd-fuse-bias-gradients), by index in its function: it defines that
  /// op's result too.
  int32_t absorbed = -1;
  /// A concat whose inputs its GEMMs write in place (pd-concat-in-place):
  /// it runs no kernel.
  bool partsInPlace = false;
  uint32_t operandBegin = 0, operandEnd = 0, resultBegin = 0, resultEnd = 0;
};

/// A value of a modelled stage function.
struct VVal {
  int64_t bytes = 0;
  int32_t def = -1; ///< Defining VOp; -1 for a function argument.
  Home home = Home::None;
  bool constant = false;
};

/// A modelled stage function.
struct VFn {
  std::vector<VOp> ops;
  std::vector<int32_t> pool; ///< Operands of the ops.
  std::vector<VVal> vals;
  std::vector<int32_t> returned;
  /// Per value: the value whose workspace slot it shares as a view (-1:
  /// none).
  std::vector<int32_t> viewOf;
  /// Per value: the concat result a GEMM writes it into, whose workspace
  /// slot it shares (pd-concat-in-place; -1: none).
  std::vector<int32_t> partOf;

  llvm::ArrayRef<int32_t> operandsOf(const VOp &op) const {
    return llvm::ArrayRef(pool).slice(op.operandBegin,
                                      op.operandEnd - op.operandBegin);
  }
  int32_t addArgument(int64_t bytes) {
    vals.push_back({bytes, -1, Home::None, false});
    return vals.size() - 1;
  }
};

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
  for (int64_t bytes : resultBytes)
    fn.vals.push_back({bytes, index,
                       origKind == GraphOp::ParamRef ? Home::Weights
                                                     : Home::None,
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

/// pd-allocate-buffers' stashRoot: what holds the returned value `v` in the
/// stash: the start of its reshape chain when the forward computes it
/// (not a constant or an argument, homed nowhere but the stash), else `v`.
static int32_t stashRoot(const ProgramGraph &g, const VFn &fn, int32_t v) {
  if (fn.vals[v].home != Home::None)
    return v;
  int32_t root = v;
  for (int32_t d = fn.vals[root].def; d >= 0; d = fn.vals[root].def) {
    const VOp &op = fn.ops[d];
    if (op.kind != VKind::Clone || !g.ops[op.orig].view)
      break;
    int32_t in = fn.pool[op.operandBegin];
    const VVal &input = fn.vals[in];
    if (input.constant || input.def < 0 ||
        (input.home != Home::None && input.home != Home::Stash))
      break;
    root = in;
  }
  return root;
}

/// pd-allocate-buffers' shareWithOperand: a stashed value `v` that its
/// op writes over operand 0 (the graph op's inPlaceResult: a cross-entropy
/// gradient over its logits, a masked softmax over its scores) has that
/// operand's reshape chain start, computed by an op of this function,
/// share its stash slot (the reshapes then view it).
static void shareWithOperand(const ProgramGraph &g, VFn &fn, int32_t v) {
  int32_t d = fn.vals[v].def;
  if (d < 0 || fn.ops[d].kind != VKind::Clone)
    return;
  int32_t result = g.ops[fn.ops[d].orig].inPlaceResult;
  if (result < 0 || v != (int32_t)fn.ops[d].resultBegin + result)
    return;
  int32_t in = fn.pool[fn.ops[d].operandBegin];
  while (true) {
    const VVal &val = fn.vals[in];
    if (val.def < 0 || val.constant || fn.ops[val.def].kind != VKind::Clone ||
        g.ops[fn.ops[val.def].orig].kind != GraphOp::Compute)
      return;
    const VOp &producer = fn.ops[val.def];
    if (!g.ops[producer.orig].view)
      break;
    in = fn.pool[producer.operandBegin];
  }
  if (fn.vals[in].home == Home::None)
    fn.vals[in].home = Home::Stash;
}

/// pd-allocate-buffers' views: a reshape result without a home takes its
/// input's (a function argument is a stash slot), else shares its input's
/// workspace slot; a constant input is copied.
static void allocateViews(const ProgramGraph &g, VFn &fn) {
  fn.viewOf.assign(fn.vals.size(), -1);
  for (const VOp &op : fn.ops) {
    if (!op.alive || op.kind != VKind::Clone || !g.ops[op.orig].view)
      continue;
    int32_t in = fn.pool[op.operandBegin], out = op.resultBegin;
    VVal &result = fn.vals[out];
    const VVal &input = fn.vals[in];
    if (result.home != Home::None || input.constant)
      continue;
    if (input.def < 0)
      result.home = Home::Stash;
    else if (input.home != Home::None)
      result.home = input.home;
    else
      fn.viewOf[out] = fn.viewOf[in] >= 0 ? fn.viewOf[in] : in;
  }
}

/// pd-allocate-buffers' overwritten operands (getOverwritableOperand): in
/// op order, a result whose op may write it over an operand takes the
/// operand's workspace slot (slotRoot) when the op is the slot's last
/// reader (`end`: each slot's last reader so far, merged as slots are
/// shared) and the slot, not a concat's (firstPart), is large enough.
static void overwriteDyingOperands(const ProgramGraph &g, const VFn &fn,
                                   ArrayRef<int64_t> position,
                                   ArrayRef<int64_t> firstPart,
                                   std::vector<int64_t> &end,
                                   std::vector<int32_t> &slotRoot) {
  auto rootOf = [&](int32_t v) {
    int32_t r = fn.viewOf[v] >= 0 ? fn.viewOf[v] : v;
    while (slotRoot[r] != r)
      r = slotRoot[r];
    return r;
  };
  auto inWorkspace = [&](int32_t v) {
    const VVal &val = fn.vals[v];
    return val.def >= 0 && val.home == Home::None && !val.constant &&
           fn.partOf[v] < 0 && firstPart[v] < 0;
  };
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    const VOp &op = fn.ops[i];
    if (!op.alive || op.kind != VKind::Clone ||
        g.ops[op.orig].overwritableOperand < 0)
      continue;
    int32_t v = op.resultBegin;
    int32_t x = fn.pool[op.operandBegin + g.ops[op.orig].overwritableOperand];
    int32_t r = rootOf(x);
    if (!inWorkspace(v) || !inWorkspace(r) || end[r] != position[i] ||
        alignArena(fn.vals[r].bytes) < alignArena(fn.vals[v].bytes))
      continue;
    slotRoot[v] = r;
    end[r] = std::max(end[r], end[v]);
  }
}

/// The workspace of one function: values no other region holds (constants
/// live in the stage object), live from their definition to their last
/// use (the return included), views sharing their input's slot, an
/// in-place concat's parts its slot, gradients their dying operand's,
/// packed first-fit.
static int64_t workspaceBytes(const ProgramGraph &g, const VFn &fn) {
  std::vector<int64_t> position(fn.ops.size(), -1);
  int64_t next = 0;
  for (size_t i = 0; i < fn.ops.size(); ++i)
    if (fn.ops[i].alive)
      position[i] = next++;
  int64_t returnAt = next;
  std::vector<int64_t> lastUse(fn.vals.size(), -1);
  for (size_t i = 0; i < fn.ops.size(); ++i)
    if (fn.ops[i].alive)
      for (int32_t v : fn.operandsOf(fn.ops[i]))
        lastUse[v] = std::max(lastUse[v], position[i]);
  for (int32_t v : fn.returned)
    lastUse[v] = returnAt;
  // A view keeps the slot it shares live for its own uses.
  for (size_t v = 0; v < fn.vals.size(); ++v)
    if (fn.viewOf[v] >= 0) {
      int32_t root = fn.viewOf[v];
      int64_t end =
          std::max(position[fn.vals[v].def], lastUse[v]);
      lastUse[root] = std::max(lastUse[root], end);
    }
  // A part keeps the concat result's slot live from its own definition:
  // the slot is placed at the first part (pd-concat-in-place).
  std::vector<int64_t> firstPart(fn.vals.size(), -1);
  for (size_t v = 0; v < fn.vals.size(); ++v)
    if (int32_t whole = fn.partOf[v]; whole >= 0) {
      int64_t at = position[fn.vals[v].def];
      lastUse[whole] = std::max({lastUse[whole], at, lastUse[v],
                                 position[fn.vals[whole].def]});
      if (firstPart[whole] < 0 || at < firstPart[whole])
        firstPart[whole] = at;
    }
  // Each value's end as a slot (its definition if never read).
  for (size_t v = 0; v < fn.vals.size(); ++v)
    if (fn.vals[v].def >= 0 && fn.ops[fn.vals[v].def].alive)
      lastUse[v] = std::max(lastUse[v], position[fn.vals[v].def]);
  std::vector<int32_t> slotRoot(fn.vals.size());
  for (size_t v = 0; v < fn.vals.size(); ++v)
    slotRoot[v] = v;
  overwriteDyingOperands(g, fn, position, firstPart, lastUse, slotRoot);
  llvm::SmallVector<LiveInterval> intervals;
  auto addInterval = [&](uint32_t v, int64_t at) {
    const VVal &val = fn.vals[v];
    if (val.home != Home::None || val.constant || fn.viewOf[v] >= 0 ||
        slotRoot[v] != (int32_t)v)
      return;
    intervals.push_back(
        {at, std::max(at, lastUse[v]), alignArena(val.bytes), 0});
  };
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    const VOp &op = fn.ops[i];
    if (!op.alive)
      continue;
    for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v) {
      if (int32_t whole = fn.partOf[v]; whole >= 0) {
        if (firstPart[whole] == position[i])
          addInterval(whole, position[i]);
        continue;
      }
      if (firstPart[v] < 0)
        addInterval(v, position[i]);
    }
    if (op.absorbed >= 0)
      addInterval(fn.ops[op.absorbed].resultBegin, position[i]);
  }
  return packFirstFit(intervals);
}

/// pd-fuse-bias-gradients on a function: a sum_to that is a GELU or
/// layer-norm gradient's bias gradient, with the reshapes between them in
/// the same function, is computed by that gradient op (the first such sum
/// of each); the sum and the reshapes only it read go.
static void fuseBiasGradients(const ProgramGraph &g, VFn &fn) {
  std::vector<std::vector<int32_t>> chains; // the reshapes, sum side first
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    VOp &sum = fn.ops[i];
    if (!sum.alive || sum.kind != VKind::Clone ||
        g.ops[sum.orig].summedProducer < 0)
      continue;
    std::vector<int32_t> views;
    int32_t def = fn.vals[fn.pool[sum.operandBegin]].def;
    while (def >= 0 && fn.ops[def].kind == VKind::Clone &&
           g.ops[fn.ops[def].orig].view) {
      views.push_back(def);
      def = fn.vals[fn.pool[fn.ops[def].operandBegin]].def;
    }
    if (def < 0 || fn.ops[def].kind != VKind::Clone ||
        fn.ops[def].orig != g.ops[sum.orig].summedProducer ||
        fn.ops[def].absorbed >= 0)
      continue;
    sum.alive = false;
    fn.ops[def].absorbed = i;
    fn.vals[sum.resultBegin].def = def;
    chains.push_back(std::move(views));
  }
  if (chains.empty())
    return;
  std::vector<int32_t> uses(fn.vals.size(), 0);
  for (const VOp &op : fn.ops)
    if (op.alive)
      for (int32_t v : fn.operandsOf(op))
        ++uses[v];
  for (int32_t v : fn.returned)
    ++uses[v];
  for (const std::vector<int32_t> &views : chains)
    for (int32_t view : views) {
      VOp &op = fn.ops[view];
      if (!op.alive || uses[op.resultBegin] > 0)
        break;
      op.alive = false;
      --uses[fn.pool[op.operandBegin]];
    }
}

/// pd-concat-in-place on a function: a concat the graph marks
/// inPlaceParts, its result neither sent nor returned, each input the end
/// of a chain (a GEMM, then reshapes) of this function's ops whose every
/// value is read once: the GEMM results share the concat result's
/// workspace slot (partOf) and the concat runs no kernel.
static void concatInPlace(const ProgramGraph &g, VFn &fn) {
  fn.partOf.assign(fn.vals.size(), -1);
  std::vector<int32_t> uses(fn.vals.size(), 0);
  std::vector<bool> leaves(fn.vals.size(), false); // sent or returned
  for (const VOp &op : fn.ops)
    if (op.alive)
      for (int32_t v : fn.operandsOf(op)) {
        ++uses[v];
        leaves[v] = leaves[v] || op.kind == VKind::Send;
      }
  for (int32_t v : fn.returned) {
    ++uses[v];
    leaves[v] = true;
  }
  for (VOp &concat : fn.ops) {
    if (!concat.alive || concat.kind != VKind::Clone ||
        !g.ops[concat.orig].inPlaceParts || leaves[concat.resultBegin])
      continue;
    std::vector<int32_t> parts;
    for (int32_t v : fn.operandsOf(concat)) {
      // getInPlaceOperandRoot: back through reshapes to the GEMM.
      while (uses[v] == 1 && fn.vals[v].def >= 0 &&
             fn.ops[fn.vals[v].def].kind == VKind::Clone &&
             g.ops[fn.ops[fn.vals[v].def].orig].view)
        v = fn.pool[fn.ops[fn.vals[v].def].operandBegin];
      int32_t def = fn.vals[v].def;
      if (uses[v] != 1 || def < 0 || fn.ops[def].kind != VKind::Clone)
        break;
      parts.push_back(v);
    }
    if (parts.size() != concat.operandEnd - concat.operandBegin)
      continue;
    for (int32_t part : parts)
      fn.partOf[part] = concat.resultBegin;
    concat.partsInPlace = true;
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
    int32_t root = stashRoot(g, fwd, v);
    if (fwd.vals[root].home == Home::None) {
      fwd.vals[root].home = Home::Stash;
      r.stashSlot += alignArena(fwd.vals[root].bytes);
      shareWithOperand(g, fwd, root);
    }
  }
  // Sent values not homed yet.
  for (VFn *fn : {&fwd, &bwd})
    for (const VOp &op : fn->ops) {
      if (!op.alive || op.kind != VKind::Send)
        continue;
      VVal &v = fn->vals[fn->pool[op.operandBegin]];
      if (v.home != Home::None || v.def < 0)
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
      if (!op.alive || op.partsInPlace)
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

void PipelineSummary::applySchedule(Schedule schedule, int64_t microbatches) {
  int64_t d = stages.size();
  for (int64_t s = 0; s < d; ++s) {
    stages[s].regions.weightVersions = weightVersions(schedule);
    stages[s].regions.stashSlots = stashSlots(schedule, d, s, microbatches);
    stages[s].regions.tieGrads =
        tiedGradsBytes(schedule, stages[s].alignedTiedBytes);
  }
}

int64_t PipelineSummary::peakStageBytes() const {
  int64_t peak = 0;
  for (const StageSummary &s : stages)
    peak = std::max(peak, s.regions.total());
  return peak;
}

/// Whether two sums of the same op costs agree (summed in one order, they
/// are equal; a small relative slack covers another order).
static bool sameSeconds(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

std::optional<std::string>
mlir::pd::describeDifference(const PipelineSummary &a,
                             const PipelineSummary &b) {
  if (a.stages.size() != b.stages.size())
    return llvm::formatv("{0} vs {1} stages", a.stages.size(),
                         b.stages.size()).str();
  for (auto [s, pair] : llvm::enumerate(llvm::zip(a.stages, b.stages))) {
    const StageSummary &x = std::get<0>(pair), &y = std::get<1>(pair);
    const StageRegions &r = x.regions, &q = y.regions;
    struct Field {
      const char *name;
      int64_t a, b;
    } fields[] = {{"weights", r.weights, q.weights},
                  {"weight versions", r.weightVersions, q.weightVersions},
                  {"grads", r.grads, q.grads},
                  {"optimizer", r.optimizer, q.optimizer},
                  {"state", r.state, q.state},
                  {"stash slot", r.stashSlot, q.stashSlot},
                  {"stash slots", r.stashSlots, q.stashSlots},
                  {"workspace", r.workspace, q.workspace},
                  {"comm", r.comm, q.comm},
                  {"tied gradients", r.tieGrads, q.tieGrads}};
    for (const Field &f : fields)
      if (f.a != f.b)
        return llvm::formatv("stage {0} {1}: {2} vs {3}", s, f.name, f.a, f.b)
            .str();
    if (x.recompute != y.recompute)
      return llvm::formatv("stage {0} recomputation: {1} vs {2}", s,
                           x.recompute, y.recompute)
          .str();
    if (!sameSeconds(x.forwardSeconds, y.forwardSeconds) ||
        !sameSeconds(x.backwardSeconds, y.backwardSeconds))
      return llvm::formatv("stage {0} seconds (forward, backward): {1}, {2} "
                           "vs {3}, {4}",
                           s, x.forwardSeconds, x.backwardSeconds,
                           y.forwardSeconds, y.backwardSeconds)
          .str();
    std::vector<StageRecv> rx = x.recvs, ry = y.recvs;
    llvm::sort(rx);
    llvm::sort(ry);
    if (rx != ry)
      return llvm::formatv("stage {0} receives {1} vs {2} tensors", s,
                           rx.size(), ry.size())
          .str();
  }
  if (a.tiedBytes != b.tiedBytes)
    return std::string("the tied parameters differ");
  return std::nullopt;
}
