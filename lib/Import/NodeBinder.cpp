//===- NodeBinder.cpp - Operands, attributes and results of a node ---------===//
//
// The handlers' view of one ONNX node: operands resolved through the
// GraphImporter (parameters, constants, pending transposes, sequences),
// typed attributes with defaults, and results checked against declared
// shapes. Errors name the node and the offending input or attribute.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

//===----------------------------------------------------------------------===//
// NodeBinder
//===----------------------------------------------------------------------===//

NodeBinder::NodeBinder(GraphImporter &importer, const onnx::NodeProto &node)
    : importer(importer), node(node),
      location(NameLoc::get(
          StringAttr::get(importer.builder.getContext(), displayName(node)),
          importer.fileLoc())) {}

OpBuilder &NodeBinder::builder() { return importer.builder; }
int64_t NodeBinder::takeRngId() { return importer.nextRngId++; }
int64_t NodeBinder::opset() const { return importer.opset; }
MLIRContext *NodeBinder::context() { return importer.builder.getContext(); }

InFlightDiagnostic NodeBinder::emitError() {
  InFlightDiagnostic diag = mlir::emitError(location);
  diag << "node '" << displayName(node) << "' (" << node.op_type()
       << ", domain '" << displayDomain(node) << "'): ";
  return diag;
}

bool NodeBinder::hasInput(unsigned i) const {
  return i < numInputs() && !node.input(i).empty();
}

bool NodeBinder::isOutputUsed(unsigned i) const {
  return i < numOutputs() && !node.output(i).empty() &&
         importer.usedNames.contains(node.output(i));
}

StringRef NodeBinder::outputConsumer(unsigned i) const {
  if (i >= numOutputs() || node.output(i).empty())
    return "";
  auto it = importer.consumers.find(node.output(i));
  return it == importer.consumers.end() ? StringRef() : StringRef(it->second);
}

ArrayRef<std::pair<const onnx::NodeProto *, int>>
NodeBinder::outputReaders(unsigned i) const {
  if (i >= numOutputs() || node.output(i).empty())
    return {};
  auto it = importer.readers.find(node.output(i));
  if (it == importer.readers.end())
    return {};
  return it->second;
}

bool NodeBinder::isGraphOutput(unsigned i) const {
  return i < numOutputs() && importer.graphOutputs.contains(node.output(i));
}

void NodeBinder::setSequenceResult(unsigned i, ONNXSequence sequence) {
  if (i < numOutputs() && !outputName(i).empty())
    importer.sequences[outputName(i)] = std::move(sequence);
}

const ONNXSequence *NodeBinder::sequenceOperand(unsigned i) const {
  if (!hasInput(i))
    return nullptr;
  auto it = importer.sequences.find(inputName(i));
  return it == importer.sequences.end() ? nullptr : &it->second;
}

void NodeBinder::markSideOutput(unsigned i) {
  if (i < numOutputs() && !node.output(i).empty())
    importer.sideOutputs.insert(node.output(i));
}

ParseResult NodeBinder::rawOperand(ONNXValue &value, unsigned i) {
  if (!hasInput(i)) {
    emitError() << "missing required input " << i;
    return failure();
  }
  auto result =
      importer.lookup(inputName(i), location, [&]() { return emitError(); });
  if (failed(result))
    return failure();
  value = *result;
  return success();
}

ParseResult NodeBinder::operand(Value &value, unsigned i) {
  ONNXValue raw;
  if (rawOperand(raw, i))
    return failure();
  value = raw.value;
  // A 2-D Transpose waits to be folded into a matmul; anything else reads
  // it materialised.
  if (raw.transposed) {
    auto type = cast<RankedTensorType>(raw.value.getType());
    auto transposed = RankedTensorType::get(raw.shape(), type.getElementType());
    value = builder().create<TransposeOp>(
        loc(), transposed, raw.value, builder().getDenseI64ArrayAttr({1, 0}));
  }
  return success();
}

ParseResult NodeBinder::constantOperand(SmallVectorImpl<double> &values,
                                        unsigned i) {
  Value v;
  if (operand(v, i))
    return failure();
  auto constant = v.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (!dense) {
    emitError() << "input '" << inputName(i)
                << "' must be a compile-time constant";
    return failure();
  }
  values.clear();
  if (isa<FloatType>(dense.getElementType()))
    for (APFloat f : dense.getValues<APFloat>())
      values.push_back(f.convertToDouble());
  else
    for (APInt n : dense.getValues<APInt>())
      values.push_back((double)n.getSExtValue());
  return success();
}

