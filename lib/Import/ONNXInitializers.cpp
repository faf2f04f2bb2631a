//===- ONNXInitializers.cpp - Initializers: parameters, constants, state -===//
//
// Which float initializers are trainable parameters (pd.param), which are
// constants (buffers that only feed masks, shapes or BatchNorm statistics;
// literals folded by torch 2's ONNX optimizer) and which are state a node
// updates (pd.state); eval-mode Identity copies of an initializer as
// parameters of their own; detection of torch-2-optimized exports.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/StringExtras.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

/// Whether float initializer `name` can only reach the loss through ops
/// that are not differentiable (a mask buffer compared with Equal, a shape
/// read by Shape, a Where condition, the running statistics of a
/// BatchNormalization, the type operand of CastLike), possibly after ops
/// that only move data. Such a buffer is a constant, not a trainable
/// parameter.
bool GraphImporter::isBuffer(StringRef name) {
  static const llvm::StringSet<> kMove = {
      "Slice",           "Reshape",   "Unsqueeze", "Squeeze",
      "Transpose",       "Identity",  "Expand",    "Cast",
      "Flatten",         "Concat",    "Gather",    "CastLike",
      "SplitToSequence", "SequenceAt", "Trilu",     "GatherElements"};
  static const llvm::StringSet<> kSinks = {
      "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Not",
      "And",   "Or",      "Xor",  "IsNaN",          "IsInf",       "Shape",
      "Size"};
  llvm::StringSet<> seen;
  SmallVector<StringRef> work{name};
  while (!work.empty()) {
    StringRef value = work.pop_back_val();
    if (graphOutputs.count(value))
      return false;
    if (!seen.insert(value).second)
      continue;
    auto it = readers.find(value);
    if (it == readers.end())
      continue;
    for (auto [node, i] : it->second) {
      if (kSinks.count(node->op_type()) ||
          (node->op_type() == "Where" && i == 0) ||
          (node->op_type() == "CastLike" && i == 1) ||
          (node->op_type() == "BatchNormalization" && i >= 3))
        continue;
      if (!kMove.count(node->op_type()))
        return false;
      for (const auto &out : node->output())
        work.push_back(out);
    }
  }
  return true;
}

/// The `metadata_props` entries of a ValueInfoProto (field 4, ONNX 1.16;
/// torch's dynamo exporter writes them). Read from the wire format so that
/// the field is found whether the ONNX headers know it or keep it as an
/// unknown field (Debian's libonnx 1.12 does).
static llvm::StringMap<std::string>
valueMetadata(const onnx::ValueInfoProto &info) {
  namespace pb = google::protobuf;
  using WFL = pb::internal::WireFormatLite;
  llvm::StringMap<std::string> entries;
  std::string bytes = info.SerializeAsString();
  pb::io::CodedInputStream in(
      reinterpret_cast<const uint8_t *>(bytes.data()), (int)bytes.size());
  while (uint32_t tag = in.ReadTag()) {
    std::string entry;
    if (WFL::GetTagFieldNumber(tag) != 4 ||
        WFL::GetTagWireType(tag) != WFL::WIRETYPE_LENGTH_DELIMITED) {
      if (!WFL::SkipField(&in, tag))
        break;
      continue;
    }
    uint32_t length;
    onnx::StringStringEntryProto kv;
    if (!in.ReadVarint32(&length) || !in.ReadString(&entry, (int)length))
      break;
    if (kv.ParseFromString(entry))
      entries[kv.key()] = kv.value();
  }
  return entries;
}

/// Whether the exporter marked initializer `name` as a buffer: torch's
/// dynamo exporter annotates the value_info of every lifted parameter and
/// buffer with its torch.export input kind (PARAMETER, BUFFER,
/// CONSTANT_TENSOR). A buffer (Llama's rotary `inv_freq`, BatchNorm's
/// running statistics) is not trained even where it reaches the loss
/// through differentiable ops.
bool GraphImporter::isExportedBuffer(StringRef name) {
  auto check = [&](const auto &infos) -> std::optional<bool> {
    for (const onnx::ValueInfoProto &info : infos)
      if (info.name() == name) {
        auto entries = valueMetadata(info);
        auto it = entries.find("pkg.torch.export.graph_signature.InputSpec.kind");
        if (it != entries.end())
          return it->second == "BUFFER" || it->second == "CONSTANT_TENSOR";
      }
    return std::nullopt;
  };
  if (auto kind = check(model.graph().value_info()))
    return *kind;
  return check(model.graph().input()).value_or(false);
}

