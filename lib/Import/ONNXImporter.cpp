//===- ONNXImporter.cpp - ONNX graph to a pd module -------------*- C++ -*-===//
//
// Reads the ModelProto, turns float initializers into `pd.param` symbols and
// integer ones into lazily created `pd.constant`s, graph inputs into @main's
// arguments (batch dimension specialised), and dispatches every node to its
// handler through the op_type table. The module is verified at the end.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <climits>

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

SmallVector<int64_t> ONNXValue::shape() const {
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  SmallVector<int64_t> out(shape.begin(), shape.end());
  if (transposed)
    std::reverse(out.begin(), out.end());
  return out;
}

//===----------------------------------------------------------------------===//
// GraphImporter: set-up
//===----------------------------------------------------------------------===//

GraphImporter::GraphImporter(MLIRContext &ctx, const onnx::ModelProto &model,
                             StringRef modelPath, const ImportOptions &opts)
    : builder(&ctx), options(opts), ctx(ctx), model(model),
      modelPath(modelPath.str()) {
  registerMathHandlers(handlers);
  registerNNHandlers(handlers);
  registerLossHandlers(handlers);
  registerTensorHandlers(handlers);
  registerConvHandlers(handlers);
  registerSequenceHandlers(handlers);
}

Location GraphImporter::fileLoc() {
  return FileLineColLoc::get(&ctx, modelPath, 0, 0);
}

LogicalResult GraphImporter::importOpsets() {
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  if (opset <= 0)
    return emitError(fileLoc())
           << "the model imports no opset of the default ONNX domain";
  return success();
}

void GraphImporter::collectUsesAndDeclarations() {
  const auto &graph = model.graph();
  for (const auto &node : graph.node())
    for (const auto &[i, input] : llvm::enumerate(node.input())) {
      usedNames.insert(input);
      readers[input].push_back({&node, (int)i});
      consumers.try_emplace(input, node.name().empty() && node.output_size()
                                       ? node.output(0)
                                       : node.name());
    }
  for (const auto &output : graph.output()) {
    usedNames.insert(output.name());
    graphOutputs.insert(output.name());
    declaredTypes[output.name()] = &output.type();
  }
  for (const auto &info : graph.value_info())
    declaredTypes[info.name()] = &info.type();
}

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
      "SplitToSequence", "SequenceAt"};
  static const llvm::StringSet<> kSinks = {"Equal", "Greater", "Less",
                                           "Not", "Shape", "Size"};
  llvm::StringSet<> outputs, seen;
  for (const auto &out : model.graph().output())
    outputs.insert(out.name());
  SmallVector<StringRef> work{name};
  while (!work.empty()) {
    StringRef value = work.pop_back_val();
    if (outputs.count(value))
      return false;
    if (!seen.insert(value).second)
      continue;
    for (const auto &node : model.graph().node())
      for (int i = 0; i < node.input_size(); ++i) {
        if (node.input(i) != value || kSinks.count(node.op_type()) ||
            (node.op_type() == "Where" && i == 0) ||
            (node.op_type() == "CastLike" && i == 1) ||
            (node.op_type() == "BatchNormalization" && i >= 3))
          continue;
        if (!kMove.count(node.op_type()))
          return false;
        for (const auto &out : node.output())
          work.push_back(out);
      }
  }
  return true;
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
/// they are buffers (isBuffer) or scalar literals (isScalarConstant); those,
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
         (isBuffer(init.name()) || isScalarConstant(init)))) {
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

//===----------------------------------------------------------------------===//
// GraphImporter: graph inputs
//===----------------------------------------------------------------------===//

/// Converts a graph input's declared type, specialising dim 0 to the batch.
FailureOr<Type>
GraphImporter::importInputType(const onnx::ValueInfoProto &input) {
  auto err = [&]() {
    return emitError(fileLoc()) << "graph input '" << input.name() << "' ";
  };
  if (!input.type().has_tensor_type())
    return err() << "is not a tensor";
  const auto &tensorType = input.type().tensor_type();
  Type elementType = convertElementType(tensorType.elem_type(), &ctx);
  if (!elementType)
    return err() << "has element type " << dataTypeName(tensorType.elem_type())
                 << "; inputs must be FLOAT, INT64 or INT32";
  if (!tensorType.has_shape())
    return err() << "has no declared shape";
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim())) {
    if (i == 0 && options.batchSize > 0) {
      shape.push_back(options.batchSize);
    } else if (dim.has_dim_value() && dim.dim_value() >= 0) {
      shape.push_back(dim.dim_value());
    } else if (dim.has_dim_param() && options.dimValues.count(dim.dim_param())) {
      shape.push_back(options.dimValues.at(dim.dim_param()));
    } else {
      std::string sym = dim.has_dim_param() ? dim.dim_param() : "?";
      if (i == 0)
        return err() << "has a symbolic batch dimension '" << sym
                     << "'; pass --microbatch to fix it";
      return err() << "has a symbolic dimension " << i << " ('" << sym
                   << "'); give its size with --dim " << sym << "=N";
    }
  }
  return Type(RankedTensorType::get(shape, elementType));
}