FailureOr<DenseElementsAttr> NodeBinder::constantInput(unsigned i) {
  if (!hasInput(i) || importer.isParam(inputName(i)))
    return DenseElementsAttr();
  ONNXValue raw;
  if (rawOperand(raw, i))
    return failure();
  auto constant = raw.value.getDefiningOp<ConstantOp>();
  if (raw.transposed || !constant)
    return DenseElementsAttr();
  return dyn_cast<DenseElementsAttr>(constant.getValue());
}

FailureOr<StateOp> NodeBinder::stateOperand(unsigned i) {
  if (!hasInput(i)) {
    emitError() << "missing required input " << i;
    return failure();
  }
  return importer.declareState(inputName(i), *this);
}

FailureOr<SmallVector<int64_t>>
NodeBinder::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank) {
      emitError() << "axis " << a << " is out of range for rank " << rank;
      return failure();
    }
    out.push_back(n);
  }
  llvm::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ParseResult NodeBinder::f32Operand(Value &value, unsigned i) {
  if (operand(value, i))
    return failure();
  Type elementType = cast<RankedTensorType>(value.getType()).getElementType();
  if (elementType.isF32())
    return success();
  emitError() << "input '" << inputName(i) << "' has element type "
              << elementType << ", expected f32";
  return failure();
}

ParseResult NodeBinder::optionalF32Operand(Value &value, unsigned i) {
  value = nullptr;
  return hasInput(i) ? f32Operand(value, i) : success();
}

ParseResult NodeBinder::expectOutputs(unsigned n) {
  if (numOutputs() == n)
    return success();
  emitError() << "expected " << n << " output(s), got " << numOutputs();
  return failure();
}

const onnx::AttributeProto *NodeBinder::findAttr(StringRef name) const {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

ParseResult NodeBinder::attrOfType(const onnx::AttributeProto *&attr,
                                   StringRef name,
                                   onnx::AttributeProto::AttributeType type) {
  attr = findAttr(name);
  if (!attr || attr->type() == type)
    return success();
  emitError() << "attribute '" << name << "' has type "
              << onnx::AttributeProto::AttributeType_Name(attr->type())
              << ", expected "
              << onnx::AttributeProto::AttributeType_Name(type);
  return failure();
}

ParseResult NodeBinder::attr(int64_t &value, StringRef name, int64_t dflt) {
  const onnx::AttributeProto *attr;
  if (attrOfType(attr, name, onnx::AttributeProto::INT))
    return failure();
  value = attr ? attr->i() : dflt;
  return success();
}

ParseResult NodeBinder::attr(float &value, StringRef name, float dflt) {
  const onnx::AttributeProto *attr;
  if (attrOfType(attr, name, onnx::AttributeProto::FLOAT))
    return failure();
  value = attr ? attr->f() : dflt;
  return success();
}

ParseResult NodeBinder::attr(std::string &value, StringRef name,
                             StringRef dflt) {
  const onnx::AttributeProto *attr;
  if (attrOfType(attr, name, onnx::AttributeProto::STRING))
    return failure();
  value = attr ? attr->s() : dflt.str();
  return success();
}

ParseResult NodeBinder::attr(SmallVectorImpl<int64_t> &value, StringRef name) {
  const onnx::AttributeProto *attr;
  if (attrOfType(attr, name, onnx::AttributeProto::INTS))
    return failure();
  value.clear();
  if (attr)
    value.append(attr->ints().begin(), attr->ints().end());
  return success();
}

/// Binds output `i`. The result type was computed from the op's semantics;
/// a static shape the model declares for it must agree (unless the batch
/// was re-specialised, which changes every batch-derived shape).
LogicalResult NodeBinder::setResult(unsigned i, ONNXValue value) {
  if (i >= numOutputs() || outputName(i).empty())
    return success();
  StringRef name = outputName(i);
  const onnx::TypeProto *declared = importer.declaredTypes.lookup(name);
  if (declared && importer.options.batchSize == 0) {
    auto computed = value.shape();
    auto shape = staticShape(*declared);
    if (shape && ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(computed))
      return emitError() << "computed shape " << shapeString(computed)
                         << " of '" << name << "' differs from its declared "
                         << "shape " << shapeString(*shape);
    int32_t elemType = declared->tensor_type().elem_type();
    Type elementType =
        cast<RankedTensorType>(value.value.getType()).getElementType();
    if (elemType != 0 &&
        convertConstantElementType(elemType, context()) != elementType)
      return emitError() << "computed element type " << elementType << " of '"
                         << name << "' differs from its declared type "
                         << dataTypeName(elemType);
  }
  importer.define(name, value);
  return success();
}
