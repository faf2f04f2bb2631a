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
};

/// Tags every op its builder creates with `pd.grad_of` = the forward op
/// being differentiated (ops the rules create, sums, accumulators).
class GradOfTagger : public OpBuilder::Listener {
public:
  void setForwardOp(int64_t id) { forwardId = id; }

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    if (!op->hasAttr(kGradOfAttr) && !op->hasAttr(kOpIdAttr))
      setContractInt<PDDialect::GradOfAttrHelper>(op, forwardId);
  }

private:
  int64_t forwardId = 0;
};

/// The reverse sweep over one function: state of one differentiation.
class Differentiator {
public:
  explicit Differentiator(func::FuncOp func) : func(func), b(func) {
    b.setListener(&tagger);
  }

  LogicalResult run();

private:
  LogicalResult backpropagate(Operation *op);
  void addGrad(Value v, Value grad);

  func::FuncOp func;
  GradOfTagger tagger;
  OpBuilder b;
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

void Differentiator::addGrad(Value v, Value grad) {
  auto it = grads.find(v);
  if (it == grads.end()) {
    grads[v] = grad;
    return;
  }
  it->second = b.create<AddOp>(grad.getLoc(), grad.getType(), it->second, grad);
}

LogicalResult Differentiator::backpropagate(Operation *op) {
  SmallVector<Value> resultGrads;
  bool any = false;
  for (Value r : op->getResults()) {
    Value g = grads.lookup(r);
    resultGrads.push_back(g);
    any |= static_cast<bool>(g);
  }
  if (!any)
    return success();
  tagger.setForwardOp(*getContractInt<PDDialect::OpIdAttrHelper>(op));

  if (auto ref = dyn_cast<ParamRefOp>(op)) {
    b.create<AccumulateGradOp>(op->getLoc(), ref.getParamAttr(),
                               resultGrads[0]);
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
  for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
    if (grad && active.contains(operand))
      addGrad(operand, grad);
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

LogicalResult Differentiator::run() {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto lossType = ret.getNumOperands() == 1
                      ? dyn_cast<RankedTensorType>(ret.getOperand(0).getType())
                      : RankedTensorType();
  if (!lossType || lossType.getRank() != 0 ||
      !lossType.getElementType().isF32())
    return func.emitError("pd-autodiff: @")
           << func.getName() << " must return exactly one scalar f32 loss";

  SmallVector<Operation *> forward;
  int64_t nextId = 0;
  for (Operation &op : body.without_terminator()) {
    setContractInt<PDDialect::OpIdAttrHelper>(&op, nextId++);
    forward.push_back(&op);
    bool fromParam = isa<ParamRefOp>(op) ||
                     llvm::any_of(op.getOperands(),
                                  [&](Value v) { return active.contains(v); });
    for (Value r : op.getResults())
      if (fromParam && isFloatTensor(r))
        active.insert(r);
  }

  Value loss = ret.getOperand(0);
  Operation *lossDef = loss.getDefiningOp();
  if (!lossDef)
    return func.emitError("pd-autodiff: the loss is a function argument");
  // Gradient ops go before the return, in reverse order of the forward.
  b.setInsertionPoint(ret);
  tagger.setForwardOp(*getContractInt<PDDialect::OpIdAttrHelper>(lossDef));
  grads[loss] = b.create<GradSeedOp>(loss.getLoc(), lossType);

  for (Operation *op : llvm::reverse(forward))
    if (failed(backpropagate(op)))
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
  if (failed(Differentiator(func).run()))
    return signalPassFailure();
}
