//===- PDOpsTensor.cpp - Verifiers, folders, gradients of tensor ops -----===//
//
// Verifiers, CostOpInterface and GradientOpInterface of the ops in
// PDOpsTensor.td. Every gradient rule opens with the math of its forward op.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "dialects/PD/IR/PDOpsHelpers.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;
using namespace mlir::pd;

//===----------------------------------------------------------------------===//
// TransposeOp: y = transpose(x, perm)     dx = transpose(dy, perm^-1)
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType()).getShape();
  auto out = cast<RankedTensorType>(getType()).getShape();
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<bool> seen(in.size(), false);
  if (perm.size() != in.size())
    return emitOpError("perm has ")
           << perm.size() << " entries for rank " << in.size();
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return emitOpError("perm is not a permutation of [0, ")
             << in.size() << ")";
    seen[p] = true;
  }
  for (auto [i, p] : llvm::enumerate(perm))
    if (out.size() != in.size() || out[i] != in[p])
      return emitOpError("result shape ")
             << shapeStr(out) << " is not the permuted input shape";
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  SmallVector<int64_t> inverse(getPerm().size());
  for (auto [i, p] : llvm::enumerate(getPerm()))
    inverse[p] = i;
  operandGrads.push_back(
      b.create<TransposeOp>(getLoc(), getInput().getType(), resultGrads[0],
                            b.getDenseI64ArrayAttr(inverse)));
  return success();
}

int64_t TransposeOp::getFlops() { return 0; }

//===----------------------------------------------------------------------===//
// ReshapeOp: y = reshape(x)     dx = reshape(dy)
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getNumElements() != out.getNumElements() ||
      in.getElementType() != out.getElementType())
    return emitOpError("cannot reshape ")
           << in << " to " << out << " (element counts or types differ)";
  return success();
}

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(
      b.create<ReshapeOp>(getLoc(), getInput().getType(), resultGrads[0]));
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp: y[a, i, b] = x[a, idx[i], b]     dx[a, idx[i], b] += dy[a, i, b]
//===----------------------------------------------------------------------===//

/// The shape of gathering `indices` from `data` along `axis`:
/// data[:axis] + indices + data[axis+1:].
static SmallVector<int64_t>
gatheredShape(ArrayRef<int64_t> data, ArrayRef<int64_t> indices, int64_t axis) {
  SmallVector<int64_t> shape(data.begin(), data.begin() + axis);
  shape.append(indices.begin(), indices.end());
  shape.append(data.begin() + axis + 1, data.end());
  return shape;
}

/// Verifies the shapes of a gather (or of its gradient, whose `data` is the
/// result and `gathered` the incoming gradient).
static LogicalResult verifyGather(Operation *op, RankedTensorType data,
                                  RankedTensorType indices,
                                  RankedTensorType gathered, int64_t axis) {
  if (data.getRank() < 1)
    return op->emitOpError("data must have rank >= 1");
  if (axis < 0 || axis >= data.getRank())
    return op->emitOpError("axis ")
           << axis << " is out of range for data of rank " << data.getRank();
  if (data.getElementType() != gathered.getElementType())
    return op->emitOpError("data and gathered element types differ");
  auto expected = gatheredShape(data.getShape(), indices.getShape(), axis);
  if (ArrayRef<int64_t>(expected) != gathered.getShape())
    return op->emitOpError("gathered shape ")
           << shapeStr(gathered.getShape()) << " is not " << shapeStr(expected);
  return success();
}

LogicalResult GatherOp::verify() {
  return verifyGather(*this, getData().getType(), getIndices().getType(),
                      getType(), getAxis());
}

LogicalResult GatherGradOp::verify() {
  return verifyGather(*this, getType(), getIndices().getType(),
                      getGrad().getType(), getAxis());
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto data = dyn_cast_or_null<DenseElementsAttr>(adaptor.getData());
  auto idx = dyn_cast_or_null<DenseElementsAttr>(adaptor.getIndices());
  if (!data || !idx)
    return {};
  auto shape = data.getType().getShape();
  int64_t axis = getAxis(), rows = shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < (int64_t)shape.size(); ++d)
    inner *= shape[d];
  int64_t outer = data.getNumElements() / std::max<int64_t>(rows * inner, 1);
  auto values = llvm::to_vector(data.getValues<Attribute>());
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (APInt i : idx.getValues<APInt>()) {
      int64_t row =
          i.getSExtValue() < 0 ? i.getSExtValue() + rows : i.getSExtValue();
      if (row < 0 || row >= rows)
        return {}; // Left to the run-time kernel, which reports it.
      auto first = values.begin() + (o * rows + row) * inner;
      result.append(first, first + inner);
    }
  return DenseElementsAttr::get(getType(), result);
}

