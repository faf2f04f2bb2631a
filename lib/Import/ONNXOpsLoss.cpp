//===- ONNXOpsLoss.cpp - Loss functions -------------------------*- C++ -*-===//
//
// Handlers for ONNX loss ops. SoftmaxCrossEntropyLoss (what torch exports
// for F.cross_entropy) becomes pd.softmax_cross_entropy with reduction
// "mean", logits [N, C] and labels [N]; other variants are rejected.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

/// Checks the label tensor: [N] of i64 or i32 matching logits [N, C].
static LogicalResult checkLabels(NodeBinder &b, Value logits, Value labels) {
  auto logitsType = cast<RankedTensorType>(logits.getType());
  auto labelsType = cast<RankedTensorType>(labels.getType());
  if (logitsType.getRank() != 2)
    return b.emitError() << "scores '" << b.inputName(0) << "' have shape "
                         << shapeString(logitsType.getShape())
                         << "; only [N, C] scores are supported";
  if (!labelsType.getElementType().isInteger(64) &&
      !labelsType.getElementType().isInteger(32))
    return b.emitError() << "labels '" << b.inputName(1)
                         << "' have element type "
                         << labelsType.getElementType()
                         << ", expected i64 or i32";
  if (labelsType.getRank() != 1 ||
      labelsType.getDimSize(0) != logitsType.getDimSize(0))
    return b.emitError() << "labels '" << b.inputName(1) << "' have shape "
                         << shapeString(labelsType.getShape()) << ", expected ["
                         << logitsType.getDimSize(0) << "]";
  return success();
}

/// SoftmaxCrossEntropyLoss (12, 13): reduction "mean" only, no weights, and
/// the optional log_prob output must be unused.
static LogicalResult importSoftmaxCrossEntropyLoss(NodeBinder &b) {
  std::string reduction;
  int64_t ignoreIndex;
  Value logits, labels;
  if (b.attr(reduction, "reduction", "mean") ||
      b.attr(ignoreIndex, "ignore_index", -100))
    return failure();
  if (reduction != "mean")
    return b.emitError() << "reduction '" << reduction
                         << "' is unsupported (only 'mean')";
  if (b.hasInput(2))
    return b.emitError() << "class weights '" << b.inputName(2)
                         << "' are unsupported";
  if (b.isOutputUsed(1))
    return b.emitError() << "the log_prob output '" << b.outputName(1)
                         << "' is used; only the loss output is supported";
  if (b.f32Operand(logits, 0) || b.operand(labels, 1) ||
      failed(checkLabels(b, logits, labels)))
    return failure();
  // Without ignore_index every label counts; -100 is never a valid class.
  auto loss = b.builder().create<SoftmaxCrossEntropyLossOp>(
      b.loc(), RankedTensorType::get({}, b.builder().getF32Type()), logits,
      labels, b.builder().getI64IntegerAttr(ignoreIndex));
  return b.setResult(0, loss.getResult());
}

void mlir::pd::detail::registerLossHandlers(HandlerTable &table) {
  table["SoftmaxCrossEntropyLoss"] = {12, importSoftmaxCrossEntropyLoss};
}
