//===- AllocateBuffers.cpp - 2BW memory plan of each stage ------*- C++ -*-===//
//
// pd-allocate-buffers: assigns every tensor of every stage function a region
// (weights, grads, stash, comm or workspace) and a byte offset, lays out
// the pd.state its forward updates (state region), and records the regions'
// sizes. Workspace values are packed by liveness (WorkspacePlan); the other
// regions are laid out in order of appearance. The size rules are
// pd/Support/ArenaRules.h, which the planner's memory model shares; a rule
// changed here must change there (pdc compares the two on every plan). Constants stay out of the
// arena (they are read-only data of the stage object).
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"
#include "passes/WorkspacePlan.h"
#include "pd/Support/ArenaRules.h"

namespace mlir::pd {
#define GEN_PASS_DEF_ALLOCATEBUFFERSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct AllocateBuffersPass
    : public mlir::pd::impl::AllocateBuffersPassBase<AllocateBuffersPass> {
  using AllocateBuffersPassBase::AllocateBuffersPassBase;
  void runOnOperation() override;
};

/// Region sizes of one stage, in bytes.
struct Regions {
  int64_t weights = 0, grads = 0, optimizer = 0, state = 0, stash = 0,
          workspace = 0, comm = 0;
  int64_t tied = 0; ///< Aligned bytes of the stage's tied parameters.
};

} // namespace

static void setBuffer(Value v, ArenaRegion region, int64_t offset) {
  mlir::pd::setBuffer(v, BufferAttr::get(v.getContext(), region, offset));
}

static bool hasBuffer(Value v) {
  return !isa<BlockArgument>(v) && getBuffer(v);
}

using Within = WorkspacePlan::Within;

/// `buffer` moved `bytes` further into its region.
static BufferAttr atOffset(BufferAttr buffer, int64_t bytes) {
  return BufferAttr::get(buffer.getContext(), buffer.getRegion(),
                         buffer.getOffset() + bytes);
}

/// The input `view` is a view of, and its byte offset there: a reshape's
/// input at 0, a contiguous slice's at its window (SliceOp::
/// getContiguousOffset); none for other ops.
static Within viewedInput(Operation *view) {
  if (auto reshape = dyn_cast<ReshapeOp>(view))
    return {reshape.getInput(), 0};
  auto slice = dyn_cast<SliceOp>(view);
  std::optional<int64_t> offset =
      slice ? slice.getContiguousOffset() : std::nullopt;
  if (!offset)
    return {};
  return {slice.getInput(), *offset * getElementBytes(slice.getType())};
}

/// Reshapes and contiguous slices are views (marked pd.view): a result
/// with no home of its own takes its input's buffer (at the window's
/// offset) when the input has one (a weight, a stash slot, a sent value),
/// else shares the input's workspace slot (recorded in `views`, by the
/// value viewed and the offset, chains resolved). A constant input (not in
/// the arena) is copied, as is a concat's part (pd-concat-in-place homes
/// it in the concat's result).
static void allocateViews(func::FuncOp fn, const DenseMap<Value, Within> &partOf,
                          DenseMap<Value, Within> &views) {
  fn.walk([&](Operation *op) {
    Within input = viewedInput(op);
    if (!input)
      return;
    Value in = input.value, out = op->getResult(0);
    if (hasBuffer(out) || partOf.count(out) || in.getDefiningOp<ConstantOp>())
      return;
    PDDialect::ViewAttrHelper(op->getContext())
        .setAttr(op, UnitAttr::get(op->getContext()));
    if (BufferAttr buffer = getBuffer(in)) {
      mlir::pd::setBuffer(out, atOffset(buffer, input.offset));
      return;
    }
    Within viewed = views.lookup(in);
    views[out] = viewed ? Within{viewed.value, viewed.offset + input.offset}
                        : input;
  });
}