LogicalResult GatherOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  if (!getData().getType().getElementType().isF32())
    return emitOpError("gathers of non-float data are not differentiable");
  operandGrads.push_back(b.create<GatherGradOp>(getLoc(), getData().getType(),
                                                resultGrads[0], getIndices(),
                                                getAxisAttr()));
  operandGrads.push_back(Value());
  return success();
}

int64_t GatherOp::getFlops() { return 0; }
int64_t GatherGradOp::getFlops() { return numElements(getGrad()); }

//===----------------------------------------------------------------------===//
// Folding helpers: constants are small (shapes, masks), so elements are
// handled one by one as attributes.
//===----------------------------------------------------------------------===//

/// The element of `in` (right-aligned, numpy broadcast) that output linear
/// index `linear` of `out` reads.
static int64_t broadcastSource(int64_t linear, ArrayRef<int64_t> out,
                               ArrayRef<int64_t> in) {
  auto outStrides = computeStrides(out), inStrides = computeStrides(in);
  int64_t lead = out.size() - in.size(), offset = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t coord = (linear / outStrides[d]) % std::max<int64_t>(out[d], 1);
    if ((int64_t)d >= lead && in[d - lead] != 1)
      offset += coord * inStrides[d - lead];
  }
  return offset;
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(cast<ShapedType>(getType()));
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// BroadcastToOp: y = broadcast(x)     dx = sum_to(dy)
//===----------------------------------------------------------------------===//

LogicalResult BroadcastToOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("input and result element types differ");
  auto shape = broadcastShapes(in.getShape(), out.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != out.getShape())
    return emitOpError("input shape ")
           << shapeStr(in.getShape()) << " does not broadcast to "
           << shapeStr(out.getShape());
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (!dense)
    return {};
  auto out = cast<RankedTensorType>(getType());
  if (dense.isSplat())
    return DenseElementsAttr::get(out, dense.getSplatValue<Attribute>());
  auto values = llvm::to_vector(dense.getValues<Attribute>());
  SmallVector<Attribute> result;
  for (int64_t i = 0; i < out.getNumElements(); ++i)
    result.push_back(
        values[broadcastSource(i, out.getShape(), dense.getType().getShape())]);
  return DenseElementsAttr::get(out, result);
}

LogicalResult BroadcastToOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(
      b.create<SumToOp>(getLoc(), getInput().getType(), resultGrads[0]));
  return success();
}

int64_t BroadcastToOp::getFlops() { return 0; }

//===----------------------------------------------------------------------===//
// SliceOp: y[i] = x[start + i * step]     dx = slice_grad(dy)
//===----------------------------------------------------------------------===//

/// The input offset of output element `linear` of a slice.
static int64_t sliceSource(int64_t linear, ArrayRef<int64_t> out,
                           ArrayRef<int64_t> in, ArrayRef<int64_t> starts,
                           ArrayRef<int64_t> steps) {
  auto outStrides = computeStrides(out), inStrides = computeStrides(in);
  int64_t offset = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t coord = (linear / outStrides[d]) % out[d];
    offset += (starts[d] + coord * steps[d]) * inStrides[d];
  }
  return offset;
}

/// Verifies that the window (starts, steps, `out` sizes) lies inside `in`.
static LogicalResult verifyWindow(Operation *op, ArrayRef<int64_t> in,
                                  ArrayRef<int64_t> out,
                                  ArrayRef<int64_t> starts,
                                  ArrayRef<int64_t> steps) {
  if (starts.size() != in.size() || steps.size() != in.size() ||
      out.size() != in.size())
    return op->emitOpError("starts, steps and result need the input's rank ")
           << in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t start = starts[d], step = steps[d];
    int64_t last = start + (out[d] - 1) * step;
    if (step == 0 || (out[d] > 0 && (start < 0 || start >= in[d] || last < 0 ||
                                     last >= in[d])))
      return op->emitOpError("dimension ")
             << d << ": the window start " << start << ", step " << step
             << ", size " << out[d] << " leaves the input of size " << in[d];
  }
  return success();
}

