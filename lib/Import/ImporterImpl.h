//===- ImporterImpl.h - Internals shared by the ONNX importer ---*- C++ -*-===//
//
// Private to lib/Import: the graph importer (Toy MLIRGen shape: a builder, a
// map from ONNX value names to IR values, located errors), the NodeBinder
// handed to each per-op handler, the handler table, and type helpers.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_IMPORT_IMPORTERIMPL_H
#define PD_LIB_IMPORT_IMPORTERIMPL_H

#include "dialects/PD/IR/PDOps.h"
#include "pd/Import/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace mlir::pd::detail {

class GraphImporter;
class NodeBinder;

//===----------------------------------------------------------------------===//
// Values and handlers
//===----------------------------------------------------------------------===//

/// An ONNX value as the importer tracks it. `transposed` marks the output of
/// a 2-D Transpose, which is not materialised: MatMul and Gemm absorb it into
/// their transpose flags and every other consumer rejects it.
struct ONNXValue {
  Value value;
  bool transposed = false;
  /// The shape ONNX sees (the transpose of value's shape when transposed).
  SmallVector<int64_t> shape() const;
};

/// A sequence made by SplitToSequence, kept symbolic: chunk k is the slice
/// of `input` along `axis` from offset sum(sizes[0..k)) of size sizes[k],
/// without the axis when `squeeze`. SequenceAt with a constant position
/// materialises one chunk; nothing else may read a sequence.
struct ONNXSequence {
  Value input;
  int64_t axis = 0;
  SmallVector<int64_t> sizes;
  bool squeeze = false;
};

/// Imports one node through `binder`; emits a diagnostic on failure.
using HandlerFn = LogicalResult (*)(NodeBinder &binder);

/// One entry of the dispatch table: the handler and the first opset of the
/// default domain whose semantics it implements.
struct OpHandler {
  int64_t sinceVersion;
  HandlerFn fn;
};

/// Dispatch table keyed by op_type (default ONNX domain only).
using HandlerTable = llvm::StringMap<OpHandler>;

/// Registration, one function per op family (one file each).
void registerMathHandlers(HandlerTable &table);   // ONNXOpsMath.cpp
void registerNNHandlers(HandlerTable &table);     // ONNXOpsNN.cpp
void registerLossHandlers(HandlerTable &table);   // ONNXOpsLoss.cpp
void registerTensorHandlers(HandlerTable &table); // ONNXOpsTensor.cpp
void registerConvHandlers(HandlerTable &table);   // ONNXOpsConv.cpp
void registerShapeHandlers(HandlerTable &table);  // ONNXOpsShape.cpp
void registerSequenceHandlers(HandlerTable &table); // ONNXOpsSequence.cpp

/// Evaluates a node whose inputs are all compile-time constants to a
/// constant when its op has an evaluator (arithmetic, comparisons, logic,
/// unary math, Cast, Where, Min/Max, Trilu, GatherElements, Expand on
/// f32/i64/i32/bool; ConstantFolding.cpp). Returns nullopt when the node is
/// left to its handler.
std::optional<LogicalResult> foldConstantNode(NodeBinder &binder);

//===----------------------------------------------------------------------===//
// Type helpers (ONNXTypes.cpp)
//===----------------------------------------------------------------------===//

/// Maps an ONNX TensorProto data type to f32, i64 or i32; null otherwise.
Type convertElementType(int32_t dataType, MLIRContext *ctx);

/// Like convertElementType, and also maps BOOL to i1 (masks, constants) and
/// DOUBLE to f64 (constant subgraphs only: the folder computes in double).
Type convertConstantElementType(int32_t dataType, MLIRContext *ctx);

/// The ONNX spelling of a data type ("FLOAT", "INT64", ...).
std::string dataTypeName(int32_t dataType);

/// The name a node is reported and located by: its own name, else its
/// first output (the text format and some exporters leave names empty).
std::string displayName(const onnx::NodeProto &node);
/// The node's domain as errors print it ("ai.onnx" for the default one).
StringRef displayDomain(const onnx::NodeProto &node);

/// Prints a shape as "[4,10]" (scalars as "[]").
std::string shapeString(ArrayRef<int64_t> shape);

/// Reads the data of an f32/i64/i32/bool tensor (typed fields or raw_data)
/// into an attribute of `type`. Emits through `emitError` and fails on external
/// data, unsupported types or a wrong element count.
FailureOr<DenseElementsAttr>
readTensorData(const onnx::TensorProto &tensor, RankedTensorType type,
               function_ref<InFlightDiagnostic()> emitError);

/// The shape an ONNX type declares when every dim is a static value.
std::optional<SmallVector<int64_t>> staticShape(const onnx::TypeProto &type);

