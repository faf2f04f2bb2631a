//===- ONNXOpsTensor.cpp - Moving and reshaping tensors ---------*- C++ -*-===//
//
// Handlers that move or create tensors without arithmetic: Identity aliases
// its input, Constant becomes pd.constant, a 2-D Transpose is recorded as a
// pending transpose that MatMul/Gemm fold into their flags (torch exports
// bias-free nn.Linear as Transpose + MatMul) and other transposes become
// pd.transpose; Reshape, Flatten, Squeeze and Unsqueeze become pd.reshape;
// Gather becomes pd.gather (the embedding lookup on axis 0), GatherND with
// constant indices a pd.gather of rows, Expand
// pd.broadcast_to, Slice and Split pd.slice, Concat pd.concat, Where
// pd.where, GatherElements pd.gather_elements, Trilu a pd.where with a
// constant triangle; comparisons and logic become pd.compare, Not pd.not,
// IsNaN and IsInf pd.compare against the input itself or infinities,
// Cast and CastLike pd.cast. Integer and bool tensors (labels, token ids,
// masks) move through all of them. Every op here folds on constant inputs
// (shape computations; see ConstantFolding.cpp and ONNXOpsShape.cpp).
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

/// Identity (1, 13, 14, 16): the output names the input's value.
static LogicalResult importIdentity(NodeBinder &b) {
  ONNXValue input;
  if (b.expectOutputs(1) || b.rawOperand(input, 0))
    return failure();
  return b.setResult(0, input);
}

/// Transpose (1, 13): a 2-D swap stays pending until a consumer folds it
/// (matmul) or materialises it; any other permutation is pd.transpose.
static LogicalResult importTranspose(NodeBinder &b) {
  ONNXValue input;
  SmallVector<int64_t> perm;
  if (b.expectOutputs(1) || b.rawOperand(input, 0) || b.attr(perm, "perm"))
    return failure();
  SmallVector<int64_t> shape = input.shape();
  int64_t rank = shape.size();
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if ((int64_t)perm.size() != rank)
    return b.emitError() << "perm has " << perm.size()
                         << " entries for input of rank " << rank;
  if (rank == 2 && perm[0] == 1) {
    input.transposed = !input.transposed;
    return b.setResult(0, input);
  }
  if (llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
    return b.setResult(0, input);
  Value value;
  if (b.operand(value, 0))
    return failure();
  SmallVector<int64_t> out;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return b.emitError() << "perm is not a permutation of [0, " << rank
                           << ")";
    seen[p] = true;
    out.push_back(shape[p]);
  }
  Type elem = cast<RankedTensorType>(value.getType()).getElementType();
  Value result = b.builder().create<TransposeOp>(
      b.loc(), RankedTensorType::get(out, elem), value,
      b.builder().getDenseI64ArrayAttr(perm));
  return b.setResult(0, result);
}

/// The shape of a ranked tensor value.
static ArrayRef<int64_t> shapeOfValue(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Reshapes input 0 to `shape` (a pd.reshape unless the shape is equal).
static LogicalResult reshapeTo(NodeBinder &b, Value input,
                               ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  auto outType = RankedTensorType::get(shape, type.getElementType());
  if (outType.getNumElements() != type.getNumElements())
    return b.emitError() << "cannot reshape '" << b.inputName(0) << "' "
                         << shapeString(type.getShape()) << " to "
                         << shapeString(shape);
  if (outType == type)
    return b.setResult(0, input);
  return b.setResult(
      0, b.builder().createOrFold<ReshapeOp>(b.loc(), outType, input));
}

/// Reshape (5, 13, 14): the shape input is a compile-time constant; 0 copies
/// the input's dimension (unless allowzero, 14), -1 is inferred.
static LogicalResult importReshape(NodeBinder &b) {
  Value input;
  SmallVector<double> spec;
  int64_t allowZero;
  if (b.expectOutputs(1) || b.operand(input, 0) || b.constantOperand(spec, 1) ||
      b.attr(allowZero, "allowzero", 0))
    return failure();
  auto in = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(spec)) {
    int64_t dim = (int64_t)d;
    if (dim == 0 && !allowZero) {
      if (i >= (size_t)in.getRank())
        return b.emitError() << "shape entry " << i << " is 0 but the input "
                             << "has rank " << in.getRank();
      dim = in.getDimSize(i);
    }
    if (dim == -1) {
      if (inferred >= 0)
        return b.emitError() << "shape has more than one -1";
      inferred = i;
    } else if (dim < 0) {
      return b.emitError() << "shape entry " << dim << " is invalid";
    } else {
      known *= dim;
    }
    shape.push_back(dim);
  }
  if (inferred >= 0)
    shape[inferred] = known ? in.getNumElements() / known : 0;
  return reshapeTo(b, input, shape);
}

