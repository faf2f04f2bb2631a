//===- PDOps.cpp - Verifiers and symbol checks of pd ops --------*- C++ -*-===//
//
// Shape helpers shared by the dialect, and each op's verifier. Every message
// here has a case in test/Dialect/PD/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "dialects/PD/IR/PDOpsHelpers.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::pd;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

int64_t mlir::pd::getElementBytes(Type tensorType) {
  return (cast<RankedTensorType>(tensorType).getElementTypeBitWidth() + 7) / 8;
}

ArrayRef<int64_t> mlir::pd::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t mlir::pd::getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return tensor.getNumElements() * getElementBytes(tensor);
}

FailureOr<SmallVector<int64_t>> mlir::pd::broadcastShapes(ArrayRef<int64_t> a,
                                                          ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Buffer assignments
//===----------------------------------------------------------------------===//

static constexpr llvm::StringLiteral kBuffer =
    PDDialect::BufferAttrHelper::getNameStr();
static constexpr llvm::StringLiteral kBuffers =
    PDDialect::BuffersAttrHelper::getNameStr();

BufferAttr mlir::pd::getBuffer(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return fn ? fn.getArgAttrOfType<BufferAttr>(arg.getArgNumber(), kBuffer)
              : BufferAttr();
  }
  Operation *op = v.getDefiningOp();
  if (op->getNumResults() == 1)
    return op->getAttrOfType<BufferAttr>(kBuffer);
  auto all = op->getAttrOfType<ArrayAttr>(kBuffers);
  unsigned i = cast<OpResult>(v).getResultNumber();
  return all ? dyn_cast<BufferAttr>(all[i]) : BufferAttr();
}

void mlir::pd::setBuffer(Value v, BufferAttr buffer) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    fn.setArgAttr(arg.getArgNumber(), kBuffer, buffer);
    return;
  }
  Operation *op = v.getDefiningOp();
  if (op->getNumResults() == 1) {
    op->setAttr(kBuffer, buffer);
    return;
  }
  auto old = op->getAttrOfType<ArrayAttr>(kBuffers);
  SmallVector<Attribute> all =
      old ? SmallVector<Attribute>(old.getValue())
          : SmallVector<Attribute>(op->getNumResults(),
                                   UnitAttr::get(v.getContext()));
  all[cast<OpResult>(v).getResultNumber()] = buffer;
  op->setAttr(kBuffers, ArrayAttr::get(v.getContext(), all));
}

func::FuncOp mlir::pd::lookupStageFunction(ModuleOp module, int64_t stage,
                                           Phase phase) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto stageAttr = PDDialect::StageAttrHelper(fn.getContext()).getAttr(fn);
    auto phaseAttr = PDDialect::PhaseAttrHelper(fn.getContext()).getAttr(fn);
    if (stageAttr && phaseAttr && stageAttr.getInt() == stage &&
        phaseAttr.getValue() == phase)
      return fn;
  }
  return {};
}

void mlir::pd::markStageFunction(func::FuncOp fn, int64_t stage,
                                 Phase phase) {
  MLIRContext *ctx = fn.getContext();
  PDDialect::StageAttrHelper(ctx).setAttr(
      fn, IntegerAttr::get(IntegerType::get(ctx, 64), stage));
  PDDialect::PhaseAttrHelper(ctx).setAttr(fn, PhaseAttr::get(ctx, phase));
}

//===----------------------------------------------------------------------===//
// Parameter symbol uses
//===----------------------------------------------------------------------===//

static LogicalResult verifyParamUse(Operation *op, FlatSymbolRefAttr sym,
                                    Type type,
                                    SymbolTableCollection &symbolTable) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(op, sym);
  if (!param)
    return op->emitOpError("'") << sym.getValue()
                                << "' does not name a pd.param";
  if (param.getType() != type)
    return op->emitOpError("type ")
           << type << " does not match the type " << param.getType()
           << " of parameter '" << sym.getValue() << "'";
  return success();
}

LogicalResult
ParamRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getParamAttr(), getType(), symbolTable);
}

LogicalResult
AccumulateGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getParamAttr(), getGrad().getType(),
                        symbolTable);
}