//===----------------------------------------------------------------------===//
// NodeBinder
//===----------------------------------------------------------------------===//

/// The view of one ONNX node a handler works through: operand lookup with
/// type checks, attributes with defaults, and result binding. Every method
/// that can fail emits "node 'n' (Op, domain 'd'): ..." and returns a
/// ParseResult, so handlers chain them with `||`.
class NodeBinder {
public:
  NodeBinder(GraphImporter &importer, const onnx::NodeProto &node);

  /// Location of the node: NameLoc(node name, model file).
  Location loc() const { return location; }
  OpBuilder &builder();
  /// Opset of the default domain the model imports.
  int64_t opset() const;
  MLIRContext *context();

  /// Starts an error naming op type, domain and node.
  InFlightDiagnostic emitError();

  StringRef opType() const { return node.op_type(); }
  unsigned numInputs() const { return node.input_size(); }
  unsigned numOutputs() const { return node.output_size(); }
  /// Whether input `i` is present (ONNX marks omitted inputs with "").
  bool hasInput(unsigned i) const;
  StringRef inputName(unsigned i) const { return node.input(i); }
  StringRef outputName(unsigned i) const { return node.output(i); }
  /// Whether output `i` is read by a later node or is a graph output.
  bool isOutputUsed(unsigned i) const;
  /// The name of the first node that reads output `i`; empty if none does.
  StringRef outputConsumer(unsigned i) const;
  /// Every (node, input index) that reads output `i`, in graph order.
  ArrayRef<std::pair<const onnx::NodeProto *, int>>
  outputReaders(unsigned i) const;
  /// Whether output `i` is one of the graph's outputs.
  bool isGraphOutput(unsigned i) const;
  /// Marks output `i` as a side output that is never computed (e.g. the
  /// running statistics of a training BatchNormalization): the loss is
  /// chosen among the other graph outputs.
  void markSideOutput(unsigned i);

  /// Binds required input `i` as a materialised tensor.
  ParseResult operand(Value &value, unsigned i);
  /// Like operand(), and requires element type f32.
  ParseResult f32Operand(Value &value, unsigned i);
  /// Binds required input `i`, possibly a pending 2-D transpose.
  ParseResult rawOperand(ONNXValue &value, unsigned i);
  /// Binds input `i` when present; leaves `value` null otherwise.
  ParseResult optionalF32Operand(Value &value, unsigned i);
  /// Reads input `i`, which must be a compile-time constant (a pd.constant,
  /// e.g. an integer initializer or a Constant node), as doubles.
  ParseResult constantOperand(SmallVectorImpl<double> &values, unsigned i);
  /// The value of input `i` when it is a compile-time constant (a
  /// pd.constant), a null attribute when it is not or is absent; never
  /// materialises a parameter. Fails (with a diagnostic) only when the
  /// name is undefined.
  FailureOr<DenseElementsAttr> constantInput(unsigned i);
  /// Declares input `i` as state this node updates (the running statistics
  /// of a training BatchNormalization): a pd.state initialised from the
  /// FLOAT initializer of that name, which no other node may read.
  FailureOr<StateOp> stateOperand(unsigned i);
  /// Normalises ONNX axes of a rank-`rank` tensor (negative counts from the
  /// back) into sorted unique axes; errors name an axis out of range.
  FailureOr<SmallVector<int64_t>> normalizeAxes(ArrayRef<int64_t> axes,
                                                int64_t rank);

  bool hasAttr(StringRef name) const { return findAttr(name) != nullptr; }
  ParseResult attr(int64_t &value, StringRef name, int64_t dflt);
  ParseResult attr(float &value, StringRef name, float dflt);
  ParseResult attr(std::string &value, StringRef name, StringRef dflt);
  ParseResult attr(SmallVectorImpl<int64_t> &value, StringRef name);
  /// Finds an attribute by name; null when absent.
  const onnx::AttributeProto *findAttr(StringRef name) const;

  /// Binds output `i` to `value`, checking it against a declared shape.
  LogicalResult setResult(unsigned i, ONNXValue value);
  LogicalResult setResult(unsigned i, Value value) {
    return setResult(i, ONNXValue{value, false});
  }
  /// Fails unless the node has exactly `n` outputs.
  ParseResult expectOutputs(unsigned n);
  /// The rng_id of a random op this node creates: random ops are numbered
  /// in graph order from 0.
  int64_t takeRngId();
  /// Binds output `i` to a sequence (SplitToSequence).
  void setSequenceResult(unsigned i, ONNXSequence sequence);
  /// The sequence input `i` names; null when it names no sequence.
  const ONNXSequence *sequenceOperand(unsigned i) const;

private:
  ParseResult attrOfType(const onnx::AttributeProto *&attr, StringRef name,
                         onnx::AttributeProto::AttributeType type);

