//===- ONNXOpsShape.cpp - Shape computations evaluated at import ----------===//
//
// Dynamic-axes exports compute shapes at run time: Shape, Gather, Concat,
// Range, arithmetic on int64 scalars, ConstantOfShape, Expand, Where. Once
// the batch and the other symbolic dimensions are specialised, every such
// value is a compile-time constant, so the importer evaluates it: Shape and
// Size read static shapes, Range and ConstantOfShape build constants, and
// foldConstantNode evaluates Add/Sub/Mul/Div/Where/Not nodes whose inputs
// are all constants. The data-movement ops (Gather, Concat, Slice, Reshape,
// Squeeze, Unsqueeze, Expand, Cast, Equal) fold through their pd ops'
// folders (ONNXOpsTensor.cpp). Constants are small, so elements are
// handled one attribute at a time.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

//===----------------------------------------------------------------------===//
// Elementwise evaluation of constant nodes
//===----------------------------------------------------------------------===//

/// Offset into a right-aligned broadcast operand of shape `in` of output
/// element `linear` of shape `out`.
static int64_t broadcastOffset(int64_t linear, ArrayRef<int64_t> out,
                               ArrayRef<int64_t> in) {
  int64_t offset = 0, stride = 1, lead = out.size() - in.size();
  for (int64_t d = (int64_t)out.size() - 1; d >= 0; --d) {
    int64_t coord = linear % out[d];
    linear /= out[d];
    if (d >= lead && in[d - lead] != 1)
      offset += coord * stride;
    if (d >= lead)
      stride *= in[d - lead];
  }
  return offset;
}

/// One element of an arithmetic node on integers; fails on division by 0.
static FailureOr<int64_t> applyInt(StringRef op, int64_t a, int64_t b) {
  if (op == "Add")
    return a + b;
  if (op == "Sub")
    return a - b;
  if (op == "Mul")
    return a * b;
  if (b == 0)
    return failure();
  return a / b; // ONNX integer Div truncates, as onnxruntime does.
}

/// One element of an arithmetic node on f32, computed in float.
static float applyFloat(StringRef op, float a, float b) {
  if (op == "Add")
    return a + b;
  if (op == "Sub")
    return a - b;
  if (op == "Mul")
    return a * b;
  return a / b;
}

/// Element `i` of `values` (an f32, integer or bool attribute).
static Attribute evalElement(NodeBinder &b, StringRef op,
                             ArrayRef<SmallVector<Attribute>> values,
                             ArrayRef<int64_t> offsets, Type elem,
                             bool &divByZero) {
  auto at = [&](unsigned k) { return values[k][offsets[k]]; };
  if (op == "Not")
    return BoolAttr::get(b.context(), !cast<BoolAttr>(at(0)).getValue());
  if (op == "Where")
    return cast<BoolAttr>(at(0)).getValue() ? at(1) : at(2);
  if (op == "Neg")
    return elem.isF32()
               ? Attribute(FloatAttr::get(
                     elem, -(float)cast<FloatAttr>(at(0)).getValueAsDouble()))
               : Attribute(IntegerAttr::get(elem, -cast<IntegerAttr>(at(0)).getInt()));
  if (elem.isF32())
    return FloatAttr::get(
        elem, applyFloat(op, cast<FloatAttr>(at(0)).getValueAsDouble(),
                         cast<FloatAttr>(at(1)).getValueAsDouble()));
  auto r = applyInt(op, cast<IntegerAttr>(at(0)).getInt(),
                    cast<IntegerAttr>(at(1)).getInt());
  divByZero |= failed(r);
  return IntegerAttr::get(elem, succeeded(r) ? *r : 0);
}

/// The result element type of evaluating `op`, or null when the operand
/// types are not ones the evaluator (and ONNX) accepts.
static Type resultElementType(StringRef op, ArrayRef<DenseElementsAttr> in) {
  Type first = in[0].getElementType();
  if (op == "Not")
    return first.isInteger(1) && in.size() == 1 ? first : Type();
  if (op == "Neg")
    return in.size() == 1 && (first.isF32() || first.isInteger(64) ||
                              first.isInteger(32))
               ? first
               : Type();
  if (op == "Where")
    return in.size() == 3 && first.isInteger(1) &&
                   in[1].getElementType() == in[2].getElementType()
               ? in[1].getElementType()
               : Type();
  if (in.size() != 2 || first != in[1].getElementType() || first.isInteger(1))
    return Type();
  return first.isF32() || first.isInteger(64) || first.isInteger(32) ? first
                                                                     : Type();
}