LogicalResult GraphImporter::importInputs(func::FuncOp main) {
  Block &entry = main.getBody().front();
  SmallVector<Type> argTypes;
  for (const auto &input : model.graph().input()) {
    if (params.count(input.name()) || constantInitializers.count(input.name()))
      continue; // IR < 4 lists initializers among the inputs.
    FailureOr<Type> type = importInputType(input);
    if (failed(type))
      return failure();
    Location loc = NameLoc::get(builder.getStringAttr(input.name()), fileLoc());
    Value arg = entry.addArgument(*type, loc);
    argTypes.push_back(*type);
    define(input.name(), ONNXValue{arg, false});
  }
  main.setFunctionType(builder.getFunctionType(argTypes, {}));
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    auto loc = cast<NameLoc>(entry.getArgument(i).getLoc());
    main.setArgAttr(i, "pd.input_name", loc.getName());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GraphImporter: values
//===----------------------------------------------------------------------===//

FailureOr<ONNXValue>
GraphImporter::lookup(StringRef name, Location loc,
                      function_ref<InFlightDiagnostic()> emitError) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  // Every use reads the parameter through its own pd.param_ref, so that
  // uses on different pipeline stages (a tied embedding and LM head) each
  // get their own read and gradient.
  if (auto param = params.lookup(name)) {
    auto ref = builder.create<ParamRefOp>(
        loc, param.getType(), FlatSymbolRefAttr::get(param.getSymNameAttr()));
    return ONNXValue{ref, false};
  }
  if (const onnx::TensorProto *init = constantInitializers.lookup(name)) {
    SmallVector<int64_t> shape(init->dims().begin(), init->dims().end());
    auto type = RankedTensorType::get(
        shape, convertConstantElementType(init->data_type(), &ctx));
    auto data = readTensorData(*init, type, emitError);
    if (failed(data))
      return failure();
    auto cst = builder.create<ConstantOp>(loc, *data);
    values[name] = ONNXValue{cst, false};
    return values[name];
  }
  return emitError() << "input '" << name
                     << "' is not defined by a graph input, an initializer "
                        "or an earlier node";
}

//===----------------------------------------------------------------------===//
// GraphImporter: nodes, the loss and the module
//===----------------------------------------------------------------------===//

std::string mlir::pd::detail::displayName(const onnx::NodeProto &node) {
  if (!node.name().empty() || node.output_size() == 0)
    return node.name();
  return node.output(0);
}

static StringRef displayDomain(const onnx::NodeProto &node) {
  return node.domain().empty() ? StringRef("ai.onnx")
                               : StringRef(node.domain());
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node) {
  NodeBinder binder(*this, node);
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return binder.emitError() << "unknown operator domain (only the default "
                                 "ONNX domain is supported)";
  StringRef opType = node.op_type();
  // A copy of an initializer was declared by importInitializerCopies.
  if (opType == "Identity" && node.output_size() == 1 &&
      initializerCopies.contains(node.output(0)))
    return success();
  if (opType == "If" || opType == "Loop" || opType == "Scan")
    return binder.emitError() << "control flow is not supported (the model "
                                 "must be a straight-line graph)";
  // Shape and mask computations on constants become constants.
  if (std::optional<LogicalResult> folded = foldConstantNode(binder))
    return *folded;
  auto it = handlers.find(opType);
  if (it == handlers.end())
    return binder.emitError() << "unsupported operator";
  if (opset < it->second.sinceVersion)
    return binder.emitError()
           << "supported from opset " << it->second.sinceVersion
           << ", the model uses opset " << opset;
  return it->second.fn(binder);
}