Operation *AccumulateGradOp::getInPlaceProducer() {
  Operation *producer = getGrad().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return nullptr;
  if (auto matmul = dyn_cast<MatMulOp>(producer))
    return matmul.getBias() ? nullptr : producer;
  return isa<GatherGradOp>(producer) ? producer : nullptr;
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  auto lhs = getLhs().getType(), rhs = getRhs().getType();
  if (lhs.getRank() != 2 || rhs.getRank() != 2)
    return emitOpError("expects 2-D operands, got ranks ")
           << lhs.getRank() << " and " << rhs.getRank();
  int64_t m = lhs.getDimSize(getTransposeLhs() ? 1 : 0);
  int64_t k = lhs.getDimSize(getTransposeLhs() ? 0 : 1);
  int64_t k2 = rhs.getDimSize(getTransposeRhs() ? 1 : 0);
  int64_t n = rhs.getDimSize(getTransposeRhs() ? 0 : 1);
  if (k != k2)
    return emitOpError("contraction dimensions differ: ") << k << " vs " << k2;
  auto result = getType();
  if (result.getRank() != 2 || result.getDimSize(0) != m ||
      result.getDimSize(1) != n)
    return emitOpError("result shape ")
           << shapeStr(result.getShape()) << " is not ["
           << m << "," << n << "]";
  if (Value bias = getBias()) {
    auto type = cast<RankedTensorType>(bias.getType());
    if (type.getRank() != 1 || type.getDimSize(0) != n)
      return emitOpError("bias shape ")
             << shapeStr(type.getShape()) << " is not [" << n << "]";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

static LogicalResult verifyBroadcastBinary(Operation *op) {
  auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
  auto rhs = cast<RankedTensorType>(op->getOperand(1).getType());
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op->emitOpError("operand shapes ")
           << shapeStr(lhs.getShape()) << " and "
           << shapeStr(rhs.getShape()) << " do not broadcast";
  if (ArrayRef<int64_t>(*shape) != result.getShape())
    return op->emitOpError("result shape ")
           << shapeStr(result.getShape())
           << " is not the broadcast shape " << shapeStr(*shape);
  return success();
}

LogicalResult AddOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult SubOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult MulOp::verify() { return verifyBroadcastBinary(*this); }

//===----------------------------------------------------------------------===//
// SumToOp
//===----------------------------------------------------------------------===//

LogicalResult SumToOp::verify() {
  auto in = getInput().getType(), out = getType();
  auto shape = broadcastShapes(in.getShape(), out.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != in.getShape())
    return emitOpError("result shape ")
           << shapeStr(out.getShape()) << " does not broadcast to "
           << shapeStr(in.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxCrossEntropyLossOp
//===----------------------------------------------------------------------===//

/// Logits [N, C] and labels [N] of a cross-entropy op.
static LogicalResult verifyLogitsAndLabels(Operation *op,
                                           RankedTensorType logits,
                                           RankedTensorType labels) {
  if (logits.getRank() != 2)
    return op->emitOpError("expects logits of rank 2 [N, C], got rank ")
           << logits.getRank();
  if (labels.getRank() != 1 || labels.getDimSize(0) != logits.getDimSize(0))
    return op->emitOpError("labels shape ")
           << shapeStr(labels.getShape()) << " does not match logits "
           << shapeStr(logits.getShape()) << " (expected ["
           << logits.getDimSize(0) << "])";
  return success();
}

LogicalResult SoftmaxCrossEntropyLossOp::verify() {
  auto logits = getLogits().getType();
  if (failed(verifyLogitsAndLabels(*this, logits, getLabels().getType())))
    return failure();
  if (getType().getRank() != 0 &&
      getType().getShape() != ArrayRef<int64_t>{logits.getDimSize(0)})
    return emitOpError("expects a scalar result (reduction mean) or one "
                       "loss per row [")
           << logits.getDimSize(0) << "], got "
           << shapeStr(getType().getShape());
  return success();
}

LogicalResult SoftmaxCrossEntropyLossGradOp::verify() {
  auto grad = getGrad().getType();
  int64_t rows = getLogits().getType().getDimSize(0);
  if (grad.getRank() != 0 && grad.getShape() != ArrayRef<int64_t>{rows})
    return emitOpError("expects a scalar gradient or one per row [")
           << rows << "], got " << shapeStr(grad.getShape());
  return success();
}

LogicalResult SoftmaxCrossEntropyWithGradOp::verify() {
  auto logits = getLogits().getType();
  if (failed(verifyLogitsAndLabels(*this, logits, getLabels().getType())))
    return failure();
  if (getDlogits().getType() != logits)
    return emitOpError("expects the gradient's type to be the logits' ")
           << logits;
  return success();
}

Value SoftmaxCrossEntropyWithGradOp::getInPlaceLogits() {
  return getInPlaceOperandRoot(getLogits());
}

Value mlir::pd::getInPlaceOperandRoot(Value operand) {
  Value v = operand;
  while (true) {
    if (!v.hasOneUse())
      return {};
    Operation *def = v.getDefiningOp();
    if (!def || isa<ConstantOp, ParamRefOp, RecvOp, InputOp>(def))
      return {};
    auto reshape = dyn_cast<ReshapeOp>(def);
    if (!reshape)
      return v;
    v = reshape.getInput();
  }
}

bool mlir::pd::canWriteContiguousPart(Operation *op) {
  return !isa<ConstantOp, ParamRefOp, ReshapeOp, SliceOp, ConcatOp>(op);
}

Value mlir::pd::getContiguousPartRoot(Value input) {
  Value v = input;
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!v.hasOneUse() || !def)
      return {};
    auto reshape = dyn_cast<ReshapeOp>(def);
    if (!reshape)
      return canWriteContiguousPart(def) ? v : Value();
    v = reshape.getInput();
  }
}

Value mlir::pd::getOverwritableOperand(Operation *op) {
  if (auto gelu = dyn_cast<GeluGradOp>(op))
    return gelu.getGrad();
  if (auto swiglu = dyn_cast<SwigluGradOp>(op))
    return swiglu.getGrad();
  if (auto geglu = dyn_cast<GegluGradOp>(op))
    return geglu.getGrad();
  if (auto softmax = dyn_cast<MaskedSoftmaxGradOp>(op))
    return softmax.getGrad();
  if (auto norm = dyn_cast<LayerNormGradOp>(op))
    return norm.getGrad();
  return {};
}

bool mlir::pd::runsNoKernel(Operation *op) {
  if (isa<ParamRefOp, ConstantOp, ProfileMarkOp, InterleaveBeginOp,
          InterleaveEndOp>(op))
    return true;
  return isa<ReshapeOp, SliceOp>(op) &&
         PDDialect::ViewAttrHelper(op->getContext()).isAttrPresent(op);
}

#define GET_OP_CLASSES
#include "dialects/PD/IR/PDOps.cpp.inc"