/// The parts of a pd.in_place_parts concat whose inputs are contiguous
/// runs of its result and carry no pd.concat_part: each input's producer
/// (getContiguousPartRoot) at the input's byte offset. Fails (with an
/// error) when an input has none.
static LogicalResult collectContiguousParts(ConcatOp concat,
                                            DenseMap<Value, Within> &partOf) {
  int64_t bytes = getElementBytes(concat.getType());
  for (auto [index, input] : llvm::enumerate(concat.getInputs())) {
    Value root = getContiguousPartRoot(input);
    if (!root)
      return concat.emitOpError("has pd.in_place_parts but input ")
             << index << " is not computed in place by an op of this "
             << "function read only by it";
    partOf[root] = {concat.getResult(), concat.getInputOffset(index) * bytes};
  }
  return success();
}

/// pd-concat-in-place's parts of `fn`: each result a pd.in_place_parts
/// concat joins, mapped to the concat's result and its offset there (0
/// for a GEMM that writes its part through strides). Fails (with an
/// error) on such a concat with an input no op writes as its part, or on a
/// pd.concat_part GEMM whose result no such concat joins: the lowering
/// would leave the concat unwritten or write past a buffer.
static LogicalResult collectConcatParts(func::FuncOp fn,
                                        DenseMap<Value, Within> &partOf) {
  MLIRContext *ctx = fn.getContext();
  PDDialect::InPlacePartsAttrHelper inPlace(ctx);
  PDDialect::ConcatPartAttrHelper concatPart(ctx);
  WalkResult walk = fn.walk([&](ConcatOp concat) {
    if (!inPlace.isAttrPresent(concat))
      return WalkResult::advance();
    if (concat.hasContiguousInputs() &&
        llvm::none_of(concat.getInputs(), [&](Value input) {
          Value root = getInPlaceOperandRoot(input);
          Operation *def = root ? root.getDefiningOp() : nullptr;
          return def && concatPart.isAttrPresent(def);
        }))
      return failed(collectContiguousParts(concat, partOf))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    int64_t count = concat.getInputs().size();
    for (auto [index, input] : llvm::enumerate(concat.getInputs())) {
      Value root = getInPlaceOperandRoot(input);
      auto mm = root ? root.getDefiningOp<BatchMatMulOp>() : BatchMatMulOp();
      DenseI64ArrayAttr part = mm ? concatPart.getAttr(mm) : nullptr;
      if (!part || part[0] != (int64_t)concat.getAxis() ||
          part[1] != (int64_t)index || part[2] != count) {
        concat.emitOpError("has pd.in_place_parts but input ")
            << index << " is not the result of a pd.batch_matmul with "
            << "pd.concat_part = [" << concat.getAxis() << ", " << index
            << ", " << count << "] read only by it";
        return WalkResult::interrupt();
      }
      partOf[root] = {concat.getResult(), 0};
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  walk = fn.walk([&](BatchMatMulOp mm) {
    if (!concatPart.isAttrPresent(mm) || partOf.count(mm.getResult()))
      return WalkResult::advance();
    mm.emitOpError("has pd.concat_part but no pd.in_place_parts concat "
                   "joins its result");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// Places the values of `fn` that no other region holds in the workspace,
/// packed by liveness; returns its size. The parts of an in-place concat
/// share its home; a gradient kernel that may write its result over a
/// dying operand (getOverwritableOperand) does.
static FailureOr<int64_t> allocateWorkspace(func::FuncOp fn) {
  DenseMap<Value, Within> partOf;
  if (failed(collectConcatParts(fn, partOf)))
    return failure();
  for (auto [part, whole] : partOf)
    if (BufferAttr buffer = getBuffer(whole.value))
      mlir::pd::setBuffer(part, atOffset(buffer, whole.offset));
  DenseMap<Value, Within> views;
  allocateViews(fn, partOf, views);
  WorkspacePlan plan(
      fn,
      [](Value v) {
        // Constants live in the stage object, not in the arena.
        return !hasBuffer(v) && !v.getDefiningOp<ConstantOp>();
      },
      kArenaAlign, [&](Value v) { return views.lookup(v); },
      [&](Value v) { return partOf.lookup(v); },
      [](Value v) {
        Operation *op = v.getDefiningOp();
        return op && v == op->getResult(0) ? getOverwritableOperand(op)
                                           : Value();
      });
  for (const WorkspacePlan::Slot &slot : plan.getSlots())
    setBuffer(slot.value, ArenaRegion::Workspace, slot.offset);
  return plan.getPeakBytes();
}

/// Gives `acc` its accumulator's offset; an op pd-accumulate-in-place
/// marked computes straight into the accumulator.
static void allocateAccumulator(AccumulateGradOp acc, int64_t gradOffset) {
  setContractInt<PDDialect::GradOffsetAttrHelper>(acc, gradOffset);
  Operation *producer = acc.getGrad().getDefiningOp();
  if (producer &&
      PDDialect::AccumulateAttrHelper(acc.getContext()).isAttrPresent(producer))
    setBuffer(producer->getResult(0), ArenaRegion::Grads, gradOffset);
}

/// Parameters: weights, gradient accumulator and optimizer state. Every
/// stage that reads a parameter owns a copy (a tied embedding and LM head
/// live on the first and the last stage): the stage's layout goes into its
/// forward function's `pd.params` ({name = [weight, grad, optimizer]
/// offsets}), each accumulate_grad gets its `pd.grad_offset`, and the
/// pd.param lists its owner stages in `pd.owners`.
static void allocateParams(ModuleOp module, SymbolTable &symbols,
                           int64_t stage, func::FuncOp fwd,
                           func::FuncOp bwd, int64_t optimizerStates,
                           Regions &regions) {
  Builder b(module.getContext());
  llvm::MapVector<ParamOp, SmallVector<int64_t, 3>> layout;
  for (func::FuncOp fn : {fwd, bwd})
    fn.walk([&](Operation *op) {
      FlatSymbolRefAttr sym;
      if (auto ref = dyn_cast<ParamRefOp>(op))
        sym = ref.getParamAttr();
      else if (auto acc = dyn_cast<AccumulateGradOp>(op))
        sym = acc.getParamAttr();
      if (!sym)
        return;
      auto param = symbols.lookup<ParamOp>(sym.getAttr());
      if (layout.count(param))
        return;
      int64_t bytes = alignArena(getTensorBytes(param.getType()));
      layout[param] = {regions.weights, regions.grads, regions.optimizer};
      regions.weights += bytes;
      regions.grads += bytes;
      regions.optimizer += optimizerStates * bytes;
    });
  SmallVector<NamedAttribute> entries;
  for (auto &[param, offsets] : layout) {
    entries.push_back(b.getNamedAttr(param.getSymName(),
                                     b.getDenseI64ArrayAttr(offsets)));
    SmallVector<int64_t> owners;
    if (auto old = param->getAttrOfType<DenseI64ArrayAttr>(
            PDDialect::OwnersAttrHelper::getNameStr()))
      owners.assign(old.asArrayRef().begin(), old.asArrayRef().end());
    owners.push_back(stage);
    param->setAttr(PDDialect::OwnersAttrHelper::getNameStr(),
                   b.getDenseI64ArrayAttr(owners));
  }
  fwd->setAttr(PDDialect::ParamsAttrHelper::getNameStr(),
               b.getDictionaryAttr(entries));
  for (func::FuncOp fn : {fwd, bwd})
    fn.walk([&](Operation *op) {
      if (auto ref = dyn_cast<ParamRefOp>(op))
        setBuffer(ref, ArenaRegion::Weights,
                  layout[symbols.lookup<ParamOp>(ref.getParamAttr().getAttr())][0]);
      else if (auto acc = dyn_cast<AccumulateGradOp>(op))
        allocateAccumulator(
            acc, layout[symbols.lookup<ParamOp>(acc.getParamAttr().getAttr())][1]);
    });
}

/// State (pd.state: BatchNormalization running statistics): one copy per
/// stage in the state region, not versioned, no gradient or optimizer
/// state. Every pd.state an op of the forward names (a symbol-reference
/// attribute) gets an offset there, recorded in the forward function's
/// `pd.state` ({name = offset}, absent when there is none).
static void allocateState(ModuleOp module, SymbolTable &symbols,
                          func::FuncOp fwd, Regions &regions) {
  Builder b(module.getContext());
  llvm::MapVector<StringAttr, int64_t> layout;
  fwd.walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrs()) {
      auto sym = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
      auto state = sym ? symbols.lookup<StateOp>(sym.getAttr()) : StateOp();
      if (!state || layout.count(state.getSymNameAttr()))
        continue;
      layout[state.getSymNameAttr()] = regions.state;
      regions.state += alignArena(getTensorBytes(state.getType()));
    }
  });
  SmallVector<NamedAttribute> entries;
  for (auto &[name, offset] : layout)
    entries.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(offset)));
  if (!entries.empty())
    fwd->setAttr(PDDialect::StateAttrHelper::getNameStr(),
                 b.getDictionaryAttr(entries));
}

/// Whether every reader of `v` is a contiguous slice (a view of it).
static bool onlyCutIntoWindows(Value v) {
  return llvm::all_of(v.getUsers(), [](Operation *user) {
    auto slice = dyn_cast<SliceOp>(user);
    return slice && slice.getContiguousOffset();
  });
}

/// What holds the stashed or sent value `v`: for a reshape (chain) of a
/// value the forward computes, that value, so that its producer writes
/// into the stash slot or comm buffer and the reshapes become views of it
/// (allocateViews); else `v`. The chain goes on through inputs no region
/// holds or the stash holds: a sent reshape of a stashed value is sent
/// from the stash slot, which is not reused before the send completes
/// (the next forward waits for it). A reshape given a slot of its own
/// would be a copy out of the workspace or the stash: 33 per microbatch
/// stashed in the forward of bench/perf_suite.py's small GPT (57 MiB); at
/// d = 2 the GELU gradient the small GPT's second stage sends back (4
/// MiB), the large GPT's QKV projection its first stage sends (12 MiB).
/// The chain goes on through a contiguous slice too (the value a view at
/// an offset of, returned in `offset`) when every reader of the slice's
/// input is such a slice: the input is then only cut into windows, and
/// its producer writes them all where they go (at d = 2 the small GPT's
/// layer norm before the row-split MLP GEMM: one window stashed, one
/// sent). Mirrored by the planner's stage model
/// (lib/Planner/StageArena.cpp, homeRoot).
static Value homeRoot(Value v, int64_t &offset) {
  offset = 0;
  if (hasBuffer(v))
    return v;
  Value root = v;
  while (Operation *view = root.getDefiningOp()) {
    Within input = viewedInput(view);
    if (!input || (isa<SliceOp>(view) && !onlyCutIntoWindows(input.value)))
      break;
    Operation *def = input.value.getDefiningOp();
    if (!def || isa<ConstantOp>(def))
      break;
    if (BufferAttr buffer = getBuffer(input.value);
        buffer && buffer.getRegion() != ArenaRegion::Stash)
      break;
    root = input.value;
    offset += input.offset;
  }
  return root;
}

/// The operand (its reshape chain's start) a stashed value's kernel writes
/// it over: a cross-entropy gradient's logits
/// (SoftmaxCrossEntropyWithGradOp::getInPlaceLogits), a masked softmax's
/// scores (MaskedSoftmaxOp::getInPlaceInput); null for other values.
static Value inPlaceOperandOf(Value stashed) {
  if (auto xent = stashed.getDefiningOp<SoftmaxCrossEntropyWithGradOp>())
    return stashed == xent.getDlogits() ? xent.getInPlaceLogits() : Value();
  if (auto softmax = stashed.getDefiningOp<MaskedSoftmaxOp>())
    return softmax.getInPlaceInput();
  return {};
}

/// A stashed value written over its operand shares its stash slot with
/// that operand (inPlaceOperandOf), so the operand's producer writes into
/// the slot and no workspace tensor holds it. Mirrored by the planner's
/// stage model (StageModel.cpp, allocate).
static void shareWithOperand(Value stashed) {
  if (Value operand = inPlaceOperandOf(stashed); operand && !hasBuffer(operand))
    mlir::pd::setBuffer(operand, getBuffer(stashed));
}

/// The stash: the forward's results, which the backward takes as arguments.
static void allocateStash(func::FuncOp fwd, func::FuncOp bwd,
                          Regions &regions) {
  auto ret = cast<func::ReturnOp>(fwd.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    int64_t offset;
    Value root = homeRoot(v, offset);
    if (!hasBuffer(root)) {
      setBuffer(root, ArenaRegion::Stash, regions.stash);
      regions.stash += alignArena(getTensorBytes(root.getType()));
      shareWithOperand(root);
    }
    setBuffer(bwd.getArgument(i), ArenaRegion::Stash,
              getBuffer(root).getOffset() + offset);
  }
}

/// Sent values live in the comm region, or in the stash slot of the value
/// a sent reshape views (homeRoot).
static void allocateComm(func::FuncOp fn, Regions &regions) {
  fn.walk([&](Operation *op) {
    auto send = dyn_cast<SendOp>(op);
    if (!send || isa<BlockArgument>(send.getValue()))
      return;
    int64_t offset;
    Value root = homeRoot(send.getValue(), offset);
    if (hasBuffer(root))
      return;
    setBuffer(root, ArenaRegion::Comm, regions.comm);
    regions.comm += alignArena(getTensorBytes(root.getType()));
  });
}

void AllocateBuffersPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto stagesAttr = module->getAttrOfType<IntegerAttr>(
      PDDialect::NumStagesAttrHelper::getNameStr());
  int64_t optimizerStates = optimizerStateTensors(optimizer);
  if (!stagesAttr) {
    module.emitError("pd-allocate-buffers: expects outlined stages "
                     "(pd.num_stages on the module)");
    return signalPassFailure();
  }
  // The module records what its buffers were planned for.
  MLIRContext *ctx = module.getContext();
  PDDialect::ScheduleAttrHelper(ctx).setAttr(
      module, ScheduleAttr::get(ctx, schedule));
  PDDialect::OptimizerAttrHelper(ctx).setAttr(
      module, OptimizerAttr::get(ctx, optimizer));
  int64_t d = stagesAttr.getInt(), m = microbatches ? microbatches : d;
  SymbolTable symbols(module);
  std::vector<Regions> stageRegions(d);
  std::vector<func::FuncOp> forwards(d);
  for (int64_t s = 0; s < d; ++s) {
    func::FuncOp fwd = lookupStageFunction(module, s, Phase::Forward);
    func::FuncOp bwd = lookupStageFunction(module, s, Phase::Backward);
    if (!fwd || !bwd) {
      module.emitError("pd-allocate-buffers: missing functions of stage ") << s;
      return signalPassFailure();
    }
    Regions &regions = stageRegions[s];
    forwards[s] = fwd;
    allocateParams(module, symbols, s, fwd, bwd, optimizerStates, regions);
    allocateState(module, symbols, fwd, regions);
    allocateStash(fwd, bwd, regions);
    allocateComm(fwd, regions);
    allocateComm(bwd, regions);
    FailureOr<int64_t> fwdWorkspace = allocateWorkspace(fwd);
    FailureOr<int64_t> bwdWorkspace = allocateWorkspace(bwd);
    if (failed(fwdWorkspace) || failed(bwdWorkspace))
      return signalPassFailure();
    regions.workspace = std::max(*fwdWorkspace, *bwdWorkspace);
  }
  // Tied parameters (owned by several stages) are known once every stage
  // has its parameters.
  PDDialect::OwnersAttrHelper owners(ctx);
  module.walk([&](ParamOp param) {
    DenseI64ArrayAttr attr = owners.getAttr(param);
    if (attr && attr.size() > 1)
      for (int64_t s : attr.asArrayRef())
        stageRegions[s].tied += alignArena(getTensorBytes(param.getType()));
  });
  Builder b(ctx);
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  for (int64_t s = 0; s < d; ++s) {
    const Regions &regions = stageRegions[s];
    forwards[s]->setAttr(
        PDDialect::RegionsAttrHelper::getNameStr(),
        b.getDictionaryAttr({
            b.getNamedAttr("weights", i64(regions.weights)),
            b.getNamedAttr("weight_versions", i64(weightVersions(schedule))),
            b.getNamedAttr("grads", i64(regions.grads)),
            b.getNamedAttr("optimizer", i64(regions.optimizer)),
            b.getNamedAttr("state", i64(regions.state)),
            b.getNamedAttr("stash_slot", i64(regions.stash)),
            b.getNamedAttr("stash_slots", i64(stashSlots(schedule, d, s, m))),
            b.getNamedAttr("workspace", i64(regions.workspace)),
            b.getNamedAttr("comm", i64(regions.comm)),
            b.getNamedAttr("tie_grads",
                           i64(tiedGradsBytes(schedule, regions.tied))),
        }));
  }
}
