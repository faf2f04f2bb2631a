//===- ONNXImporter.cpp - ONNX graph to a pd module -------------*- C++ -*-===//
//
// Reads the ModelProto, classifies its initializers (ONNXInitializers.cpp:
// `pd.param`s, lazily created `pd.constant`s, `pd.state`), turns graph
// inputs into @main's arguments (batch dimension specialised), and
// dispatches every node to its handler through the op_type table with a
// NodeBinder (NodeBinder.cpp). The module is verified at the end.
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
    main.setArgAttr(i, PDDialect::InputNameAttrHelper::getNameStr(),
                    loc.getName());
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

StringRef mlir::pd::detail::displayDomain(const onnx::NodeProto &node) {
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
  (*module)->setAttr(PDDialect::ModelAttrHelper::getNameStr(),
                     builder.getStringAttr(modelPath));
  (*module)->setAttr(PDDialect::OpsetAttrHelper::getNameStr(),
                     builder.getI64IntegerAttr(opset));
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
// Entry point
//===----------------------------------------------------------------------===//

bool mlir::pd::ImportOptions::addDimValue(StringRef spec) {
  auto [name, value] = spec.split('=');
  int64_t n = 0;
  if (name.empty() || value.getAsInteger(10, n) || n <= 0)
    return false;
  dimValues[name.str()] = n;
  return true;
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::pd::importONNXFile(StringRef path, MLIRContext &ctx,
                         const ImportOptions &opts) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (std::error_code ec = buffer.getError())
    return emitError(FileLineColLoc::get(&ctx, path, 0, 0))
           << "cannot open '" << path << "': " << ec.message();
  return importONNXBuffer((*buffer)->getMemBufferRef(), ctx, opts);
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::pd::importONNXBuffer(llvm::MemoryBufferRef buffer, MLIRContext &ctx,
                           const ImportOptions &opts) {
  ctx.loadDialect<PDDialect, func::FuncDialect>();
  StringRef path = buffer.getBufferIdentifier();
  SmallString<256> absPath(path);
  if (path != "<stdin>") {
    (void)llvm::sys::fs::make_absolute(absPath);
    llvm::sys::path::remove_dots(absPath, /*remove_dot_dot=*/true);
  }
  Location loc = FileLineColLoc::get(&ctx, absPath, 0, 0);
  StringRef bytes = buffer.getBuffer();
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
