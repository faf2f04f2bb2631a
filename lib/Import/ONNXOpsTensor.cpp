//===- ONNXOpsTensor.cpp - Identity, Constant and Transpose -----*- C++ -*-===//
//
// Handlers that move or create tensors without arithmetic: Identity aliases
// its input, Constant becomes pd.constant, and a 2-D Transpose is recorded
// as a pending transpose that MatMul/Gemm fold into their flags (torch
// exports bias-free nn.Linear as Transpose + MatMul).
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

/// Transpose (1, 13): only the 2-D swap (the default perm of a matrix) is
/// supported; it stays pending until a MatMul or Gemm consumes it.
static LogicalResult importTranspose(NodeBinder &b) {
  ONNXValue input;
  SmallVector<int64_t> perm;
  if (b.expectOutputs(1) || b.rawOperand(input, 0) || b.attr(perm, "perm"))
    return failure();
  SmallVector<int64_t> shape = input.shape();
  bool identity = perm.size() == 2 && perm[0] == 0 && perm[1] == 1;
  bool swap =
      shape.size() == 2 && (perm.empty() || (perm.size() == 2 && perm[0] == 1));
  if (shape.size() < 2 && perm.size() <= 1)
    identity = true;
  if (!identity && !swap)
    return b.emitError() << "only 2-D transposes are supported (input '"
                         << b.inputName(0) << "' has shape "
                         << shapeString(shape) << ")";
  if (swap)
    input.transposed = !input.transposed;
  return b.setResult(0, input);
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
}
