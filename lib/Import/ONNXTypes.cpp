//===- ONNXTypes.cpp - ONNX types and tensor data to MLIR -------*- C++ -*-===//
//
// Converts ONNX element types and shapes to MLIR types and reads the data of
// small constant tensors (shape constants, Constant nodes) into dense
// attributes. Float initializers are never read here: they stay in the file.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/Support/Endian.h"

using namespace mlir;
using namespace mlir::pd::detail;

Type mlir::pd::detail::convertElementType(int32_t dataType, MLIRContext *ctx) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(ctx);
  case onnx::TensorProto::INT64:
    return IntegerType::get(ctx, 64);
  case onnx::TensorProto::INT32:
    return IntegerType::get(ctx, 32);
  default:
    return nullptr;
  }
}

Type mlir::pd::detail::convertConstantElementType(int32_t dataType,
                                                  MLIRContext *ctx) {
  if (dataType == onnx::TensorProto::BOOL)
    return IntegerType::get(ctx, 1);
  if (dataType == onnx::TensorProto::DOUBLE)
    return Float64Type::get(ctx);
  return convertElementType(dataType, ctx);
}

std::string mlir::pd::detail::dataTypeName(int32_t dataType) {
  if (!onnx::TensorProto::DataType_IsValid(dataType))
    return "data type " + std::to_string(dataType);
  return onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(dataType));
}

std::string mlir::pd::detail::shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

std::optional<SmallVector<int64_t>>
mlir::pd::detail::staticShape(const onnx::TypeProto &type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return std::nullopt;
  SmallVector<int64_t> shape;
  for (const auto &dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value())
      return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

/// Decodes `count` little-endian elements of type T from raw_data.
template <typename T>
static SmallVector<T> decodeRaw(const std::string &raw, int64_t count) {
  SmallVector<T> out;
  out.reserve(count);
  for (int64_t i = 0; i < count; ++i)
    out.push_back(llvm::support::endian::read<T, llvm::endianness::little>(
        raw.data() + i * sizeof(T)));
  return out;
}

/// Reads typed elements from raw_data if present, else from `field`.
template <typename T, typename Field>
static FailureOr<SmallVector<T>>
readElements(const onnx::TensorProto &tensor, const Field &field, int64_t count,
             function_ref<InFlightDiagnostic()> emitError) {
  if (tensor.has_raw_data()) {
    if (static_cast<int64_t>(tensor.raw_data().size()) !=
        count * static_cast<int64_t>(sizeof(T)))
      return emitError() << "tensor '" << tensor.name() << "' has "
                         << tensor.raw_data().size()
                         << " bytes of raw data, expected "
                         << count * sizeof(T);
    return decodeRaw<T>(tensor.raw_data(), count);
  }
  if (field.size() != count)
    return emitError() << "tensor '" << tensor.name() << "' has "
                       << field.size() << " elements, expected " << count;
  return SmallVector<T>(field.begin(), field.end());
}

/// Reads a BOOL tensor: one byte per element in raw_data, else one int32
/// each in int32_data.
static FailureOr<SmallVector<bool>>
readBools(const onnx::TensorProto &tensor, int64_t count,
          function_ref<InFlightDiagnostic()> emitError) {
  auto nonZero = [](const auto &values) {
    SmallVector<bool> bits;
    for (auto v : values)
      bits.push_back(v != 0);
    return bits;
  };
  if (tensor.has_raw_data()) {
    auto bytes =
        readElements<uint8_t>(tensor, tensor.int32_data(), count, emitError);
    return failed(bytes) ? FailureOr<SmallVector<bool>>(failure())
                         : nonZero(*bytes);
  }
  auto words =
      readElements<int32_t>(tensor, tensor.int32_data(), count, emitError);
  return failed(words) ? FailureOr<SmallVector<bool>>(failure())
                       : nonZero(*words);
}

FailureOr<DenseElementsAttr>
mlir::pd::detail::readTensorData(const onnx::TensorProto &tensor,
                                 RankedTensorType type,
                                 function_ref<InFlightDiagnostic()> emitError) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return emitError() << "constant tensor '" << tensor.name()
                       << "' stores its data externally; only float "
                          "parameters may use external data";
  int64_t count = type.getNumElements();
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT: {
    auto data =
        readElements<float>(tensor, tensor.float_data(), count, emitError);
    if (failed(data))
      return failure();
    return DenseElementsAttr::get(type, ArrayRef<float>(*data));
  }
  case onnx::TensorProto::DOUBLE: {
    auto data =
        readElements<double>(tensor, tensor.double_data(), count, emitError);
    if (failed(data))
      return failure();
    return DenseElementsAttr::get(type, ArrayRef<double>(*data));
  }
  case onnx::TensorProto::INT64: {
    auto data =
        readElements<int64_t>(tensor, tensor.int64_data(), count, emitError);
    if (failed(data))
      return failure();
    return DenseElementsAttr::get(type, ArrayRef<int64_t>(*data));
  }
  case onnx::TensorProto::INT32: {
    auto data =
        readElements<int32_t>(tensor, tensor.int32_data(), count, emitError);
    if (failed(data))
      return failure();
    return DenseElementsAttr::get(type, ArrayRef<int32_t>(*data));
  }
  case onnx::TensorProto::BOOL: {
    auto bits = readBools(tensor, count, emitError);
    if (failed(bits))
      return failure();
    return DenseElementsAttr::get(type, ArrayRef<bool>(*bits));
  }
  default:
    return emitError() << "constant tensor '" << tensor.name()
                       << "' has unsupported element type "
                       << dataTypeName(tensor.data_type());
  }
}