std::optional<LogicalResult> mlir::pd::detail::foldConstantNode(NodeBinder &b) {
  static const llvm::StringSet<> kEvaluated = {"Add", "Sub", "Mul", "Div",
                                               "Where", "Not", "Neg"};
  StringRef op = b.opType();
  if (!kEvaluated.contains(op) || b.numOutputs() != 1 || b.numInputs() == 0)
    return std::nullopt;
  SmallVector<DenseElementsAttr> inputs;
  for (unsigned i = 0; i < b.numInputs(); ++i) {
    FailureOr<DenseElementsAttr> c = b.constantInput(i);
    if (failed(c))
      return failure();
    if (!*c)
      return std::nullopt;
    inputs.push_back(*c);
  }
  Type elem = resultElementType(op, inputs);
  SmallVector<int64_t> shape;
  for (DenseElementsAttr in : inputs) {
    auto next = broadcastShapes(shape, in.getType().getShape());
    if (failed(next))
      return std::nullopt; // The handler reports the mismatch.
    shape = *next;
  }
  if (!elem)
    return std::nullopt;
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr in : inputs)
    values.push_back(llvm::to_vector(in.getValues<Attribute>()));
  auto type = RankedTensorType::get(shape, elem);
  SmallVector<Attribute> result;
  bool divByZero = false;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    SmallVector<int64_t> offsets;
    for (DenseElementsAttr in : inputs)
      offsets.push_back(broadcastOffset(i, shape, in.getType().getShape()));
    result.push_back(evalElement(b, op, values, offsets, elem, divByZero));
  }
  if (divByZero)
    return b.emitError() << "integer division by zero in a constant "
                            "computation";
  Value cst = b.builder().create<ConstantOp>(
      b.loc(), DenseElementsAttr::get(type, result));
  return b.setResult(0, cst);
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

/// Reads input `i` as a compile-time constant; errors name the input.
static FailureOr<DenseElementsAttr> requireConstant(NodeBinder &b, unsigned i) {
  FailureOr<DenseElementsAttr> c = b.constantInput(i);
  if (failed(c))
    return failure();
  if (!*c) {
    if (!b.hasInput(i))
      return b.emitError() << "missing required input " << i;
    return b.emitError() << "input '" << b.inputName(i)
                         << "' must be a compile-time constant (shapes "
                            "fold once every dimension is static)";
  }
  return c;
}

/// The static shape of input 0. A parameter read only for its shape leaves
/// an unused pd.param_ref, which the importer erases at the end (not here:
/// the same value may be bound to a name, e.g. through Cast or Identity,
/// that a later node reads).
static FailureOr<SmallVector<int64_t>> inputShape(NodeBinder &b) {
  ONNXValue input;
  if (b.rawOperand(input, 0))
    return failure();
  return input.shape();
}

/// Binds output 0 to a pd.constant of `value`.
static LogicalResult bindConstant(NodeBinder &b, DenseElementsAttr value) {
  return b.setResult(0, b.builder().create<ConstantOp>(b.loc(), value));
}

/// Shape (1, 13, 15: `start`/`end`, clamped): the input's static shape.
static LogicalResult importShape(NodeBinder &b) {
  int64_t start, end;
  if (b.expectOutputs(1) || b.attr(start, "start", 0) ||
      b.attr(end, "end", INT64_MAX))
    return failure();
  auto shape = inputShape(b);
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  auto clamp = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  if (b.opset() < 15 && (b.hasAttr("start") || b.hasAttr("end")))
    return b.emitError() << "start and end exist from opset 15";
  start = clamp(start);
  end = std::max(clamp(end), start);
  SmallVector<int64_t> dims(shape->begin() + start, shape->begin() + end);
  auto type =
      RankedTensorType::get({(int64_t)dims.size()}, b.builder().getI64Type());
  return bindConstant(b, DenseElementsAttr::get(type, ArrayRef<int64_t>(dims)));
}