  GraphImporter &importer;
  const onnx::NodeProto &node;
  Location location;
};

/// Creates `op` of broadcast-binary type from two f32 operands, computing
/// the numpy broadcast result shape; errors name both tensors.
FailureOr<Value> buildBroadcastBinary(NodeBinder &b, StringRef opName,
                                      Value lhs, Value rhs, StringRef lhsName,
                                      StringRef rhsName);

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

/// Imports the main graph of one ONNX model into a pd module.
class GraphImporter {
public:
  GraphImporter(MLIRContext &ctx, const onnx::ModelProto &model,
                StringRef modelPath, const ImportOptions &opts);

  /// Builds and verifies the module; emits a diagnostic on failure.
  FailureOr<OwningOpRef<ModuleOp>> run();

  /// Resolves an ONNX value name, materialising initializers lazily at the
  /// builder's insertion point with location `loc` (the first user). Fails
  /// (through `emitError`) when the name is undefined or its constant data
  /// cannot be read.
  FailureOr<ONNXValue> lookup(StringRef name, Location loc,
                              function_ref<InFlightDiagnostic()> emitError);
  /// Binds an ONNX value name.
  void define(StringRef name, ONNXValue value) { values[name] = value; }
  /// Declares initializer `name` as a pd.state updated by the node of
  /// `binder` (NodeBinder::stateOperand).
  FailureOr<StateOp> declareState(StringRef name, NodeBinder &binder);
  /// Whether `name` is a float initializer imported as a parameter.
  bool isParam(StringRef name) const { return params.count(name) != 0; }

  OpBuilder builder;
  int64_t opset = 0;
  ImportOptions options;
  /// ONNX names read by some node or returned by the graph.
  llvm::StringSet<> usedNames;
  /// Declared types (value_info and graph outputs) by value name.
  llvm::StringMap<const onnx::TypeProto *> declaredTypes;
  /// The display name of the first node reading each ONNX value.
  llvm::StringMap<std::string> consumers;
  /// Every (node, input index) reading each ONNX value, in graph order.
  llvm::StringMap<SmallVector<std::pair<const onnx::NodeProto *, int>>> readers;
  /// Names of the graph outputs.
  llvm::StringSet<> graphOutputs;
  /// Sequences bound by SplitToSequence, by value name.
  llvm::StringMap<ONNXSequence> sequences;
  /// Outputs marked by NodeBinder::markSideOutput.
  llvm::StringSet<> sideOutputs;
  /// The rng_id of the next random op (NodeBinder::takeRngId).
  int64_t nextRngId = 0;

  /// The model-file location every node location nests.
  Location fileLoc();

private:
  LogicalResult importOpsets();
  LogicalResult importInitializers(ModuleOp module, func::FuncOp main);
  void importInitializerCopies(ModuleOp module, func::FuncOp main);
  void createParam(SymbolTable &symbols, func::FuncOp main, StringRef name,
                   const onnx::TensorProto &init, StringRef initFrom);
  bool isBuffer(StringRef name);
  bool isExportedBuffer(StringRef name);
  bool isScalarConstant(const onnx::TensorProto &init);
  void detectFoldedExport();
  void warnAboutFoldedExport();
  LogicalResult importInputs(func::FuncOp main);
  FailureOr<Type> importInputType(const onnx::ValueInfoProto &input);
  LogicalResult importNode(const onnx::NodeProto &node);
  LogicalResult importReturn(func::FuncOp main);
  void collectUsesAndDeclarations();

  MLIRContext &ctx;
  const onnx::ModelProto &model;
  std::string modelPath;
  HandlerTable handlers;
  llvm::StringMap<ONNXValue> values;
  llvm::StringMap<ParamOp> params;
  llvm::StringMap<StateOp> states;
  llvm::StringMap<const onnx::TensorProto *> constantInitializers;
  /// Float initializers by name (the sources of eval-mode copies).
  llvm::StringMap<const onnx::TensorProto *> floatInitializers;
  /// Outputs of Identity nodes that copy an initializer (eval-mode
  /// deduplication): each is a parameter or constant of its own, and the
  /// Identity node itself imports to nothing.
  llvm::StringSet<> initializerCopies;
  /// The first val_N initializer of a PyTorch 2 export folded by its ONNX
  /// optimizer; empty for other models (detectFoldedExport).
  std::string foldedBy;
};

} // namespace mlir::pd::detail

#endif // PD_LIB_IMPORT_IMPORTERIMPL_H