LogicalResult SliceOp::verify() {
  if (getInput().getType().getElementType() != getType().getElementType())
    return emitOpError("input and result element types differ");
  return verifyWindow(*this, getInput().getType().getShape(),
                      getType().getShape(), getStarts(), getSteps());
}

LogicalResult SliceGradOp::verify() {
  return verifyWindow(*this, getType().getShape(),
                      getGrad().getType().getShape(), getStarts(), getSteps());
}

std::optional<int64_t> SliceOp::getContiguousOffset() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  if (llvm::is_contained(out, 0))
    return std::nullopt;
  int64_t d = (int64_t)in.size() - 1;
  // The whole dims after d.
  while (d >= 0 && out[d] == in[d] && (steps[d] == 1 || out[d] <= 1))
    --d;
  if (d >= 0 && out[d] > 1 && steps[d] != 1)
    return std::nullopt;
  for (int64_t e = 0; e < d; ++e)
    if (out[e] != 1)
      return std::nullopt;
  int64_t offset = 0, stride = 1;
  for (int64_t e = (int64_t)in.size() - 1; e >= 0; --e) {
    offset += starts[e] * stride;
    stride *= in[e];
  }
  return offset;
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  // The whole tensor (Phi-3's partial rotary of every column): no copy.
  if (getInput().getType() == getType() &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (!dense)
    return {};
  auto out = cast<RankedTensorType>(getType());
  auto in = cast<RankedTensorType>(getInput().getType()).getShape();
  auto values = llvm::to_vector(dense.getValues<Attribute>());
  SmallVector<Attribute> result;
  for (int64_t i = 0; i < out.getNumElements(); ++i)
    result.push_back(
        values[sliceSource(i, out.getShape(), in, getStarts(), getSteps())]);
  return DenseElementsAttr::get(out, result);
}

LogicalResult SliceOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(b.create<SliceGradOp>(getLoc(), getInput().getType(),
                                               resultGrads[0], getStartsAttr(),
                                               getStepsAttr()));
  return success();
}

int64_t SliceOp::getFlops() { return 0; }
int64_t SliceGradOp::getFlops() { return numElements(getGrad()); }

//===----------------------------------------------------------------------===//
// ConcatOp: y = [x0; x1; ...] along axis     dx_i = slice of dy
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::verify() {
  auto out = cast<RankedTensorType>(getType()).getShape();
  int64_t axis = getAxis(), total = 0;
  if (axis < 0 || axis >= (int64_t)out.size())
    return emitOpError("axis ") << axis << " is out of range";
  for (Value v : getInputs()) {
    auto in = cast<RankedTensorType>(v.getType()).getShape();
    if (in.size() != out.size())
      return emitOpError("inputs must have the result's rank");
    for (size_t d = 0; d < in.size(); ++d)
      if ((int64_t)d != axis && in[d] != out[d])
        return emitOpError("input shape ")
               << shapeStr(in) << " differs from " << shapeStr(out)
               << " off the concatenation axis";
    total += in[axis];
  }
  if (total != out[axis])
    return emitOpError("inputs add up to ")
           << total << " along axis " << axis << ", not " << out[axis];
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  // One input and empty ones (Phi-3's passed-through columns when every
  // column is rotated): that input.
  SmallVector<Value> nonEmpty;
  for (Value v : getInputs())
    if (cast<RankedTensorType>(v.getType()).getDimSize(getAxis()) != 0)
      nonEmpty.push_back(v);
  if (nonEmpty.size() == 1 && nonEmpty.front().getType() == getType())
    return nonEmpty.front();
  SmallVector<SmallVector<Attribute>> parts;
  for (Attribute a : adaptor.getInputs()) {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(a);
    if (!dense)
      return {};
    parts.push_back(llvm::to_vector(dense.getValues<Attribute>()));
  }
  auto out = cast<RankedTensorType>(getType());
  int64_t axis = getAxis(), outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= out.getDimSize(d);
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (auto &part : parts) {
      int64_t chunk = part.size() / std::max<int64_t>(outer, 1);
      result.append(part.begin() + o * chunk, part.begin() + (o + 1) * chunk);
    }
  return DenseElementsAttr::get(out, result);
}