/// Flatten (1, 9, 11, 13): [d0..d(axis-1)] x [d(axis)..] as a 2-D tensor.
static LogicalResult importFlatten(NodeBinder &b) {
  Value input;
  int64_t axis;
  if (b.expectOutputs(1) || b.operand(input, 0) || b.attr(axis, "axis", 1))
    return failure();
  auto shape = cast<RankedTensorType>(input.getType()).getShape();
  int64_t rank = shape.size();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return b.emitError() << "axis is out of range for rank " << rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= shape[i];
  return reshapeTo(b, input, {outer, inner});
}

/// The axes of Squeeze/Unsqueeze: an attribute before opset 13, an input
/// from 13 (optional for Squeeze).
static ParseResult squeezeAxes(NodeBinder &b, SmallVectorImpl<int64_t> &axes) {
  if (b.opset() < 13)
    return b.attr(axes, "axes");
  axes.clear();
  if (!b.hasInput(1))
    return success();
  SmallVector<double> values;
  if (b.constantOperand(values, 1))
    return failure();
  for (double v : values)
    axes.push_back((int64_t)v);
  return success();
}

/// Squeeze (1, 11, 13): drops the given size-1 axes (all of them if none).
static LogicalResult importSqueeze(NodeBinder &b) {
  Value input;
  SmallVector<int64_t> axes;
  if (b.expectOutputs(1) || b.operand(input, 0) || squeezeAxes(b, axes))
    return failure();
  auto shape = cast<RankedTensorType>(input.getType()).getShape();
  auto normal = b.normalizeAxes(axes, shape.size());
  if (failed(normal))
    return failure();
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(shape)) {
    bool listed = llvm::is_contained(*normal, (int64_t)i);
    if (listed && d != 1)
      return b.emitError() << "cannot squeeze axis " << i << " of size " << d;
    if (!(listed || (axes.empty() && d == 1)))
      out.push_back(d);
  }
  return reshapeTo(b, input, out);
}

/// Unsqueeze (1, 11, 13): inserts size-1 axes at the given output positions.
static LogicalResult importUnsqueeze(NodeBinder &b) {
  Value input;
  SmallVector<int64_t> axes;
  if (b.expectOutputs(1) || b.operand(input, 0) || squeezeAxes(b, axes))
    return failure();
  auto shape = cast<RankedTensorType>(input.getType()).getShape();
  auto normal = b.normalizeAxes(axes, shape.size() + axes.size());
  if (failed(normal))
    return failure();
  SmallVector<int64_t> out;
  auto next = shape.begin();
  for (int64_t i = 0; i < (int64_t)(shape.size() + normal->size()); ++i)
    out.push_back(llvm::is_contained(*normal, i) ? 1 : *next++);
  return reshapeTo(b, input, out);
}

/// Gather (1, 11, 13) along `axis` with int64 indices: pd.gather, folded
/// when data and indices are constants (shape arithmetic). Run-time float
/// data is differentiable (the embedding lookup).
static LogicalResult importGather(NodeBinder &b) {
  Value data, indices;
  int64_t axis;
  if (b.expectOutputs(1) || b.operand(data, 0) || b.operand(indices, 1) ||
      b.attr(axis, "axis", 0))
    return failure();
  auto dataType = cast<RankedTensorType>(data.getType());
  auto idxType = cast<RankedTensorType>(indices.getType());
  int64_t rank = dataType.getRank();
  if (!idxType.getElementType().isInteger(64) &&
      !idxType.getElementType().isInteger(32))
    return b.emitError() << "indices '" << b.inputName(1)
                         << "' must be int64 or int32";
  if (axis < -rank || axis >= rank)
    return b.emitError() << "axis " << axis << " is out of range for rank "
                         << rank;
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> shape(dataType.getShape().take_front(axis));
  shape.append(idxType.getShape().begin(), idxType.getShape().end());
  shape.append(dataType.getShape().begin() + axis + 1,
               dataType.getShape().end());
  Value result = b.builder().createOrFold<GatherOp>(
      b.loc(), RankedTensorType::get(shape, dataType.getElementType()), data,
      indices, b.builder().getI64IntegerAttr(axis));
  if (!result.getDefiningOp<ConstantOp>() &&
      !idxType.getElementType().isInteger(64))
    return b.emitError() << "run-time indices '" << b.inputName(1)
                         << "' must be int64";
  return b.setResult(0, result);
}

