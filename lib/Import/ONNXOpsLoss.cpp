//===- ONNXOpsLoss.cpp - Loss functions -------------------------*- C++ -*-===//
//
// Handlers for ONNX loss ops. SoftmaxCrossEntropyLoss (what torch exports
// for F.cross_entropy) becomes pd.softmax_cross_entropy on logits [N, C]
// and labels [N] (scores [N, C, d1, ..] are moved to [N*d1*.., C] first):
// a scalar result for reduction "mean", per-row losses for "none", summed
// for "sum". Class weights are rejected.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

/// Checks the label tensor: [N, d1, ..] of i64 or i32 matching scores
/// [N, C, d1, ..].
static LogicalResult checkLabels(NodeBinder &b, Value logits, Value labels) {
  auto logitsType = cast<RankedTensorType>(logits.getType());
  auto labelsType = cast<RankedTensorType>(labels.getType());
  if (logitsType.getRank() < 2)
    return b.emitError() << "scores '" << b.inputName(0) << "' have shape "
                         << shapeString(logitsType.getShape())
                         << "; expected [N, C] or [N, C, d1, ...]";
  if (!labelsType.getElementType().isInteger(64) &&
      !labelsType.getElementType().isInteger(32))
    return b.emitError() << "labels '" << b.inputName(1)
                         << "' have element type "
                         << labelsType.getElementType()
                         << ", expected i64 or i32";
  SmallVector<int64_t> want(logitsType.getShape());
  want.erase(want.begin() + 1);
  if (labelsType.getShape() != ArrayRef<int64_t>(want))
    return b.emitError() << "labels '" << b.inputName(1) << "' have shape "
                         << shapeString(labelsType.getShape()) << ", expected "
                         << shapeString(want);
  return success();
}

/// Scores [N, C, d1, ..] and labels [N, d1, ..] as the rows of one [N*D, C]
/// problem (class axis last, then flattened): the mean over non-ignored
/// elements is the same.
static void flattenSpatial(NodeBinder &b, Value &logits, Value &labels) {
  auto type = cast<RankedTensorType>(logits.getType());
  if (type.getRank() == 2)
    return;
  OpBuilder &builder = b.builder();
  SmallVector<int64_t> perm{0}, moved{type.getDimSize(0)};
  for (int64_t d = 2; d < type.getRank(); ++d) {
    perm.push_back(d);
    moved.push_back(type.getDimSize(d));
  }
  perm.push_back(1);
  moved.push_back(type.getDimSize(1));
  Value transposed = builder.create<TransposeOp>(
      b.loc(), RankedTensorType::get(moved, type.getElementType()), logits,
      builder.getDenseI64ArrayAttr(perm));
  int64_t classes = type.getDimSize(1), rows = type.getNumElements() / classes;
  logits = builder.create<ReshapeOp>(
      b.loc(), RankedTensorType::get({rows, classes}, type.getElementType()),
      transposed);
  auto labelsType = cast<RankedTensorType>(labels.getType());
  labels = builder.create<ReshapeOp>(
      b.loc(), RankedTensorType::get({rows}, labelsType.getElementType()),
      labels);
}

/// SoftmaxCrossEntropyLoss (12, 13): reductions "mean", "sum" (the per-row
/// losses summed) and "none" (per-element losses of the labels' shape, 0
/// where ignored); no class weights; the optional log_prob output must be
/// unused.
static LogicalResult importSoftmaxCrossEntropyLoss(NodeBinder &b) {
  std::string reduction;
  int64_t ignoreIndex;
  Value logits, labels;
  if (b.attr(reduction, "reduction", "mean") ||
      b.attr(ignoreIndex, "ignore_index", -100))
    return failure();
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return b.emitError() << "reduction '" << reduction
                         << "' is not one of 'mean', 'sum', 'none'";
  if (b.hasInput(2))
    return b.emitError() << "class weights '" << b.inputName(2)
                         << "' are unsupported";
  if (b.isOutputUsed(1))
    return b.emitError() << "the log_prob output '" << b.outputName(1)
                         << "' is used; only the loss output is supported";
  if (b.f32Operand(logits, 0) || b.operand(labels, 1) ||
      failed(checkLabels(b, logits, labels)))
    return failure();
  auto labelShape = cast<RankedTensorType>(labels.getType()).getShape().vec();
  flattenSpatial(b, logits, labels);
  OpBuilder &builder = b.builder();
  Type f32 = builder.getF32Type();
  int64_t rows = cast<RankedTensorType>(labels.getType()).getDimSize(0);
  // Without ignore_index every label counts; -100 is never a valid class.
  auto loss = builder.create<SoftmaxCrossEntropyLossOp>(
      b.loc(),
      reduction == "mean" ? RankedTensorType::get({}, f32)
                          : RankedTensorType::get({rows}, f32),
      logits, labels, builder.getI64IntegerAttr(ignoreIndex));
  Value result = loss.getResult();
  if (reduction == "sum")
    result = builder.create<ReduceSumOp>(b.loc(), RankedTensorType::get({}, f32),
                                         result, builder.getDenseI64ArrayAttr({0}),
                                         /*keepdims=*/false);
  else if (reduction == "none" && labelShape.size() != 1)
    result = builder.create<ReshapeOp>(
        b.loc(), RankedTensorType::get(labelShape, f32), result);
  return b.setResult(0, result);
}

void mlir::pd::detail::registerLossHandlers(HandlerTable &table) {
  table["SoftmaxCrossEntropyLoss"] = {12, importSoftmaxCrossEntropyLoss};
}