LogicalResult ConcatOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  int64_t rank = cast<RankedTensorType>(getType()).getRank(), offset = 0;
  for (Value v : getInputs()) {
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    starts[getAxis()] = offset;
    offset += cast<RankedTensorType>(v.getType()).getDimSize(getAxis());
    operandGrads.push_back(b.create<SliceOp>(
        getLoc(), v.getType(), resultGrads[0], b.getDenseI64ArrayAttr(starts),
        b.getDenseI64ArrayAttr(steps)));
  }
  return success();
}

int64_t ConcatOp::getFlops() { return 0; }

SmallVector<BatchMatMulOp> ConcatOp::getInPlaceParts() {
  int64_t axis = getAxis(), count = getInputs().size();
  Type partType = getInputs().front().getType();
  PDDialect::ConcatPartAttrHelper concatPart(getContext());
  SmallVector<BatchMatMulOp> parts;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    Value root = getInPlaceOperandRoot(input);
    auto mm = root ? root.getDefiningOp<BatchMatMulOp>() : BatchMatMulOp();
    if (!mm || input.getType() != partType || concatPart.isAttrPresent(mm))
      return {};
    ArrayRef<int64_t> stored = mm.getType().getShape();
    ArrayRef<int64_t> in = cast<RankedTensorType>(partType).getShape();
    if (axis >= (int64_t)stored.size() ||
        stored.take_front(axis) != in.take_front(axis))
      return {};
    // The result as a tensor of the GEMM's stored shape with the parts'
    // dim inserted at `axis` (the reshapes only regroup the dims after it).
    SmallVector<int64_t> whole(stored);
    whole.insert(whole.begin() + axis, count);
    int64_t select[] = {axis, (int64_t)index};
    if (!BatchMatMulOp::stridedResult(whole, mm.getResultPerm(),
                                      ArrayRef<int64_t>(select)))
      return {};
    parts.push_back(mm);
  }
  return parts;
}

bool ConcatOp::hasContiguousInputs() {
  ArrayRef<int64_t> out = cast<RankedTensorType>(getType()).getShape();
  return llvm::all_of(out.take_front(getAxis()),
                      [](int64_t dim) { return dim == 1; });
}

int64_t ConcatOp::getInputOffset(unsigned index) {
  int64_t offset = 0;
  for (Value in : getInputs().take_front(index))
    offset += cast<RankedTensorType>(in.getType()).getNumElements();
  return offset;
}

SmallVector<Value> ConcatOp::getContiguousParts() {
  if (!hasContiguousInputs())
    return {};
  SmallVector<Value> parts;
  for (Value in : getInputs()) {
    Value root = getContiguousPartRoot(in);
    if (!root)
      return {};
    parts.push_back(root);
  }
  return parts;
}

//===----------------------------------------------------------------------===//
// CompareOp and CastOp
//===----------------------------------------------------------------------===//

/// An element as a double (floats, integers and bools).
static double asDouble(Attribute a) {
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValueAsDouble();
  auto i = cast<IntegerAttr>(a);
  return i.getType().isInteger(1) ? (double)i.getValue().getZExtValue()
                                  : (double)i.getValue().getSExtValue();
}

LogicalResult CompareOp::verify() {
  auto lhs = getLhs().getType(), rhs = getRhs().getType();
  StringRef pred = getPredicate();
  bool logic = pred == "and" || pred == "or" || pred == "xor";
  if (!logic && !llvm::is_contained({"eq", "lt", "le", "gt", "ge"}, pred))
    return emitOpError("unknown predicate '") << pred << "'";
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("operand element types differ");
  if (logic && !lhs.getElementType().isInteger(1))
    return emitOpError("predicate '") << pred << "' needs bool operands";
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != getType().getShape())
    return emitOpError("result shape ")
           << shapeStr(getType().getShape())
           << " is not the broadcast of the operand shapes";
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("input and result shapes differ");
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  auto in = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (!in)
    return {};
  auto out = cast<RankedTensorType>(getType());
  Type elem = out.getElementType();
  SmallVector<Attribute> result;
  for (Attribute a : in.getValues<Attribute>()) {
    double v = asDouble(a);
    if (elem.isF32())
      result.push_back(FloatAttr::get(elem, v));
    else if (elem.isInteger(1))
      result.push_back(IntegerAttr::get(elem, v != 0.0));
    else
      result.push_back(IntegerAttr::get(elem, (int64_t)v));
  }
  return DenseElementsAttr::get(out, result);
}