/// GatherND (11, 12, 13) of a run-time tensor by constant indices (the
/// exporters' mask lookups): each index tuple becomes one flat row index
/// into data viewed as [rows, slice], so the op is pd.reshape, pd.gather on
/// axis 0 (any element type; scatter-add gradient for floats) and
/// pd.reshape. Constant data was folded by foldConstantNode.
static LogicalResult importGatherND(NodeBinder &b) {
  Value data;
  int64_t batchDims;
  if (b.expectOutputs(1) || b.operand(data, 0) ||
      b.attr(batchDims, "batch_dims", 0))
    return failure();
  FailureOr<DenseElementsAttr> indices = b.constantInput(1);
  if (failed(indices))
    return failure();
  if (!*indices || !indices->getElementType().isInteger(64))
    return b.emitError() << "indices '" << b.inputName(1)
                         << "' must be a compile-time int64 constant";
  ArrayRef<int64_t> dataShape = shapeOfValue(data);
  ArrayRef<int64_t> idxShape = indices->getType().getShape();
  int64_t r = dataShape.size(), q = idxShape.size();
  if (q < 1 || batchDims < 0 || batchDims >= std::min(r, q) ||
      idxShape.back() < 1 || idxShape.back() > r - batchDims ||
      dataShape.take_front(batchDims) != idxShape.take_front(batchDims))
    return b.emitError() << "indices of shape " << shapeString(idxShape)
                         << " do not address data of shape "
                         << shapeString(dataShape) << " with batch_dims "
                         << batchDims;
  int64_t tuple = idxShape.back(), batch = 1, rowsPerBatch = 1, slice = 1;
  for (int64_t d = 0; d < batchDims; ++d)
    batch *= dataShape[d];
  for (int64_t d = batchDims; d < batchDims + tuple; ++d)
    rowsPerBatch *= dataShape[d];
  for (int64_t d = batchDims + tuple; d < r; ++d)
    slice *= dataShape[d];
  SmallVector<int64_t> flat, values(indices->getValues<int64_t>());
  int64_t perBatch = batch ? (int64_t)values.size() / tuple / batch : 0;
  for (int64_t t = 0; t < (int64_t)values.size() / tuple; ++t) {
    int64_t row = 0;
    for (int64_t j = 0; j < tuple; ++j) {
      int64_t dim = dataShape[batchDims + j], v = values[t * tuple + j];
      if (v < -dim || v >= dim)
        return b.emitError() << "index " << v << " is out of range for axis "
                             << batchDims + j << " of size " << dim;
      row = row * dim + (v < 0 ? v + dim : v);
    }
    flat.push_back((t / perBatch) * rowsPerBatch + row);
  }
  OpBuilder &builder = b.builder();
  Type elem = cast<RankedTensorType>(data.getType()).getElementType();
  Value rows = builder.createOrFold<ReshapeOp>(
      b.loc(), RankedTensorType::get({batch * rowsPerBatch, slice}, elem),
      data);
  auto idxType = RankedTensorType::get({(int64_t)flat.size()},
                                       builder.getI64Type());
  Value idx = builder.create<ConstantOp>(
      b.loc(), DenseElementsAttr::get(idxType, ArrayRef<int64_t>(flat)));
  Value gathered = builder.create<GatherOp>(
      b.loc(), RankedTensorType::get({(int64_t)flat.size(), slice}, elem),
      rows, idx, builder.getI64IntegerAttr(0));
  SmallVector<int64_t> shape(idxShape.drop_back());
  shape.append(dataShape.begin() + batchDims + tuple, dataShape.end());
  return reshapeTo(b, gathered, shape);
}

/// Expand (8, 13): broadcasts the input with the constant `shape` input
/// (numpy rules in both directions) as pd.broadcast_to, folded on
/// constants and dropped when the shape does not change.
static LogicalResult importExpand(NodeBinder &b) {
  Value input;
  SmallVector<double> spec;
  if (b.expectOutputs(1) || b.operand(input, 0) || b.constantOperand(spec, 1))
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> target;
  for (double d : spec)
    target.push_back((int64_t)d);
  auto shape = broadcastShapes(type.getShape(), target);
  if (failed(shape))
    return b.emitError() << "input '" << b.inputName(0) << "' "
                         << shapeString(type.getShape())
                         << " does not broadcast with shape "
                         << shapeString(target);
  auto outType = RankedTensorType::get(*shape, type.getElementType());
  if (outType == type)
    return b.setResult(0, input);
  return b.setResult(
      0, b.builder().createOrFold<BroadcastToOp>(b.loc(), outType, input));
}

/// A BOOL tensor constant (training_mode flags, masks) as an i1 attribute.
static FailureOr<DenseElementsAttr> boolConstant(NodeBinder &b,
                                                 const onnx::TensorProto &t) {
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  SmallVector<bool> values;
  if (t.has_raw_data())
    for (char c : t.raw_data())
      values.push_back(c != 0);
  else
    for (int32_t v : t.int32_data())
      values.push_back(v != 0);
  auto type = RankedTensorType::get(shape, b.builder().getI1Type());
  if ((int64_t)values.size() != type.getNumElements())
    return b.emitError() << "bool constant has " << values.size()
                         << " values for shape " << shapeString(shape);
  return DenseElementsAttr::get(type, ArrayRef<bool>(values));
}

