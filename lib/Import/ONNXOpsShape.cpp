//===- ONNXOpsShape.cpp - Shape computations evaluated at import ----------===//
//
// Dynamic-axes exports compute shapes at run time: Shape, Gather, Concat,
// Range, arithmetic on int64 scalars, ConstantOfShape, Expand, Where. Once
// the batch and the other symbolic dimensions are specialised, every such
// value is a compile-time constant, so the importer evaluates it: Shape and
// Size read static shapes, Range and ConstantOfShape build constants, and
// foldConstantNode (ConstantFolding.cpp) evaluates arithmetic, comparison,
// logic, Cast, Where and the other nodes whose inputs are all constants.
// The data-movement ops (Gather, Concat, Slice, Reshape,
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
  if (!shapeAttr->getElementType().isInteger(64))
    return b.emitError() << "input '" << b.inputName(0)
                         << "' must be an int64 shape";
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

void mlir::pd::detail::registerShapeHandlers(HandlerTable &table) {
  table["Shape"] = {1, importShape};
  table["Size"] = {1, importSize};
  table["Range"] = {11, importRange};
  table["ConstantOfShape"] = {9, importConstantOfShape};
}