//===----------------------------------------------------------------------===//
// WhereOp: y = c ? a : b     da = sum_to(c ? dy : 0), db = sum_to(c ? 0 : dy)
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::verify() {
  auto shape = broadcastShapes(getLhs().getType().getShape(),
                               getRhs().getType().getShape());
  if (succeeded(shape))
    shape = broadcastShapes(*shape, getCond().getType().getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != getType().getShape())
    return emitOpError("result shape ")
           << shapeStr(getType().getShape())
           << " is not the broadcast of the operand shapes";
  return success();
}

LogicalResult WhereGradOp::verify() {
  auto grad = getGrad().getType().getShape();
  auto shape = broadcastShapes(getCond().getType().getShape(), grad);
  if (getType() != getGrad().getType())
    return emitOpError("result type differs from the gradient's");
  if (failed(shape) || ArrayRef<int64_t>(*shape) != grad)
    return emitOpError("condition shape ")
           << shapeStr(getCond().getType().getShape())
           << " does not broadcast to " << shapeStr(grad);
  return success();
}

LogicalResult WhereOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  Value dy = resultGrads[0];
  operandGrads.push_back(Value());
  for (auto [operand, negate] :
       {std::make_pair(getLhs(), false), std::make_pair(getRhs(), true)}) {
    Value g = b.create<WhereGradOp>(getLoc(), dy.getType(), dy, getCond(),
                                    negate ? b.getUnitAttr() : UnitAttr());
    if (g.getType() != operand.getType())
      g = b.create<SumToOp>(getLoc(), operand.getType(), g);
    operandGrads.push_back(g);
  }
  return success();
}

int64_t WhereOp::getFlops() { return numElements(getResult()); }
int64_t WhereGradOp::getFlops() { return numElements(getResult()); }

//===----------------------------------------------------------------------===//
// GatherElementsOp: y[i] = x[i with axis coordinate idx[i]]
//   dx = gather_elements_grad(dy, idx): dy scatter-added into zeros
//===----------------------------------------------------------------------===//

/// Indices of data's rank, each non-axis dim at most data's, the result
/// (or gradient) of the indices' shape and data's element type.
static LogicalResult verifyGatherElements(Operation *op, RankedTensorType data,
                                          RankedTensorType idx,
                                          RankedTensorType out, int64_t axis) {
  if (axis < 0 || axis >= data.getRank())
    return op->emitOpError("axis ") << axis << " is out of range for rank "
                                    << data.getRank();
  if (idx.getRank() != data.getRank())
    return op->emitOpError("indices must have the data's rank ")
           << data.getRank();
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && idx.getShape()[d] > data.getShape()[d])
      return op->emitOpError("indices dim ") << d << " exceeds the data's";
  if (out.getShape() != idx.getShape() ||
      out.getElementType() != data.getElementType())
    return op->emitOpError("result must have the indices' shape and the "
                           "data's element type");
  return success();
}

LogicalResult GatherElementsOp::verify() {
  return verifyGatherElements(*this, getData().getType(),
                              getIndices().getType(), getType(), getAxis());
}

LogicalResult GatherElementsOp::buildVJP(OpBuilder &b,
                                         ArrayRef<Value> resultGrads,
                                         SmallVectorImpl<Value> &operandGrads) {
  if (!getData().getType().getElementType().isF32())
    return emitOpError("gathers of non-float data are not differentiable");
  operandGrads.push_back(b.create<GatherElementsGradOp>(
      getLoc(), getData().getType(), resultGrads[0], getIndices(),
      getAxisAttr()));
  operandGrads.push_back(Value());
  return success();
}

int64_t GatherElementsOp::getFlops() { return 0; }
int64_t GatherElementsGradOp::getFlops() { return numElements(getGrad()); }