/// Converts a Constant node's value attribute (any of the opset 12 forms
/// that carry numbers) to a dense attribute.
static FailureOr<DenseElementsAttr> constantValue(NodeBinder &b) {
  OpBuilder &builder = b.builder();
  auto emitError = [&]() { return b.emitError(); };
  if (const onnx::AttributeProto *attr = b.findAttr("value")) {
    const onnx::TensorProto &tensor = attr->t();
    if (tensor.data_type() == onnx::TensorProto::BOOL)
      return boolConstant(b, tensor);
    Type elementType =
        convertConstantElementType(tensor.data_type(), b.context());
    if (!elementType)
      return b.emitError() << "constant of element type "
                           << dataTypeName(tensor.data_type())
                           << " is unsupported";
    SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
      return b.emitError() << "constant has a negative dimension "
                           << shapeString(shape);
    return readTensorData(tensor, RankedTensorType::get(shape, elementType),
                          emitError);
  }
  if (const onnx::AttributeProto *attr = b.findAttr("value_float"))
    return DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getF32Type()), attr->f());
  if (const onnx::AttributeProto *attr = b.findAttr("value_int"))
    return DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getI64Type()), attr->i());
  if (const onnx::AttributeProto *attr = b.findAttr("value_floats")) {
    SmallVector<float> data(attr->floats().begin(), attr->floats().end());
    auto type =
        RankedTensorType::get({(int64_t)data.size()}, builder.getF32Type());
    return DenseElementsAttr::get(type, ArrayRef<float>(data));
  }
  if (const onnx::AttributeProto *attr = b.findAttr("value_ints")) {
    SmallVector<int64_t> data(attr->ints().begin(), attr->ints().end());
    auto type =
        RankedTensorType::get({(int64_t)data.size()}, builder.getI64Type());
    return DenseElementsAttr::get(type, ArrayRef<int64_t>(data));
  }
  return b.emitError() << "only numeric constants (value, value_float(s), "
                          "value_int(s)) are supported";
}

/// Constant (1, 9, 11, 12, 13): becomes pd.constant.
static LogicalResult importConstant(NodeBinder &b) {
  if (b.expectOutputs(1))
    return failure();
  auto value = constantValue(b);
  if (failed(value))
    return failure();
  Value result = b.builder().create<ConstantOp>(b.loc(), *value);
  return b.setResult(0, result);
}

/// Reads an optional constant integer input exactly (INT64_MAX ends stay
/// INT64_MAX), or `dflt` when absent.
static ParseResult optionalInts(NodeBinder &b, unsigned i,
                                SmallVectorImpl<int64_t> &out,
                                ArrayRef<int64_t> dflt) {
  out.assign(dflt.begin(), dflt.end());
  if (i >= b.numInputs() || !b.hasInput(i))
    return success();
  FailureOr<DenseElementsAttr> values = b.constantInput(i);
  if (failed(values))
    return failure();
  if (!*values || !values->getElementType().isSignlessInteger()) {
    b.emitError() << "input '" << b.inputName(i)
                  << "' must be a compile-time integer constant";
    return failure();
  }
  out.clear();
  for (APInt v : values->getValues<APInt>())
    out.push_back(v.getSExtValue());
  return success();
}

/// Builds a pd.slice of `input` (folded when constant) and binds output `i`.
static LogicalResult bindSlice(NodeBinder &b, unsigned i, Value input,
                               ArrayRef<int64_t> starts,
                               ArrayRef<int64_t> steps,
                               ArrayRef<int64_t> shape) {
  OpBuilder &builder = b.builder();
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(input.getType()).getElementType());
  Value result = builder.createOrFold<SliceOp>(
      b.loc(), type, input, builder.getDenseI64ArrayAttr(starts),
      builder.getDenseI64ArrayAttr(steps));
  return b.setResult(i, result);
}

/// The ONNX window of one sliced axis of size `dim`: starts and ends are
/// made non-negative and clamped ([0, dim] for positive steps, [0, dim-1]
/// and [-1, dim-1] for negative ones); returns (first index, size).
static std::pair<int64_t, int64_t> sliceWindow(int64_t start, int64_t end,
                                               int64_t step, int64_t dim) {
  auto normal = [&](int64_t v) {
    return v < 0 ? (v < -dim ? -dim - 1 : v + dim) : v;
  };
  start = normal(start);
  end = normal(end);
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start + step - 1) / step : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? (start - end - step - 1) / -step : 0};
}

