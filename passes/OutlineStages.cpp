//===- OutlineStages.cpp - Per-stage forward/backward functions -*- C++ -*-===//
//
// pd-outline-stages: rewrites the partitioned training function into one
// forward and one backward function per stage. Cross-stage values become
// send/recv pairs on numbered channels (a value used k > 1 stages later, a
// skip connection, goes point to point from its producer to each consumer
// stage, not through the stages between), values the backward needs become the
// forward's results (the stash), graph inputs become pd.input in the stages
// that read them, and parameter reads and constants are re-materialised.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "mlir/IR/IRMapping.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_OUTLINESTAGESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct OutlineStagesPass
    : public mlir::pd::impl::OutlineStagesPassBase<OutlineStagesPass> {
  using OutlineStagesPassBase::OutlineStagesPassBase;
  void runOnOperation() override;
};


/// Where an op of the training function runs.
struct Home {
  int64_t stage;
  Phase phase;
};

/// Outlines one training function; state shared by the stage builders.
class Outliner {
public:
  Outliner(func::FuncOp func, int64_t numStages)
      : func(func), numStages(numStages) {}

  LogicalResult run();

private:
  LogicalResult assignChannels();
  LogicalResult buildForward(int64_t stage);
  LogicalResult buildBackward(int64_t stage);
  Value materialize(Value v, int64_t stage, Phase phase, OpBuilder &b);
  void emitSends(Operation *orig, Operation *clone, OpBuilder &b);
  void cloneInto(Operation *op, int64_t stage, Phase phase, OpBuilder &b);
  func::FuncOp createFunc(int64_t stage, Phase phase, TypeRange args,
                          TypeRange results);

  /// A parameter read, a constant, or a view of a parameter read (a
  /// reshape, or a contiguous slice: Phi-3's row blocks of a fused
  /// projection's weight, pd-split-sliced-matmuls): cloned into every
  /// function that reads it instead of stashed or sent.
  static bool isSource(Operation *op) {
    return isa<ParamRefOp, ConstantOp>(op) || isWeightView(op);
  }
  static bool isWeightView(Operation *op) {
    auto slice = dyn_cast<SliceOp>(op);
    if (!isa<ReshapeOp>(op) && !(slice && slice.getContiguousOffset()))
      return false;
    Operation *def = op->getOperand(0).getDefiningOp();
    return def && (isa<ParamRefOp>(def) || isWeightView(def));
  }
  Home homeOf(Operation *op) const {
    int64_t stage = *getContractInt<PDDialect::StageAttrHelper>(op);
    return {stage, op->hasAttr(kGradOfAttr) ? Phase::Backward : Phase::Forward};
  }

  func::FuncOp func;
  int64_t numStages;
  /// The (receiving stage, channel) pairs of each value sent, by stage.
  DenseMap<Value, SmallVector<std::pair<int64_t, int64_t>, 1>> channels;
  /// Each stage's forward ops (sources excepted) and gradient ops, in
  /// program order.
  SmallVector<SmallVector<Operation *>> forwardOps, backwardOps;
  /// Value maps per (stage, phase).
  DenseMap<std::pair<int64_t, int>, IRMapping> maps;
  /// Values of the training function the backward of a stage reads from
  /// its forward, in order.
  DenseMap<int64_t, SmallVector<Value>> stash;
  /// Where each new stage function is inserted.
  Operation *insertPoint = nullptr;
};

} // namespace

LogicalResult Outliner::assignChannels() {
  int64_t next = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (isSource(&op))
      continue;
    Home from = homeOf(&op);
    for (Value result : op.getResults()) {
      for (Operation *user : result.getUsers()) {
        if (isa<func::ReturnOp>(user))
          continue;
        Home to = homeOf(user);
        if (to.stage == from.stage)
          continue;
        if (from.phase == Phase::Backward && to.phase == Phase::Forward)
          return user->emitError("pd-outline-stages: a forward op on stage ")
                 << to.stage << " uses a gradient computed on stage "
                 << from.stage;
        auto &receivers = channels[result];
        if (llvm::none_of(receivers, [&](auto &r) { return r.first == to.stage; }))
          receivers.push_back({to.stage, next++});
      }
    }
  }
  for (auto &entry : channels)
    llvm::sort(entry.second);
  return success();
}

func::FuncOp Outliner::createFunc(int64_t stage, Phase phase, TypeRange args,
                                  TypeRange results) {
  OpBuilder b(insertPoint);
  std::string name = "stage" + std::to_string(stage) +
                     (phase == Phase::Forward ? "_forward" : "_backward");
  auto fn = b.create<func::FuncOp>(func.getLoc(), name,
                                   b.getFunctionType(args, results));
  markStageFunction(fn, stage, phase);
  fn.addEntryBlock();
  return fn;
}

/// Drops the training function's op ids, gradient tags and stages from a
/// clone (one new attribute dictionary, not one per attribute).
static void dropPartitionAttrs(Operation *clone) {
  NamedAttrList attrs(clone->getAttrDictionary());
  bool changed = false;
  for (StringRef name : {kOpIdAttr.data(), kGradOfAttr.data(),
                         kStageAttr.data()})
    changed |= bool(attrs.erase(name));
  if (changed)
    clone->setAttrs(attrs.getDictionary(clone->getContext()));
}