/// Selects the loss (the single graph output or --loss) and returns it.
LogicalResult GraphImporter::importReturn(func::FuncOp main) {
  const auto &graph = model.graph();
  std::string name = options.lossOutput;
  std::string what = "value '" + name + "' (--loss)";
  if (name.empty()) {
    SmallVector<StringRef> candidates;
    for (const auto &output : graph.output())
      if (!sideOutputs.contains(output.name()))
        candidates.push_back(output.name());
    if (candidates.size() != 1)
      return emitError(fileLoc())
             << "the graph has " << candidates.size()
             << " outputs; pass --loss to name the scalar loss";
    name = candidates.front().str();
    what = "graph output '" + name + "'";
  } else if (!values.count(name)) {
    return emitError(fileLoc())
           << "--loss '" << name << "' names no value computed by the graph";
  }
  Location loc = NameLoc::get(builder.getStringAttr(name), fileLoc());
  auto value = lookup(name, loc, [&]() { return emitError(fileLoc()); });
  if (failed(value))
    return failure();
  auto type = cast<RankedTensorType>(value->value.getType());
  if (value->transposed || type.getRank() != 0)
    return emitError(fileLoc())
           << what << " is not a scalar loss (shape "
           << shapeString(value->shape())
           << "); export the model with its loss or pass --loss";
  if (!type.getElementType().isF32())
    return emitError(fileLoc())
           << what << " is not a scalar loss (element type "
           << type.getElementType() << ", expected f32)";
  builder.create<func::ReturnOp>(loc, value->value);
  main.setFunctionType(
      builder.getFunctionType(main.getFunctionType().getInputs(), {type}));
  return success();
}

FailureOr<OwningOpRef<ModuleOp>> GraphImporter::run() {
  if (failed(importOpsets()))
    return failure();
  collectUsesAndDeclarations();
  detectFoldedExport();
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  (*module)->setAttr("pd.model", builder.getStringAttr(modelPath));
  (*module)->setAttr("pd.opset", builder.getI64IntegerAttr(opset));
  builder.setInsertionPointToEnd(module->getBody());
  auto main = builder.create<func::FuncOp>(fileLoc(), "main",
                                           builder.getFunctionType({}, {}));
  main.addEntryBlock();
  if (failed(importInitializers(*module, main)) || failed(importInputs(main)))
    return failure();
  builder.setInsertionPointToStart(&main.getBody().front());
  for (const auto &node : model.graph().node())
    if (failed(importNode(node)))
      return failure();
  if (failed(importReturn(main)))
    return failure();
  // Only a model that imports gets the warning: a rejected one gets its
  // one error line.
  warnAboutFoldedExport();
  // Handlers that look an operand up twice (or only read its shape) leave
  // parameter reads without uses; they would be stage inputs for nothing.
  main.walk([](ParamRefOp ref) {
    if (ref->use_empty())
      ref->erase();
  });
  // An initializer read only through its copies is not itself a parameter.
  for (const auto &copy : initializerCopies) {
    auto source =
        params.lookup(floatInitializers.lookup(copy.getKey())->name());
    if (source && SymbolTable::symbolKnownUseEmpty(source, *module)) {
      params.erase(source.getOnnxName());
      source->erase();
    }
  }
  if (failed(mlir::verify(*module)))
    return failure();
  return module;
}

//===----------------------------------------------------------------------===//
// NodeBinder
//===----------------------------------------------------------------------===//

NodeBinder::NodeBinder(GraphImporter &importer, const onnx::NodeProto &node)
    : importer(importer), node(node),
      location(NameLoc::get(
          StringAttr::get(importer.builder.getContext(), displayName(node)),
          importer.fileLoc())) {}

OpBuilder &NodeBinder::builder() { return importer.builder; }
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
  if (dense.getElementType().isF32())
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

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

FailureOr<OwningOpRef<ModuleOp>>
mlir::pd::importONNXFile(StringRef path, MLIRContext &ctx,
                         const ImportOptions &opts) {
  ctx.loadDialect<PDDialect, func::FuncDialect>();
  SmallString<256> absPath(path);
  (void)llvm::sys::fs::make_absolute(absPath);
  llvm::sys::path::remove_dots(absPath, /*remove_dot_dot=*/true);
  Location loc = FileLineColLoc::get(&ctx, absPath, 0, 0);

  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (std::error_code ec = buffer.getError())
    return emitError(loc) << "cannot open '" << path << "': " << ec.message();
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return emitError(loc) << "'" << path << "' is larger than 2 GiB; export "
                          << "the model with external data";
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return emitError(loc) << "'" << path << "' is not an ONNX model: the "
                          << "protobuf data is truncated or malformed";
  if (!model.has_graph() || model.opset_import_size() == 0)
    return emitError(loc) << "'" << path << "' is not an ONNX model: it has "
                          << (model.has_graph() ? "no opset_import"
                                                : "no graph");
  return detail::GraphImporter(ctx, model, absPath, opts).run();
}