/// Slice (1: attributes; 10, 11, 13: starts/ends/axes/steps inputs, which
/// must be constants). Indices are clamped as the specification says;
/// steps may be negative but not 0.
static LogicalResult importSlice(NodeBinder &b) {
  Value input;
  SmallVector<int64_t> starts, ends, axes, steps;
  if (b.expectOutputs(1) || b.operand(input, 0))
    return failure();
  ArrayRef<int64_t> shape = shapeOfValue(input);
  int64_t rank = shape.size();
  if (b.opset() < 10) {
    if (b.attr(starts, "starts") || b.attr(ends, "ends") ||
        b.attr(axes, "axes"))
      return failure();
  } else if (optionalInts(b, 1, starts, {}) || optionalInts(b, 2, ends, {}) ||
             optionalInts(b, 3, axes, {}) || optionalInts(b, 4, steps, {})) {
    return failure();
  }
  if (axes.empty())
    for (int64_t d = 0; d < (int64_t)starts.size(); ++d)
      axes.push_back(d);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return b.emitError() << "starts, ends, axes and steps differ in length";
  SmallVector<int64_t> begin(rank, 0), step(rank, 1), size(shape);
  SmallVector<bool> seen(rank, false);
  for (size_t j = 0; j < axes.size(); ++j) {
    int64_t axis = axes[j] < 0 ? axes[j] + rank : axes[j];
    if (axis < 0 || axis >= rank || seen[axis])
      return b.emitError() << "axis " << axes[j]
                           << " is out of range or repeated (rank " << rank
                           << ")";
    if (steps[j] == 0)
      return b.emitError() << "step of axis " << axes[j] << " is 0";
    seen[axis] = true;
    auto [first, n] = sliceWindow(starts[j], ends[j], steps[j], shape[axis]);
    begin[axis] = n ? first : 0;
    step[axis] = steps[j];
    size[axis] = n;
  }
  return bindSlice(b, 0, input, begin, step, size);
}

/// The sizes of an unspecified split of `dim` into `n` outputs: equal
/// parts (which must divide `dim` before opset 18), or, from opset 18,
/// ceil(dim / n) each with a smaller last part.
static FailureOr<SmallVector<int64_t>> equalSplit(NodeBinder &b, int64_t dim,
                                                  int64_t n) {
  if (n < 1)
    return b.emitError() << "needs at least one output";
  if (b.opset() < 18 && dim % n != 0)
    return b.emitError() << "cannot split a dimension of " << dim << " into "
                         << n << " equal parts";
  SmallVector<int64_t> split;
  int64_t chunk = (dim + n - 1) / n;
  for (int64_t i = 0, left = dim; i < n; ++i, left -= chunk)
    split.push_back(std::clamp<int64_t>(left, 0, chunk));
  return split;
}

/// Split (2, 11: `split` attribute; 13: `split` input; 18: or
/// `num_outputs`): one pd.slice per output along `axis`.
static LogicalResult importSplit(NodeBinder &b) {
  Value input;
  int64_t axis, numOutputs;
  SmallVector<int64_t> split;
  if (b.operand(input, 0) || b.attr(axis, "axis", 0) ||
      b.attr(numOutputs, "num_outputs", 0))
    return failure();
  if (b.opset() < 13 ? b.attr(split, "split") : optionalInts(b, 1, split, {}))
    return failure();
  ArrayRef<int64_t> shape = shapeOfValue(input);
  int64_t rank = shape.size(), n = b.numOutputs();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return b.emitError() << "axis is out of range for rank " << rank;
  if (b.hasAttr("num_outputs") &&
      (b.opset() < 18 || !split.empty() || numOutputs != n))
    return b.emitError() << "num_outputs needs opset 18, no split sizes "
                            "and as many outputs ("
                         << n << ")";
  if (split.empty()) {
    auto equal = equalSplit(b, shape[axis], n);
    if (failed(equal))
      return failure();
    split = *equal;
  }
  if ((int64_t)split.size() != n)
    return b.emitError() << "split has " << split.size() << " sizes for " << n
                         << " outputs";
  int64_t total = 0;
  for (int64_t size : split)
    total += size;
  if (total != shape[axis] ||
      llvm::any_of(split, [](int64_t v) { return v < 0; }))
    return b.emitError() << "split sizes add up to " << total << ", not "
                         << shape[axis];
  SmallVector<int64_t> begin(rank, 0), step(rank, 1), size(shape);
  for (int64_t i = 0; i < n; ++i) {
    size[axis] = split[i];
    if (failed(bindSlice(b, i, input, begin, step, size)))
      return failure();
    begin[axis] += split[i];
  }
  return success();
}