/// Whether the rank-0 float initializer `init` of a model folded by torch
/// 2's ONNX optimizer (detectFoldedExport) is one of the literals it folded
/// (GELU's 0.5 and sqrt(2), the attention scale, the -inf of a masked
/// fill): every use, possibly through Identity, Cast or CastLike, is as an
/// operand of elementwise arithmetic (Add, Sub, Mul, Div, Pow, Max, Min, a
/// Where branch). Elsewhere an initializer of any shape is a parameter.
bool GraphImporter::isScalarConstant(const onnx::TensorProto &init) {
  static const llvm::StringSet<> kMove = {"Identity", "Cast", "CastLike"};
  static const llvm::StringSet<> kArith = {"Add", "Sub", "Mul", "Div",
                                           "Pow", "Max", "Min", "Where"};
  if (foldedBy.empty() || init.data_type() != onnx::TensorProto::FLOAT ||
      init.dims_size() != 0)
    return false;
  SmallVector<std::string> work{init.name()};
  llvm::StringSet<> seen;
  while (!work.empty()) {
    std::string value = work.pop_back_val();
    if (graphOutputs.contains(value))
      return false;
    if (!seen.insert(value).second)
      continue;
    for (auto [node, i] : readers.lookup(value)) {
      StringRef op = node->op_type();
      if (op == "CastLike" && i == 1)
        continue; // Reads only the element type.
      if (kMove.contains(op) && i == 0) {
        work.append(node->output().begin(), node->output().end());
        continue;
      }
      if (!kArith.contains(op) || (op == "Where" && i == 0))
        return false;
    }
  }
  return true;
}

/// Float initializers become parameters (their bytes are never read) unless
/// they are buffers (isBuffer, isExportedBuffer) or scalar literals
/// (isScalarConstant); those,
/// integer and BOOL initializers are remembered and materialised as
/// pd.constant on first use.
LogicalResult GraphImporter::importInitializers(ModuleOp module,
                                                func::FuncOp main) {
  SymbolTable symbols(module);
  for (const auto &init : model.graph().initializer()) {
    SmallVector<int64_t> shape(init.dims().begin(), init.dims().end());
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
      return emitError(fileLoc())
             << "initializer '" << init.name() << "' has a negative dimension "
             << shapeString(shape);
    if (init.data_type() == onnx::TensorProto::INT64 ||
        init.data_type() == onnx::TensorProto::INT32 ||
        init.data_type() == onnx::TensorProto::BOOL ||
        (init.data_type() == onnx::TensorProto::FLOAT &&
         (isBuffer(init.name()) || isExportedBuffer(init.name()) ||
          isScalarConstant(init)))) {
      constantInitializers[init.name()] = &init;
      continue;
    }
    if (init.data_type() != onnx::TensorProto::FLOAT)
      return emitError(fileLoc())
             << "initializer '" << init.name() << "' has element type "
             << dataTypeName(init.data_type())
             << "; parameters must be FLOAT (float32)";
    createParam(symbols, main, init.name(), init, /*initFrom=*/"");
  }
  for (const auto &init : model.graph().initializer())
    if (init.data_type() == onnx::TensorProto::FLOAT)
      floatInitializers[init.name()] = &init;
  importInitializerCopies(module, main);
  return success();
}

/// Declares parameter `name` of `init`'s shape before `main`.
void GraphImporter::createParam(SymbolTable &symbols, func::FuncOp main,
                                StringRef name, const onnx::TensorProto &init,
                                StringRef initFrom) {
  SmallVector<int64_t> shape(init.dims().begin(), init.dims().end());
  auto type = RankedTensorType::get(shape, builder.getF32Type());
  Location loc = NameLoc::get(builder.getStringAttr(name), fileLoc());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(main);
  auto param = builder.create<ParamOp>(
      loc, name, type, name,
      initFrom.empty() ? StringAttr() : builder.getStringAttr(initFrom));
  symbols.insert(param, param->getIterator()); // renames on a clash
  params[name] = param;
}