/// Size (1, 13): the input's element count as an int64 scalar.
static LogicalResult importSize(NodeBinder &b) {
  if (b.expectOutputs(1))
    return failure();
  auto shape = inputShape(b);
  if (failed(shape))
    return failure();
  int64_t n = 1;
  for (int64_t d : *shape)
    n *= d;
  auto type = RankedTensorType::get({}, b.builder().getI64Type());
  return bindConstant(b, DenseElementsAttr::get(type, n));
}

/// Range (11): start, limit and delta are constant scalars of one type;
/// the result has max(ceil((limit - start) / delta), 0) elements.
static LogicalResult importRange(NodeBinder &b) {
  if (b.expectOutputs(1))
    return failure();
  SmallVector<DenseElementsAttr> in;
  for (unsigned i = 0; i < 3; ++i) {
    auto c = requireConstant(b, i);
    if (failed(c))
      return failure();
    if (c->getNumElements() != 1 || c->getType().getRank() != 0)
      return b.emitError() << "input '" << b.inputName(i)
                           << "' must be a scalar";
    in.push_back(*c);
  }
  Type elem = in[0].getElementType();
  if (in[1].getElementType() != elem || in[2].getElementType() != elem ||
      elem.isInteger(1))
    return b.emitError() << "start, limit and delta need one numeric type";
  auto scalar = [](DenseElementsAttr a) {
    Attribute v = *a.getValues<Attribute>().begin();
    if (auto f = dyn_cast<FloatAttr>(v))
      return f.getValueAsDouble();
    return (double)cast<IntegerAttr>(v).getInt();
  };
  double start = scalar(in[0]), limit = scalar(in[1]), delta = scalar(in[2]);
  if (delta == 0.0)
    return b.emitError() << "delta is 0";
  int64_t n = std::max<int64_t>((int64_t)std::ceil((limit - start) / delta), 0);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n; ++i) {
    double v = start + i * delta;
    values.push_back(elem.isF32() ? Attribute(FloatAttr::get(elem, (float)v))
                                  : IntegerAttr::get(elem, (int64_t)v));
  }
  auto type = RankedTensorType::get({n}, elem);
  return bindConstant(b, DenseElementsAttr::get(type, values));
}

/// ConstantOfShape (9): a tensor of the constant shape filled with the
/// one-element `value` attribute (default f32 0).
static LogicalResult importConstantOfShape(NodeBinder &b) {
  if (b.expectOutputs(1))
    return failure();
  auto shapeAttr = requireConstant(b, 0);
  if (failed(shapeAttr))
    return failure();
  SmallVector<int64_t> shape;
  for (APInt d : shapeAttr->getValues<APInt>()) {
    if (d.isNegative())
      return b.emitError() << "shape has a negative dimension "
                           << d.getSExtValue();
    shape.push_back(d.getSExtValue());
  }
  Attribute fill = b.builder().getF32FloatAttr(0.0f);
  if (const onnx::AttributeProto *attr = b.findAttr("value")) {
    const onnx::TensorProto &t = attr->t();
    bool isBool = t.data_type() == onnx::TensorProto::BOOL;
    Type elem = isBool ? b.builder().getI1Type()
                       : convertElementType(t.data_type(), b.context());
    if (!elem)
      return b.emitError() << "value of element type "
                           << dataTypeName(t.data_type()) << " is unsupported";
    if (isBool) {
      bool v = t.has_raw_data() ? (!t.raw_data().empty() && t.raw_data()[0])
                                : (t.int32_data_size() && t.int32_data(0));
      fill = b.builder().getBoolAttr(v);
    } else {
      auto data = readTensorData(t, RankedTensorType::get({1}, elem),
                                 [&]() { return b.emitError(); });
      if (failed(data))
        return failure();
      fill = *data->getValues<Attribute>().begin();
    }
  }
  auto type = RankedTensorType::get(shape, cast<TypedAttr>(fill).getType());
  return bindConstant(b, DenseElementsAttr::get(type, fill));
}

/// Not (1): only constants (folded by foldConstantNode) are supported.
static LogicalResult importNot(NodeBinder &b) {
  return b.emitError() << "Not of run-time tensor '" << b.inputName(0)
                       << "' is not supported (only masks that fold)";
}

void mlir::pd::detail::registerShapeHandlers(HandlerTable &table) {
  table["Shape"] = {1, importShape};
  table["Size"] = {1, importSize};
  table["Range"] = {11, importRange};
  table["ConstantOfShape"] = {9, importConstantOfShape};
  table["Not"] = {1, importNot};
}
