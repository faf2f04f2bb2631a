//===- StageInfo.cpp - Read a stage's plan from buffer-assigned IR -*- C++ -*-//
//
// Collects what the manifest and plan.json say about one stage from the
// attributes pd-allocate-buffers left and the stage functions' ops.
//
//===----------------------------------------------------------------------===//

#include "pd/Codegen/StageInfo.h"
#include "dialects/PD/IR/PDOps.h"

using namespace mlir;
using namespace mlir::pd;

static FailureOr<StageRegions> readRegions(func::FuncOp fwd) {
  auto dict = fwd->getAttrOfType<DictionaryAttr>(
      PDDialect::RegionsAttrHelper::getNameStr());
  if (!dict)
    return fwd.emitError("stage has no pd.regions; run pd-allocate-buffers");
  auto get = [&](StringRef key) {
    auto v = dict.getAs<IntegerAttr>(key);
    return v ? v.getInt() : 0;
  };
  StageRegions r;
  r.weights = get("weights");
  r.weightVersions = get("weight_versions");
  r.grads = get("grads");
  r.optimizer = get("optimizer");
  r.state = get("state");
  r.stashSlot = get("stash_slot");
  r.stashSlots = get("stash_slots");
  r.workspace = get("workspace");
  r.comm = get("comm");
  r.tieGrads = get("tie_grads");
  return r;
}

static std::string dtypeOf(Type type) {
  Type elem = cast<RankedTensorType>(type).getElementType();
  if (elem.isF32())
    return "float32";
  if (elem.isInteger(64))
    return "int64";
  if (elem.isInteger(32))
    return "int32";
  return "unknown";
}

static void collectOps(func::FuncOp fn, bool forward, StageInfo &info) {
  fn.walk([&](Operation *op) {
    if (auto cost = dyn_cast<CostOpInterface>(op))
      (forward ? info.forwardFlops : info.backwardFlops) += cost.getFlops();
    if (auto mm = dyn_cast<BatchMatMulOp>(op); mm && mm.getTriangle())
      info.skippedFlops += mm.getDenseFlops() - mm.getFlops();
    if (auto in = dyn_cast<InputOp>(op)) {
      StageInput input;
      input.index = in.getIndex();
      input.name = in.getName().str();
      input.dtype = dtypeOf(in.getType());
      auto shape = cast<RankedTensorType>(in.getType()).getShape();
      input.shape.assign(shape.begin(), shape.end());
      for (Operation *user : in->getUsers())
        if (auto loss = dyn_cast<SoftmaxCrossEntropyLossOp>(user))
          input.classes = loss.getLogits().getType().getDimSize(1);
        else if (auto fused = dyn_cast<SoftmaxCrossEntropyWithGradOp>(user))
          input.classes = fused.getLogits().getType().getDimSize(1);
      info.inputs.push_back(input);
    } else if (auto send = dyn_cast<SendOp>(op)) {
      info.channels.push_back({(int64_t)send.getChannel(),
                               (int64_t)send.getPeer(),
                               getTensorBytes(send.getValue().getType()), true,
                               forward});
    } else if (auto recv = dyn_cast<RecvOp>(op)) {
      info.channels.push_back({(int64_t)recv.getChannel(),
                               (int64_t)recv.getPeer(),
                               getTensorBytes(recv.getType()), false,
                               forward});
    } else if (isa<ReportLossOp>(op)) {
      info.loss = true;
    }
  });
}

/// The pd.state layout of the stage (`pd.state` on its forward; absent when
/// it updates none).
static LogicalResult collectState(SymbolTable &symbols, func::FuncOp fwd,
                                  StageInfo &info) {
  auto layout = fwd->getAttrOfType<DictionaryAttr>(
      PDDialect::StateAttrHelper::getNameStr());
  if (!layout)
    return success();
  for (NamedAttribute entry : layout) {
    auto state = symbols.lookup<StateOp>(entry.getName());
    auto offset = dyn_cast<IntegerAttr>(entry.getValue());
    if (!state || !offset)
      return fwd.emitError("bad pd.state entry ") << entry.getName();
    StageState s;
    s.name = state.getOnnxName().str();
    auto shape = cast<RankedTensorType>(state.getType()).getShape();
    s.shape.assign(shape.begin(), shape.end());
    s.offset = offset.getInt();
    info.state.push_back(s);
  }
  return success();
}

FailureOr<StageInfo> mlir::pd::collectStageInfo(ModuleOp module,
                                                int64_t stage) {
  func::FuncOp fwd = lookupStageFunction(module, stage, Phase::Forward);
  func::FuncOp bwd = lookupStageFunction(module, stage, Phase::Backward);
  if (!fwd || !bwd)
    return module.emitError("no functions for stage ") << stage;
  StageInfo info;
  info.stage = stage;
  SymbolTable symbols(module);
  auto regions = readRegions(fwd);
  if (failed(regions))
    return failure();
  info.regions = *regions;
  auto layout = fwd->getAttrOfType<DictionaryAttr>(
      PDDialect::ParamsAttrHelper::getNameStr());
  if (!layout)
    return fwd.emitError("stage has no pd.params; run pd-allocate-buffers");
  for (NamedAttribute entry : layout) {
    auto param = symbols.lookup<ParamOp>(entry.getName());
    auto offsets = dyn_cast<DenseI64ArrayAttr>(entry.getValue());
    if (!param || !offsets || offsets.size() != 3)
      return fwd.emitError("bad pd.params entry ") << entry.getName();
    StageParam p;
    p.name = param.getOnnxName().str();
    if (std::optional<StringRef> from = param.getInitFrom())
      p.initFrom = from->str();
    auto shape = cast<RankedTensorType>(param.getType()).getShape();
    p.shape.assign(shape.begin(), shape.end());
    p.offset = offsets[0];
    p.gradOffset = offsets[1];
    p.optimizerOffset = offsets[2];
    if (auto owners = param->getAttrOfType<DenseI64ArrayAttr>(
            PDDialect::OwnersAttrHelper::getNameStr()))
      p.owners.assign(owners.asArrayRef().begin(), owners.asArrayRef().end());
    info.params.push_back(p);
  }
  if (failed(collectState(symbols, fwd, info)))
    return failure();
  info.recompute =
      PDDialect::RecomputeAttrHelper(module.getContext()).isAttrPresent(bwd);
  collectOps(fwd, /*forward=*/true, info);
  collectOps(bwd, /*forward=*/false, info);
  return info;
}