/// torch.onnx.export in eval mode deduplicates equal initializers: one keeps
/// its name and each other becomes `copy = Identity(kept)`. A copy is a
/// distinct tensor of the model (every LayerNorm weight of a GPT is all ones
/// at export), so it becomes a parameter of its own, named after the copy
/// and initialised from the kept initializer (`init_from`); a copy nothing
/// differentiable reads (a second attention mask) becomes a constant. One
/// initializer read directly by several nodes (a tied embedding and LM
/// head) stays one parameter.
void GraphImporter::importInitializerCopies(ModuleOp module,
                                            func::FuncOp main) {
  SymbolTable symbols(module);
  for (const auto &node : model.graph().node()) {
    if (node.op_type() != "Identity" ||
        (!node.domain().empty() && node.domain() != "ai.onnx") ||
        node.input_size() != 1 || node.output_size() != 1 ||
        node.output(0).empty())
      continue;
    StringRef copy = node.output(0);
    const onnx::TensorProto *init = floatInitializers.lookup(node.input(0));
    if (!init || params.count(copy) || constantInitializers.count(copy))
      continue;
    floatInitializers[copy] = init; // a copy of a copy reads the same data
    initializerCopies.insert(copy);
    // A copy of a constant (a mask buffer, a folded literal) is one too.
    if (constantInitializers.count(node.input(0)) || isBuffer(copy))
      constantInitializers[copy] = init;
    else
      createParam(symbols, main, copy, *init, init->name());
  }
}

/// State is an initializer only its updating node reads: a reader elsewhere
/// would need the value of a given microbatch, which pdc does not define.
FailureOr<StateOp> GraphImporter::declareState(StringRef name,
                                               NodeBinder &binder) {
  const onnx::TensorProto *init = constantInitializers.lookup(name);
  if (!init || init->name() != name ||
      init->data_type() != onnx::TensorProto::FLOAT)
    return binder.emitError() << "input '" << name << "' must be a FLOAT "
                              << "initializer (state the node updates)";
  if (states.count(name))
    return binder.emitError() << "input '" << name << "' is state another "
                              << "node already updates";
  int readers = 0;
  for (const auto &node : model.graph().node())
    readers += llvm::count(node.input(), name);
  if (readers > 1)
    return binder.emitError() << "input '" << name << "' is state the node "
                              << "updates and is also read by another node";
  SmallVector<int64_t> shape(init->dims().begin(), init->dims().end());
  auto type = RankedTensorType::get(shape, builder.getF32Type());
  Operation *main = builder.getInsertionBlock()->getParentOp();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(main);
  auto state = builder.create<StateOp>(
      NameLoc::get(builder.getStringAttr(name), fileLoc()), name, type, name);
  SymbolTable(main->getParentOp()).insert(state, state->getIterator());
  states[name] = state;
  return state;
}

/// Whether `name` has the form val_N of the initializers torch 2's ONNX
/// optimizer creates when it folds constants.
static bool isFoldedName(StringRef name) {
  return name.consume_front("val_") && !name.empty() &&
         llvm::all_of(name, [](char c) { return llvm::isDigit(c); });
}

/// torch 2's ONNX optimizer (torch.onnx.export's default optimize=True)
/// folds constants into new initializers named val_N (transposed weights,
/// literals) and deduplicates initializers by value. Records the first
/// such initializer of a model produced by PyTorch 2 or later in
/// `foldedBy`.
void GraphImporter::detectFoldedExport() {
  StringRef major = StringRef(model.producer_version()).split('.').first;
  unsigned version = 0;
  if (model.producer_name() != "pytorch" || major.getAsInteger(10, version) ||
      version < 2)
    return;
  for (const auto &init : model.graph().initializer())
    if (isFoldedName(init.name())) {
      foldedBy = init.name();
      return;
    }
}

/// The optimizer merges distinct parameters with equal initial values (every
/// LayerNorm weight) and turns a tied embedding and LM head into two. The
/// graph still computes the same loss, so pdc compiles it, but training it
/// is not training the PyTorch model: warn once.
void GraphImporter::warnAboutFoldedExport() {
  if (foldedBy.empty())
    return;
  emitWarning(fileLoc())
      << "the model was exported by PyTorch " << model.producer_version()
      << " with its ONNX optimizer (initializer '" << foldedBy
      << "' was folded), which merges parameters of equal value and unties "
         "shared ones; training it is not training the PyTorch model: "
         "export with torch.onnx.export(..., optimize=False) to train";
}