/// Concat (4, 11, 13) along `axis`; folds on constants (shape arithmetic).
static LogicalResult importConcat(NodeBinder &b) {
  SmallVector<Value> inputs;
  int64_t axis;
  if (b.expectOutputs(1) || b.attr(axis, "axis", 0))
    return failure();
  for (unsigned i = 0; i < b.numInputs(); ++i) {
    Value v;
    if (b.operand(v, i))
      return failure();
    inputs.push_back(v);
  }
  if (inputs.empty())
    return b.emitError() << "needs at least one input";
  SmallVector<int64_t> shape(shapeOfValue(inputs[0]));
  int64_t rank = shape.size();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return b.emitError() << "axis is out of range for rank " << rank;
  shape[axis] = 0;
  for (Value v : inputs) {
    auto s = shapeOfValue(v);
    if ((int64_t)s.size() != rank)
      return b.emitError() << "inputs have different ranks";
    shape[axis] += s[axis];
  }
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(inputs[0].getType()).getElementType());
  Value result = b.builder().createOrFold<ConcatOp>(
      b.loc(), type, inputs, b.builder().getI64IntegerAttr(axis));
  return b.setResult(0, result);
}

/// Equal, Less, LessOrEqual, Greater, GreaterOrEqual (numbers of one type)
/// and And, Or, Xor (bools) of run-time tensors: pd.compare with numpy
/// broadcasting. Constant operands were folded by foldConstantNode.
template <const char *Predicate>
static LogicalResult importCompare(NodeBinder &b) {
  Value lhs, rhs;
  if (b.expectOutputs(1) || b.operand(lhs, 0) || b.operand(rhs, 1))
    return failure();
  Type elem = cast<RankedTensorType>(lhs.getType()).getElementType();
  if (elem != cast<RankedTensorType>(rhs.getType()).getElementType())
    return b.emitError() << "inputs '" << b.inputName(0) << "' and '"
                         << b.inputName(1) << "' have different element types";
  StringRef pred = Predicate;
  bool logic = pred == "and" || pred == "or" || pred == "xor";
  if (logic != elem.isInteger(1))
    return b.emitError() << "input '" << b.inputName(0) << "' must be "
                         << (logic ? "a bool tensor" : "a number tensor");
  auto shape = broadcastShapes(shapeOfValue(lhs), shapeOfValue(rhs));
  if (failed(shape))
    return b.emitError() << "inputs do not broadcast";
  auto type = RankedTensorType::get(*shape, b.builder().getI1Type());
  Value result = b.builder().create<CompareOp>(
      b.loc(), type, lhs, rhs, b.builder().getStringAttr(pred));
  return b.setResult(0, result);
}

static const char kEq[] = "eq", kLt[] = "lt", kLe[] = "le", kGt[] = "gt",
                  kGe[] = "ge", kAnd[] = "and", kOr[] = "or", kXor[] = "xor";

/// Not (1) of a run-time bool tensor.
static LogicalResult importNot(NodeBinder &b) {
  Value input;
  if (b.expectOutputs(1) || b.operand(input, 0))
    return failure();
  if (!cast<RankedTensorType>(input.getType()).getElementType().isInteger(1))
    return b.emitError() << "input '" << b.inputName(0)
                         << "' must be a bool tensor";
  return b.setResult(0, b.builder().create<NotOp>(b.loc(), input));
}

/// IsNaN (9, 13, 20) of a run-time float tensor: x != x, as pd.not of
/// pd.compare eq.
static LogicalResult importIsNaN(NodeBinder &b) {
  Value input;
  if (b.expectOutputs(1) || b.f32Operand(input, 0))
    return failure();
  OpBuilder &builder = b.builder();
  auto type = RankedTensorType::get(shapeOfValue(input), builder.getI1Type());
  Value equal = builder.create<CompareOp>(b.loc(), type, input, input,
                                          builder.getStringAttr(kEq));
  return b.setResult(0, builder.create<NotOp>(b.loc(), equal));
}

/// IsInf (10, 20) of a run-time float tensor: x == +inf (detect_positive)
/// or x == -inf (detect_negative), as pd.compare against scalar constants.
static LogicalResult importIsInf(NodeBinder &b) {
  Value input;
  int64_t positive, negative;
  if (b.expectOutputs(1) || b.f32Operand(input, 0) ||
      b.attr(positive, "detect_positive", 1) ||
      b.attr(negative, "detect_negative", 1))
    return failure();
  OpBuilder &builder = b.builder();
  auto type = RankedTensorType::get(shapeOfValue(input), builder.getI1Type());
  auto scalar = RankedTensorType::get({}, builder.getF32Type());
  auto equalTo = [&](float v) -> Value {
    Value c = builder.create<ConstantOp>(b.loc(),
                                         DenseElementsAttr::get(scalar, v));
    return builder.create<CompareOp>(b.loc(), type, input, c,
                                     builder.getStringAttr(kEq));
  };
  Value result;
  if (positive)
    result = equalTo(INFINITY);
  if (negative) {
    Value neg = equalTo(-INFINITY);
    result = result ? builder.create<CompareOp>(b.loc(), type, result, neg,
                                                builder.getStringAttr(kOr))
                          .getResult()
                    : neg;
  }
  if (!result) // Neither sign is detected: all false.
    result = builder.create<ConstantOp>(
        b.loc(), DenseElementsAttr::get(type, false));
  return b.setResult(0, result);
}

