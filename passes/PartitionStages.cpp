//===- PartitionStages.cpp - Balanced pipeline stage assignment -*- C++ -*-===//
//
// pd-partition-stages: splits the forward ops of the training function into
// contiguous stages minimising the cost of the most expensive stage (binary
// search over the bottleneck with a greedy split), then places gradient
// ops with the op they differentiate and parameter reads with their users.
// A parameter read on several stages (through one pd.param_ref per use) is
// tied: each of those stages owns a copy (see pd-allocate-buffers).
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include <set>

namespace mlir::pd {
#define GEN_PASS_DEF_PARTITIONSTAGESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct PartitionStagesPass
    : public mlir::pd::impl::PartitionStagesPassBase<PartitionStagesPass> {
  using PartitionStagesPassBase::PartitionStagesPassBase;
  void runOnOperation() override;
  /// The stage of each compute op under the `cuts` option.
  FailureOr<SmallVector<int64_t>> splitAtCuts(ArrayRef<Operation *> heavy);
};

} // namespace

static int64_t opFlops(Operation *op) {
  if (auto cost = dyn_cast<CostOpInterface>(op))
    return cost.getFlops();
  return 0;
}


static int64_t opId(Operation *op) {
  return *getContractInt<PDDialect::OpIdAttrHelper>(op);
}
static int64_t gradOf(Operation *op) {
  return *getContractInt<PDDialect::GradOfAttrHelper>(op);
}
/// The forward op an op is or differentiates.
static int64_t forwardId(Operation *op) {
  if (auto id = getContractInt<PDDialect::OpIdAttrHelper>(op))
    return *id;
  return gradOf(op);
}

/// Counts the contiguous groups needed so that no group exceeds `limit`.
static int64_t groupsNeeded(ArrayRef<int64_t> costs, int64_t limit) {
  int64_t groups = 1, sum = 0;
  for (int64_t c : costs) {
    if (sum + c > limit) {
      ++groups;
      sum = 0;
    }
    sum += c;
  }
  return groups;
}

/// Splits `costs` into exactly `parts` non-empty contiguous groups with the
/// smallest possible maximum group cost; returns the group of each element.
static SmallVector<int64_t> balancedSplit(ArrayRef<int64_t> costs,
                                          int64_t parts) {
  int64_t lo = 0, hi = 0;
  for (int64_t c : costs) {
    lo = std::max(lo, c);
    hi += c;
  }
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (groupsNeeded(costs, mid) <= parts)
      hi = mid;
    else
      lo = mid + 1;
  }
  // Greedy split at the bottleneck; a group also closes early when the
  // remaining elements are exactly enough to give each later group one.
  SmallVector<int64_t> group(costs.size());
  int64_t g = 0, sum = 0, n = costs.size();
  for (int64_t i = 0; i < n; ++i) {
    bool full = sum + costs[i] > lo;
    bool needed = n - i == parts - 1 - g;
    if (sum > 0 && (full || needed)) {
      ++g;
      sum = 0;
    }
    group[i] = g;
    sum += costs[i];
  }
  return group;
}

FailureOr<SmallVector<int64_t>>
PartitionStagesPass::splitAtCuts(ArrayRef<Operation *> heavy) {
  Operation *fn = heavy.front()->getParentOp();
  if (static_cast<int64_t>(cuts.size()) != numStages - 1)
    return fn->emitError("pd-partition-stages: ")
           << cuts.size() << " cuts given for " << int64_t(numStages)
           << " stages (expected " << int64_t(numStages) - 1 << ")";
  SmallVector<int64_t> group;
  size_t next = 0;
  for (Operation *op : heavy) {
    if (next < cuts.size() && opId(op) == cuts[next])
      ++next;
    group.push_back(next);
  }
  if (next != cuts.size())
    return fn->emitError("pd-partition-stages: cut ")
           << cuts[next]
           << " is not the pd.op_id of a compute op after the previous cut";
  return group;
}

void PartitionStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto func = module.lookupSymbol<func::FuncOp>(funcName);
  if (!func) {
    module.emitError("pd-partition-stages: no function @") << funcName;
    return signalPassFailure();
  }
  Block &body = func.getBody().front();
  Builder b(module.getContext());

  // Cost of each forward op: its own FLOPs plus its gradient ops'.
  DenseMap<int64_t, int64_t> cost;
  for (Operation &op : body.without_terminator()) {
    if (op.hasAttr(kOpIdAttr))
      cost[opId(&op)] += opFlops(&op);
    else if (op.hasAttr(kGradOfAttr))
      cost[gradOf(&op)] += opFlops(&op);
    else {
      op.emitError("pd-partition-stages: op is neither forward (pd.op_id) nor "
                   "gradient (pd.grad_of); run pd-autodiff first");
      return signalPassFailure();
    }
  }

  // Balance the forward ops that carry cost.
  SmallVector<Operation *> heavy;
  SmallVector<int64_t> heavyCost;
  for (Operation &op : body.without_terminator())
    if (op.hasAttr(kOpIdAttr) && op.getNumOperands() > 0) {
      heavy.push_back(&op);
      heavyCost.push_back(std::max<int64_t>(cost[opId(&op)], 1));
    }
  if (numStages < 1 || static_cast<int64_t>(heavy.size()) < numStages) {
    func.emitError("pd-partition-stages: cannot split ")
        << heavy.size() << " compute ops into " << int64_t(numStages)
        << " stages";
    return signalPassFailure();
  }
  FailureOr<SmallVector<int64_t>> group =
      cuts.empty() ? FailureOr<SmallVector<int64_t>>(
                         balancedSplit(heavyCost, numStages))
                   : splitAtCuts(heavy);
  if (failed(group))
    return signalPassFailure();
  DenseMap<int64_t, int64_t> stageOfId;
  for (auto [op, g] : llvm::zip(heavy, *group))
    stageOfId[opId(op)] = g;

  // Sources (parameter reads, constants, no operands) follow their users.
  for (Operation &op : body.without_terminator()) {
    if (!op.hasAttr(kOpIdAttr) || op.getNumOperands() > 0)
      continue;
    std::set<int64_t> stages;
    for (Operation *user : op.getUsers())
      if (user->hasAttr(kOpIdAttr))
        stages.insert(stageOfId[opId(user)]);
    // A tied parameter (embedding and LM head) is fine: each of its
    // pd.param_ref reads stays with its users and every stage that reads it
    // owns a copy. One read feeding several stages is not: its gradient was
    // summed before the split, so only one copy would be updated.
    if (stages.size() > 1 && isa<ParamRefOp>(op)) {
      op.emitError("pd-partition-stages: this read of parameter ")
          << cast<ParamRefOp>(op).getParamAttr() << " is used on stages "
          << *stages.begin() << " and " << *stages.rbegin()
          << "; a parameter used on several stages needs one pd.param_ref "
             "per use";
      return signalPassFailure();
    }
    stageOfId[opId(&op)] = stages.empty() ? 0 : *stages.begin();
  }

  for (Operation &op : body.without_terminator()) {
    int64_t id = forwardId(&op);
    op.setAttr(kStageAttr, b.getI64IntegerAttr(stageOfId.lookup(id)));
  }
  module->setAttr(PDDialect::NumStagesAttrHelper::getNameStr(),
                  b.getI64IntegerAttr(numStages));
}
