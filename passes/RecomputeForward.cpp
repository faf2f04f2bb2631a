//===- RecomputeForward.cpp - Full activation recomputation -----*- C++ -*-===//
//
// pd-recompute-forward: for each listed stage, the forward stashes only
// the stage inputs (pd.input, pd.recv) its backward needs, and the
// backward first reruns the forward ops whose values it reads.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "passes/Passes.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pd {
#define GEN_PASS_DEF_RECOMPUTEFORWARDPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct RecomputeForwardPass
    : public mlir::pd::impl::RecomputeForwardPassBase<RecomputeForwardPass> {
  using RecomputeForwardPassBase::RecomputeForwardPassBase;
  void runOnOperation() override;
};

/// What the backward of one stage needs from its forward: the ops to rerun
/// and the stage inputs they start from, both in forward order.
struct RecomputeSlice {
  SmallVector<Operation *> ops;
  SmallVector<Value> inputs;
};

} // namespace

/// Stage inputs are stashed; everything else is recomputed.
static bool isStageInput(Operation *op) { return isa<InputOp, RecvOp>(op); }

/// Ops a backward can rerun: pure ones, parameter reads and constants, and
/// batch norm (whose running-statistics update the clone drops).
static bool isRecomputable(Operation *op) {
  return isMemoryEffectFree(op) || isa<ParamRefOp, ConstantOp, BatchNormOp>(op);
}

/// The forward ops that compute the stashed values `fwd` returns at
/// positions where the backward's argument is used.
static FailureOr<RecomputeSlice> computeSlice(func::FuncOp fwd,
                                              func::FuncOp bwd) {
  auto ret = cast<func::ReturnOp>(fwd.getBody().front().getTerminator());
  SetVector<Operation *> needed;
  SmallVector<Operation *> worklist;
  for (auto [value, arg] : llvm::zip(ret.getOperands(), bwd.getArguments()))
    if (!arg.use_empty())
      if (Operation *def = value.getDefiningOp())
        worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!needed.insert(op) || isStageInput(op))
      continue;
    if (!isRecomputable(op))
      return op->emitOpError("cannot be recomputed in the backward of stage ")
             << *getContractInt<PDDialect::StageAttrHelper>(fwd)
             << ": it has side effects";
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  RecomputeSlice slice;
  for (Operation &op : fwd.getBody().front())
    if (needed.contains(&op)) {
      if (isStageInput(&op))
        llvm::append_range(slice.inputs, op.getResults());
      else
        slice.ops.push_back(&op);
    }
  return slice;
}

/// Clones `slice` at the start of `bwd`, which takes the slice's inputs as
/// its new arguments; uses of the old (stash) arguments read the clones.
static void recomputeInBackward(func::FuncOp bwd, func::ReturnOp fwdReturn,
                                const RecomputeSlice &slice) {
  unsigned numOld = bwd.getNumArguments();
  IRMapping map;
  for (Value input : slice.inputs) {
    bwd.insertArgument(bwd.getNumArguments(), input.getType(),
                       DictionaryAttr(), input.getLoc());
    map.map(input, bwd.getArguments().back());
  }
  OpBuilder b = OpBuilder::atBlockBegin(&bwd.getBody().front());
  for (Operation *op : slice.ops) {
    Operation *clone = b.clone(*op, map);
    // The forward already updated the running statistics.
    if (auto bn = dyn_cast<BatchNormOp>(clone)) {
      bn.removeMomentumAttr();
      bn.removeRunningMeanAttr();
      bn.removeRunningVarAttr();
    }
  }
  for (auto [value, arg] :
       llvm::zip(fwdReturn.getOperands(), bwd.getArguments().take_front(numOld)))
    if (!arg.use_empty())
      arg.replaceAllUsesWith(map.lookup(value));
  llvm::BitVector erase(bwd.getNumArguments());
  erase.set(0, numOld);
  bwd.eraseArguments(erase);
}

/// The forward returns only the slice's inputs; ops that computed nothing
/// but stashed values go.
static void stashOnlyInputs(func::FuncOp fwd, func::ReturnOp ret,
                            const RecomputeSlice &slice) {
  ret->setOperands(slice.inputs);
  fwd.setType(FunctionType::get(fwd.getContext(), {},
                                ValueRange(slice.inputs).getTypes()));
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(fwd.getBody().front())))
    if (op.use_empty() && isMemoryEffectFree(&op) &&
        !op.hasTrait<OpTrait::IsTerminator>())
      op.erase();
}

void RecomputeForwardPass::runOnOperation() {
  ModuleOp module = getOperation();
  PDDialect::RecomputeAttrHelper recompute(&getContext());
  for (int64_t stage : stages) {
    func::FuncOp fwd = lookupStageFunction(module, stage, Phase::Forward);
    func::FuncOp bwd = lookupStageFunction(module, stage, Phase::Backward);
    if (!fwd || !bwd) {
      module.emitError("pd-recompute-forward: the module has no stage ")
          << stage << " (run pd-outline-stages first)";
      return signalPassFailure();
    }
    if (recompute.isAttrPresent(bwd))
      continue;
    FailureOr<RecomputeSlice> slice = computeSlice(fwd, bwd);
    if (failed(slice))
      return signalPassFailure();
    auto ret = cast<func::ReturnOp>(fwd.getBody().front().getTerminator());
    recomputeInBackward(bwd, ret, *slice);
    stashOnlyInputs(fwd, ret, *slice);
    recompute.setAttr(bwd, UnitAttr::get(&getContext()));
  }
}