/// Binds output 0 to `input` cast to `elem`: identity when the type does
/// not change, folded on constants, a copy kernel on run-time tensors.
static LogicalResult castTo(NodeBinder &b, Value input, Type elem) {
  auto type = RankedTensorType::get(shapeOfValue(input), elem);
  if (type == input.getType())
    return b.setResult(0, input);
  Value result = b.builder().createOrFold<CastOp>(b.loc(), type, input);
  return b.setResult(0, result);
}

/// GatherElements (11, 13): pd.gather_elements along `axis` with int64
/// indices of the data's rank.
static LogicalResult importGatherElements(NodeBinder &b) {
  Value data, indices;
  int64_t axis;
  if (b.expectOutputs(1) || b.operand(data, 0) || b.operand(indices, 1) ||
      b.attr(axis, "axis", 0))
    return failure();
  auto dataType = cast<RankedTensorType>(data.getType());
  auto idxType = cast<RankedTensorType>(indices.getType());
  if (!idxType.getElementType().isInteger(64))
    return b.emitError() << "indices '" << b.inputName(1)
                         << "' must be int64";
  auto axes = b.normalizeAxes({axis}, dataType.getRank());
  if (failed(axes))
    return failure();
  if (idxType.getRank() != dataType.getRank())
    return b.emitError() << "indices '" << b.inputName(1) << "' of shape "
                         << shapeString(idxType.getShape())
                         << " must have the rank of data "
                         << shapeString(dataType.getShape());
  for (int64_t d = 0; d < dataType.getRank(); ++d)
    if (d != (*axes)[0] && idxType.getShape()[d] > dataType.getShape()[d])
      return b.emitError() << "indices '" << b.inputName(1) << "' of shape "
                           << shapeString(idxType.getShape())
                           << " exceed data " << shapeString(dataType.getShape())
                           << " on axis " << d;
  auto type = RankedTensorType::get(idxType.getShape(), dataType.getElementType());
  Value result = b.builder().create<GatherElementsOp>(
      b.loc(), type, data, indices, b.builder().getI64IntegerAttr((*axes)[0]));
  return b.setResult(0, result);
}

/// Trilu (14) of a run-time f32 tensor: pd.where with the constant
/// triangle mask of its last two axes and zeros (constant inputs fold in
/// foldConstantNode).
static LogicalResult importTrilu(NodeBinder &b) {
  Value input;
  int64_t upper, k = 0;
  if (b.expectOutputs(1) || b.f32Operand(input, 0) || b.attr(upper, "upper", 1))
    return failure();
  if (b.hasInput(1)) {
    SmallVector<double> values;
    if (b.constantOperand(values, 1))
      return failure();
    if (values.size() != 1)
      return b.emitError() << "k '" << b.inputName(1) << "' must be a scalar";
    k = (int64_t)values[0];
  }
  auto shape = shapeOfValue(input);
  if (shape.size() < 2)
    return b.emitError() << "input '" << b.inputName(0)
                         << "' must have rank >= 2";
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  SmallVector<bool> keep;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep.push_back(upper ? j - i >= k : j - i <= k);
  OpBuilder &builder = b.builder();
  auto maskType = RankedTensorType::get({rows, cols}, builder.getI1Type());
  auto zeroType = RankedTensorType::get({}, builder.getF32Type());
  Value mask = builder.create<ConstantOp>(
      b.loc(), DenseElementsAttr::get(maskType, ArrayRef<bool>(keep)));
  Value zero = builder.create<ConstantOp>(
      b.loc(), DenseElementsAttr::get(zeroType, 0.0f));
  Value result =
      builder.create<WhereOp>(b.loc(), input.getType(), mask, input, zero);
  return b.setResult(0, result);
}

/// Cast (6, 9, 13, 19: `saturate` is for float8 only) to FLOAT, INT64, INT32
/// or BOOL.
static LogicalResult importCast(NodeBinder &b) {
  Value input;
  int64_t to;
  if (b.expectOutputs(1) || b.operand(input, 0) || b.attr(to, "to", 0))
    return failure();
  Type elem = convertConstantElementType((int32_t)to, b.context());
  if (!elem || elem.isF64())
    return b.emitError() << "cast to " << dataTypeName((int32_t)to)
                         << " is not supported"
                         << (elem ? " on run-time tensors (only in constant "
                                    "subgraphs)"
                                  : "");
  return castTo(b, input, elem);
}

