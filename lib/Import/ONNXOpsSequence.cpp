//===- ONNXOpsSequence.cpp - SplitToSequence and SequenceAt -----*- C++ -*-===//
//
// torch 2's exporter writes torch.split as SplitToSequence followed by one
// SequenceAt per chunk. pd has no sequence type: SplitToSequence binds an
// ONNXSequence (input, axis, chunk sizes) and each SequenceAt with a
// constant position becomes the pd.slice (plus pd.reshape without the axis)
// of its chunk, as Split and Squeeze would produce. Any other reader of a
// sequence is rejected.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

/// Fails unless every reader of output 0 is SequenceAt reading it as its
/// sequence; names the first offending reader.
static LogicalResult checkSequenceReaders(NodeBinder &b) {
  if (b.isGraphOutput(0))
    return b.emitError() << "sequence '" << b.outputName(0)
                         << "' is a graph output; only SequenceAt may read a "
                            "sequence";
  for (auto [node, i] : b.outputReaders(0))
    if (node->op_type() != "SequenceAt" || i != 0 ||
        (!node->domain().empty() && node->domain() != "ai.onnx"))
      return b.emitError() << "sequence '" << b.outputName(0)
                           << "' is read by node '" << displayName(*node)
                           << "' (" << node->op_type()
                           << "); only SequenceAt with a constant position "
                              "is supported";
  return success();
}

/// The chunk sizes of SplitToSequence along a dimension of `dim`: from the
/// optional `split` input (a scalar chunk size, the last chunk smaller, or
/// 1-D sizes adding up to dim), else chunks of 1.
static FailureOr<SmallVector<int64_t>> chunkSizes(NodeBinder &b, int64_t dim) {
  SmallVector<int64_t> sizes;
  if (!b.hasInput(1)) {
    sizes.assign(dim, 1);
    return sizes;
  }
  FailureOr<DenseElementsAttr> split = b.constantInput(1);
  if (failed(split))
    return failure();
  if (!*split || !split->getElementType().isSignlessInteger() ||
      split->getElementType().isInteger(1))
    return b.emitError() << "split '" << b.inputName(1)
                         << "' must be a compile-time integer constant";
  for (APInt v : split->getValues<APInt>())
    sizes.push_back(v.getSExtValue());
  if (llvm::any_of(sizes, [](int64_t v) { return v < 0; }))
    return b.emitError() << "split sizes must not be negative";
  if (split->getType().getRank() == 0) {
    int64_t chunk = sizes.front();
    if (chunk == 0)
      return b.emitError() << "split chunk size is 0";
    sizes.clear();
    for (int64_t left = dim; left > 0; left -= chunk)
      sizes.push_back(std::min(chunk, left));
    return sizes;
  }
  int64_t total = 0;
  for (int64_t v : sizes)
    total += v;
  if (split->getType().getRank() != 1 || total != dim)
    return b.emitError() << "split sizes add up to " << total << ", not "
                         << dim;
  return sizes;
}

/// SplitToSequence (11): chunks of input 0 along `axis`; `keepdims` (default
/// 1) applies only without `split`, whose chunks then have size 1.
static LogicalResult importSplitToSequence(NodeBinder &b) {
  Value input;
  int64_t axis, keepdims;
  if (b.expectOutputs(1) || b.operand(input, 0) || b.attr(axis, "axis", 0) ||
      b.attr(keepdims, "keepdims", 1) || failed(checkSequenceReaders(b)))
    return failure();
  auto shape = cast<RankedTensorType>(input.getType()).getShape();
  auto axes = b.normalizeAxes({axis}, shape.size());
  if (failed(axes))
    return failure();
  auto sizes = chunkSizes(b, shape[axes->front()]);
  if (failed(sizes))
    return failure();
  b.setSequenceResult(0, ONNXSequence{input, axes->front(), *sizes,
                                      !b.hasInput(1) && keepdims == 0});
  return success();
}

/// The constant scalar position of SequenceAt in [-n, n), made non-negative.
static FailureOr<int64_t> sequencePosition(NodeBinder &b, int64_t n) {
  FailureOr<DenseElementsAttr> c = b.constantInput(1);
  if (failed(c))
    return failure();
  if (!*c || c->getNumElements() != 1 ||
      !c->getElementType().isSignlessInteger() ||
      c->getElementType().isInteger(1))
    return b.emitError() << "position '" << b.inputName(1)
                         << "' must be a compile-time integer scalar";
  int64_t position = (*c->getValues<APInt>().begin()).getSExtValue();
  if (position < -n || position >= n)
    return b.emitError() << "position " << position
                         << " is out of range for a sequence of " << n
                         << " tensors";
  return position < 0 ? position + n : position;
}

/// SequenceAt (11) of a SplitToSequence sequence: the pd.slice of the
/// chunk at a constant position, reshaped without the axis if squeezed.
static LogicalResult importSequenceAt(NodeBinder &b) {
  if (b.expectOutputs(1))
    return failure();
  if (!b.hasInput(0))
    return b.emitError() << "missing required input 0";
  const ONNXSequence *seq = b.sequenceOperand(0);
  if (!seq)
    return b.emitError() << "input '" << b.inputName(0)
                         << "' is not a sequence made by SplitToSequence";
  auto position = sequencePosition(b, seq->sizes.size());
  if (failed(position))
    return failure();
  auto type = cast<RankedTensorType>(seq->input.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1);
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t k = 0; k < *position; ++k)
    starts[seq->axis] += seq->sizes[k];
  shape[seq->axis] = seq->sizes[*position];
  OpBuilder &builder = b.builder();
  Value chunk = builder.createOrFold<SliceOp>(
      b.loc(), RankedTensorType::get(shape, type.getElementType()), seq->input,
      builder.getDenseI64ArrayAttr(starts),
      builder.getDenseI64ArrayAttr(steps));
  if (seq->squeeze) {
    shape.erase(shape.begin() + seq->axis);
    chunk = builder.createOrFold<ReshapeOp>(
        b.loc(), RankedTensorType::get(shape, type.getElementType()), chunk);
  }
  return b.setResult(0, chunk);
}

void mlir::pd::detail::registerSequenceHandlers(HandlerTable &table) {
  table["SplitToSequence"] = {11, importSplitToSequence};
  table["SequenceAt"] = {11, importSequenceAt};
}