/// Returns the value `v` of the training function inside the function of
/// (stage, phase), creating a pd.input, a re-materialised source or a recv.
Value Outliner::materialize(Value v, int64_t stage, Phase phase, OpBuilder &b) {
  IRMapping &map = maps[{stage, static_cast<int>(phase)}];
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  Value result;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto name = func.getArgAttrOfType<StringAttr>(
        arg.getArgNumber(), PDDialect::InputNameAttrHelper::getNameStr());
    result = b.create<InputOp>(
        func.getLoc(), v.getType(), b.getI64IntegerAttr(arg.getArgNumber()),
        name ? name : b.getStringAttr("input" +
                                      std::to_string(arg.getArgNumber())));
  } else if (Operation *def = v.getDefiningOp(); isSource(def)) {
    // A view's input first (itself a source).
    IRMapping operands;
    for (Value operand : def->getOperands())
      operands.map(operand, materialize(operand, stage, phase, b));
    Operation *clone = b.clone(*def, operands);
    dropPartitionAttrs(clone);
    result = clone->getResult(0);
  } else {
    Home from = homeOf(v.getDefiningOp());
    int64_t channel = -1;
    for (auto [to, ch] : channels.lookup(v))
      if (to == stage)
        channel = ch;
    result = b.create<RecvOp>(v.getLoc(), v.getType(),
                              b.getI64IntegerAttr(from.stage),
                              b.getI64IntegerAttr(channel));
  }
  map.map(v, result);
  return result;
}

void Outliner::emitSends(Operation *orig, Operation *clone, OpBuilder &b) {
  for (auto [res, cloned] :
       llvm::zip(orig->getResults(), clone->getResults())) {
    auto it = channels.find(res);
    if (it == channels.end())
      continue;
    for (auto [to, channel] : it->second)
      b.create<SendOp>(orig->getLoc(), cloned, b.getI64IntegerAttr(to),
                       b.getI64IntegerAttr(channel));
  }
}

void Outliner::cloneInto(Operation *op, int64_t stage, Phase phase,
                         OpBuilder &b) {
  for (Value operand : op->getOperands())
    materialize(operand, stage, phase, b);
  IRMapping &map = maps[{stage, static_cast<int>(phase)}];
  Operation *clone = b.clone(*op, map);
  dropPartitionAttrs(clone);
  emitSends(op, clone, b);
}

LogicalResult Outliner::buildForward(int64_t stage) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  func::FuncOp fn = createFunc(stage, Phase::Forward, {}, {});
  OpBuilder b = OpBuilder::atBlockEnd(&fn.getBody().front());
  for (Operation *op : forwardOps[stage])
    cloneInto(op, stage, Phase::Forward, b);
  Value loss = ret.getOperand(0);
  if (loss.getDefiningOp() && homeOf(loss.getDefiningOp()).stage == stage)
    b.create<ReportLossOp>(loss.getLoc(),
                           materialize(loss, stage, Phase::Forward, b));

  // The stash: forward values (not sources) that this stage's backward reads.
  SetVector<Value> saved;
  for (Operation *op : backwardOps[stage]) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && (isSource(def) || homeOf(def).phase == Phase::Backward))
        continue;
      saved.insert(operand);
    }
  }
  SmallVector<Value> results;
  for (Value v : saved)
    results.push_back(materialize(v, stage, Phase::Forward, b));
  b.create<func::ReturnOp>(func.getLoc(), results);
  fn.setType(b.getFunctionType({}, ValueRange(results).getTypes()));
  stash[stage] = SmallVector<Value>(saved.begin(), saved.end());
  return success();
}

LogicalResult Outliner::buildBackward(int64_t stage) {
  SmallVector<Type> argTypes;
  for (Value v : stash[stage])
    argTypes.push_back(v.getType());
  func::FuncOp fn = createFunc(stage, Phase::Backward, argTypes, {});
  IRMapping &map = maps[{stage, static_cast<int>(Phase::Backward)}];
  for (auto [v, arg] : llvm::zip(stash[stage], fn.getArguments()))
    map.map(v, arg);
  OpBuilder b = OpBuilder::atBlockEnd(&fn.getBody().front());
  for (Operation *op : backwardOps[stage])
    cloneInto(op, stage, Phase::Backward, b);
  b.create<func::ReturnOp>(func.getLoc());
  return success();
}

LogicalResult Outliner::run() {
  for (Operation &op : func.getBody().front().without_terminator())
    if (!op.hasAttr(kStageAttr))
      return op.emitError("pd-outline-stages: op has no pd.stage; run "
                          "pd-partition-stages first");
  if (failed(assignChannels()))
    return failure();
  forwardOps.resize(numStages);
  backwardOps.resize(numStages);
  for (Operation &op : func.getBody().front().without_terminator()) {
    Home home = homeOf(&op);
    if (home.stage < 0 || home.stage >= numStages)
      return op.emitError("pd-outline-stages: op is on stage ")
             << home.stage << " of " << numStages;
    if (home.phase == Phase::Backward)
      backwardOps[home.stage].push_back(&op);
    else if (!isSource(&op))
      forwardOps[home.stage].push_back(&op);
  }
  insertPoint = func;
  for (int64_t s = 0; s < numStages; ++s)
    if (failed(buildForward(s)) || failed(buildBackward(s)))
      return failure();
  func.erase();
  return success();
}

void OutlineStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto func = module.lookupSymbol<func::FuncOp>(funcName);
  auto stages = module->getAttrOfType<IntegerAttr>(
      PDDialect::NumStagesAttrHelper::getNameStr());
  if (!func || !stages) {
    module.emitError("pd-outline-stages: expected a partitioned @")
        << funcName << " and pd.num_stages; run pd-partition-stages first";
    return signalPassFailure();
  }
  if (failed(Outliner(func, stages.getInt()).run()))
    return signalPassFailure();
}