/// CastLike (15, 19): Cast to the element type of input 1, whose values are
/// not read (a parameter read only for its type leaves an unused
/// pd.param_ref, erased at the end of the import).
static LogicalResult importCastLike(NodeBinder &b) {
  Value input;
  ONNXValue like;
  if (b.expectOutputs(1) || b.operand(input, 0) || b.rawOperand(like, 1))
    return failure();
  Type elem = cast<RankedTensorType>(like.value.getType()).getElementType();
  return castTo(b, input, elem);
}

/// Where (9, 16) with a bool condition and f32 branches, broadcasting.
static LogicalResult importWhere(NodeBinder &b) {
  Value cond, lhs, rhs;
  if (b.expectOutputs(1) || b.operand(cond, 0) || b.f32Operand(lhs, 1) ||
      b.f32Operand(rhs, 2))
    return failure();
  if (!cast<RankedTensorType>(cond.getType()).getElementType().isInteger(1))
    return b.emitError() << "condition '" << b.inputName(0)
                         << "' must be a bool tensor";
  auto shape = broadcastShapes(shapeOfValue(lhs), shapeOfValue(rhs));
  if (succeeded(shape))
    shape = broadcastShapes(*shape, shapeOfValue(cond));
  if (failed(shape))
    return b.emitError() << "inputs do not broadcast";
  auto type = RankedTensorType::get(*shape, b.builder().getF32Type());
  Value result = b.builder().create<WhereOp>(b.loc(), type, cond, lhs, rhs);
  return b.setResult(0, result);
}

/// Dropout (12, 13): the identity when its ratio is 0 or it is not in
/// training mode; in training mode with a ratio in (0, 1), pd.dropout with
/// the next rng_id. The mask output must be unused.
static LogicalResult importDropout(NodeBinder &b) {
  Value input;
  SmallVector<double> ratio{0.5}, training{0.0};
  if (b.f32Operand(input, 0))
    return failure();
  if (b.opset() < 12)
    return b.emitError() << "Dropout before opset 12 is not supported";
  if ((b.numInputs() > 1 && b.hasInput(1) && b.constantOperand(ratio, 1)) ||
      (b.numInputs() > 2 && b.hasInput(2) && b.constantOperand(training, 2)))
    return failure();
  if (ratio.size() != 1 || training.size() != 1)
    return b.emitError() << "ratio and training_mode must be scalars";
  if (b.numOutputs() > 1 && b.isOutputUsed(1))
    return b.emitError() << "the mask output is not supported";
  if (training.front() == 0.0 || ratio.front() == 0.0)
    return b.setResult(0, input);
  if (!(ratio.front() > 0.0 && ratio.front() < 1.0))
    return b.emitError() << "ratio " << ratio.front()
                         << " is outside [0, 1) in training mode";
  OpBuilder &builder = b.builder();
  Value result = builder.create<DropoutOp>(
      b.loc(), input.getType(), input,
      builder.getF32FloatAttr((float)ratio.front()),
      builder.getI64IntegerAttr(b.takeRngId()));
  return b.setResult(0, result);
}

void mlir::pd::detail::registerTensorHandlers(HandlerTable &table) {
  table["Identity"] = {1, importIdentity};
  table["Transpose"] = {1, importTranspose};
  table["Constant"] = {1, importConstant};
  table["Reshape"] = {5, importReshape};
  table["Flatten"] = {1, importFlatten};
  table["Squeeze"] = {1, importSqueeze};
  table["Unsqueeze"] = {1, importUnsqueeze};
  table["Gather"] = {1, importGather};
  table["Expand"] = {8, importExpand};
  table["Slice"] = {1, importSlice};
  table["Split"] = {2, importSplit};
  table["Concat"] = {4, importConcat};
  table["Equal"] = {7, importCompare<kEq>};
  table["Less"] = {7, importCompare<kLt>};
  table["LessOrEqual"] = {12, importCompare<kLe>};
  table["Greater"] = {7, importCompare<kGt>};
  table["GreaterOrEqual"] = {12, importCompare<kGe>};
  table["And"] = {7, importCompare<kAnd>};
  table["Or"] = {7, importCompare<kOr>};
  table["Xor"] = {7, importCompare<kXor>};
  table["Not"] = {1, importNot};
  table["IsNaN"] = {9, importIsNaN};
  table["GatherND"] = {11, importGatherND};
  table["IsInf"] = {10, importIsInf};
  table["GatherElements"] = {11, importGatherElements};
  table["Trilu"] = {14, importTrilu};
  table["Cast"] = {6, importCast};
  table["CastLike"] = {15, importCastLike};
  table["Where"] = {9, importWhere};
  table["Dropout"] = {12, importDropout};
  registerShapeHandlers(table);
}
