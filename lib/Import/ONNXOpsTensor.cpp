//===- ONNXOpsTensor.cpp - Moving and reshaping tensors ---------*- C++ -*-===//
//
// Handlers that move or create tensors without arithmetic: Identity aliases
// its input, Constant becomes pd.constant, a 2-D Transpose is recorded as a
// pending transpose that MatMul/Gemm fold into their flags (torch exports
// bias-free nn.Linear as Transpose + MatMul) and other transposes become
// pd.transpose; Reshape, Flatten, Squeeze and Unsqueeze become pd.reshape;
// Gather on axis 0 becomes pd.gather (embedding lookup).
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

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
      0, b.builder().create<ReshapeOp>(b.loc(), outType, input).getResult());
}

/// Reshape (5, 13, 14): the shape input is a compile-time constant; 0 copies
/// the input's dimension (unless allowzero, 14), -1 is inferred.
static LogicalResult importReshape(NodeBinder &b) {
  Value input;
  SmallVector<double> spec;
  int64_t allowZero;
  if (b.expectOutputs(1) || b.operand(input, 0) ||
      b.constantOperand(spec, 1) || b.attr(allowZero, "allowzero", 0))
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

/// Gather (1, 11, 13) on axis 0 of f32 data with integer indices: the
/// embedding lookup, pd.gather.
static LogicalResult importGather(NodeBinder &b) {
  Value data, indices;
  int64_t axis;
  if (b.expectOutputs(1) || b.f32Operand(data, 0) || b.operand(indices, 1) ||
      b.attr(axis, "axis", 0))
    return failure();
  auto dataType = cast<RankedTensorType>(data.getType());
  auto idxType = cast<RankedTensorType>(indices.getType());
  if (!idxType.getElementType().isInteger(64))
    return b.emitError() << "indices '" << b.inputName(1)
                         << "' must be int64";
  if (axis != 0 && axis != -dataType.getRank())
    return b.emitError() << "only axis 0 of float data is supported (axis "
                         << axis << ")";
  SmallVector<int64_t> shape(idxType.getShape());
  shape.append(dataType.getShape().begin() + 1, dataType.getShape().end());
  Value result = b.builder().create<GatherOp>(
      b.loc(), RankedTensorType::get(shape, dataType.getElementType()), data,
      indices);
  return b.setResult(0, result);
}

/// Converts a Constant node's value attribute (any of the opset 12 forms
/// that carry numbers) to a dense attribute.
static FailureOr<DenseElementsAttr> constantValue(NodeBinder &b) {
  OpBuilder &builder = b.builder();
  auto emitError = [&]() { return b.emitError(); };
  if (const onnx::AttributeProto *attr = b.findAttr("value")) {
    const onnx::TensorProto &tensor = attr->t();
    Type elementType = convertElementType(tensor.data_type(), b.context());
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

void mlir::pd::detail::registerTensorHandlers(HandlerTable &table) {
  table["Identity"] = {1, importIdentity};
  table["Transpose"] = {1, importTranspose};
  table["Constant"] = {1, importConstant};
  table["Reshape"] = {5, importReshape};
  table["Flatten"] = {1, importFlatten};
  table["Squeeze"] = {1, importSqueeze};
  table["Unsqueeze"] = {1, importUnsqueeze};
  table["Gather"] = {1, importGather};
}
