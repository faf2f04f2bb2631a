//===- Autodiff.cpp - Reverse-mode differentiation of the loss --*- C++ -*-===//
//
// pd-autodiff: walks the loss function backwards from its returned scalar,
// asks each op's GradientOpInterface for its vector-Jacobian product, sums
// the gradients of values used more than once, and ends each parameter's
// gradient in pd.accumulate_grad. Forward ops are numbered (pd.op_id) and
// gradient ops point back at them (pd.grad_of) for stage partitioning.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct AutodiffPass : public mlir::pd::impl::AutodiffPassBase<AutodiffPass> {
  using AutodiffPassBase::AutodiffPassBase;
  void runOnOperation() override;

private:
  LogicalResult differentiate(func::FuncOp func);
  LogicalResult backpropagate(Operation *op, OpBuilder &b);
  void addGrad(Value v, Value grad, OpBuilder &b, int64_t gradOf);

  /// The gradient accumulated so far for each forward value.
  DenseMap<Value, Value> grads;
  /// The float values that depend on a parameter: only they get gradients
  /// (labels, token ids, masks and their casts do not).
  DenseSet<Value> active;
};

/// Whether `v` is a tensor of f32 (a value a gradient can flow through).
bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

} // namespace

/// Tags every op created by `b` since `mark` (exclusive) with pd.grad_of.
static void tagSince(Operation *mark, Operation *terminator, int64_t id) {
  Builder b(terminator->getContext());
  for (Operation *op = mark ? mark->getNextNode()
                            : &terminator->getBlock()->front();
       op != terminator; op = op->getNextNode())
    if (!op->hasAttr(kGradOfAttr) && !op->hasAttr(kOpIdAttr))
      op->setAttr(kGradOfAttr, b.getI64IntegerAttr(id));
}

void AutodiffPass::addGrad(Value v, Value grad, OpBuilder &b, int64_t gradOf) {
  auto it = grads.find(v);
  if (it == grads.end()) {
    grads[v] = grad;
    return;
  }
  auto sum = b.create<AddOp>(grad.getLoc(), grad.getType(), it->second, grad);
  sum->setAttr(kGradOfAttr, b.getI64IntegerAttr(gradOf));
  it->second = sum;
}

LogicalResult AutodiffPass::backpropagate(Operation *op, OpBuilder &b) {
  SmallVector<Value> resultGrads;
  bool any = false;
  for (Value r : op->getResults()) {
    Value g = grads.lookup(r);
    resultGrads.push_back(g);
    any |= static_cast<bool>(g);
  }
  if (!any)
    return success();
  int64_t id = *getContractInt<PDDialect::OpIdAttrHelper>(op);
  Operation *terminator = b.getInsertionBlock()->getTerminator();
  Operation *mark = terminator->getPrevNode();

  if (auto ref = dyn_cast<ParamRefOp>(op)) {
    b.create<AccumulateGradOp>(op->getLoc(), ref.getParamAttr(),
                               resultGrads[0]);
    tagSince(mark, terminator, id);
    return success();
  }
  if (isa<InputOp, ConstantOp>(op))
    return success();
  auto vjp = dyn_cast<GradientOpInterface>(op);
  if (!vjp)
    return op->emitError("pd-autodiff: no gradient rule for '")
           << op->getName() << "'";
  // Ops with several results may see gradients for only some of them.
  SmallVector<Value> operandGrads;
  if (failed(vjp.buildVJP(b, resultGrads, operandGrads)))
    return failure();
  tagSince(mark, terminator, id);
  for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
    if (grad && active.contains(operand))
      addGrad(operand, grad, b, id);
  return success();
}

/// Erases gradient ops whose results nobody reads (e.g. the gradient of a
/// graph input), last to first so that chains disappear whole.
static void eraseDeadGradients(Block &body) {
  SmallVector<Operation *> grads;
  for (Operation &op : body.without_terminator())
    if (op.hasAttr(kGradOfAttr))
      grads.push_back(&op);
  for (Operation *op : llvm::reverse(grads))
    if (op->getNumResults() > 0 && op->use_empty() && isPure(op))
      op->erase();
}

LogicalResult AutodiffPass::differentiate(func::FuncOp func) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto lossType = ret.getNumOperands() == 1
                      ? dyn_cast<RankedTensorType>(ret.getOperand(0).getType())
                      : RankedTensorType();
  if (!lossType || lossType.getRank() != 0 ||
      !lossType.getElementType().isF32())
    return func.emitError("pd-autodiff: @")
           << func.getName() << " must return exactly one scalar f32 loss";

  OpBuilder b(ret);
  SmallVector<Operation *> forward;
  int64_t nextId = 0;
  for (Operation &op : body.without_terminator()) {
    op.setAttr(kOpIdAttr, b.getI64IntegerAttr(nextId++));
    forward.push_back(&op);
    bool fromParam = isa<ParamRefOp>(op) ||
                     llvm::any_of(op.getOperands(),
                                  [&](Value v) { return active.contains(v); });
    for (Value r : op.getResults())
      if (fromParam && isFloatTensor(r))
        active.insert(r);
  }

  Value loss = ret.getOperand(0);
  auto seed = b.create<GradSeedOp>(loss.getLoc(), lossType);
  Operation *lossDef = loss.getDefiningOp();
  if (!lossDef)
    return func.emitError("pd-autodiff: the loss is a function argument");
  seed->setAttr(kGradOfAttr, lossDef->getAttr(kOpIdAttr));
  grads[loss] = seed;

  for (Operation *op : llvm::reverse(forward))
    if (failed(backpropagate(op, b)))
      return failure();
  eraseDeadGradients(body);
  return success();
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto func = module.lookupSymbol<func::FuncOp>(funcName);
  if (!func) {
    module.emitError("pd-autodiff: no function @") << funcName;
    return signalPassFailure();
  }
  if (failed(differentiate(func)))
    return signalPassFailure();
}
