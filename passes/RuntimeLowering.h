//===- RuntimeLowering.h - pd ops to runtime calls --------------*- C++ -*-===//
//
// The conversion behind pd-lower-to-runtime: a TypeConverter that turns
// every tensor into the pointer of its buffer, one OpConversionPattern per
// pd op that emits its runtime call(s), and the RuntimeTarget that decides
// what the calls are named and where constant data lives. Each op family
// has its own pattern file (LowerStageOps.cpp, LowerNNOps.cpp,
// LowerTensorOps.cpp, LowerConvOps.cpp) with a populate function.
//
// Adding a target (e.g. CUDA): derive RuntimeTarget (entry points of its
// runtime library, constants placed where its kernels read them) and run
// the same patterns with it; the patterns never name a symbol themselves.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_RUNTIMELOWERING_H
#define PD_PASSES_RUNTIMELOWERING_H

#include "dialects/PD/IR/PDOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"
#include "passes/RuntimeABI.h"
#include "pdrt/pdrt_codes.h"

#include <functional>
#include <memory>

namespace mlir::pd {

//===----------------------------------------------------------------------===//
// Target
//===----------------------------------------------------------------------===//

/// What differs between lowering targets.
class RuntimeTarget {
public:
  virtual ~RuntimeTarget();
  /// The symbol compiled code calls for `fn`.
  virtual StringRef getSymbol(RuntimeFn fn) const = 0;
  /// The address of read-only data `value` (flattened to rank 1) that
  /// kernels read: a constant tensor or a kernel descriptor. `prefix` names
  /// its kind.
  virtual Value getConstantData(OpBuilder &b, Location loc, ModuleOp module,
                                DenseElementsAttr value, StringRef prefix) = 0;
};

/// The CPU target: pdrt_* kernels of runtime/include/pdrt, constant data as
/// internal globals of the stage object.
std::unique_ptr<RuntimeTarget> createCpuRuntimeTarget();

/// What the patterns of one lowering share: the target, and the layout of
/// the stage being lowered that its functions carried (read before they are
/// converted).
struct StageLowering {
  RuntimeTarget &target;
  /// The forward function's `pd.state` ({name = offset in the state
  /// region}); null if the stage has no state.
  DictionaryAttr stateLayout;
  /// Every runtime entry point's declaration, indexed by RuntimeFn
  /// (declareRuntimeFunctions): a call finds its callee here, not by a
  /// module lookup per call, which was quadratic in the stage's ops.
  SmallVector<LLVM::LLVMFuncOp> runtimeDecls;
};

/// Declares every runtime entry point of `target` at the end of `module`
/// (reusing a declaration already there), before the conversion starts, so
/// that no pattern creates one and none is lost to a rolled-back pattern.
SmallVector<LLVM::LLVMFuncOp> declareRuntimeFunctions(ModuleOp module,
                                                      RuntimeTarget &target);

/// Erases the declarations of `decls` that no call names.
void eraseUncalledDeclarations(ModuleOp module,
                               ArrayRef<LLVM::LLVMFuncOp> decls);

/// Tensors become the opaque pointer to their buffer.
class RuntimeTypeConverter : public TypeConverter {
public:
  explicit RuntimeTypeConverter(MLIRContext *context);
};

//===----------------------------------------------------------------------===//
// Building one op's calls
//===----------------------------------------------------------------------===//

/// Emits the runtime calls of one op being converted: operand addresses are
/// the converted values, result addresses the region base of the enclosing
/// stage function plus the result's #pd.buffer offset.
class RuntimeCallBuilder {
public:
  RuntimeCallBuilder(Operation *op, ConversionPatternRewriter &rewriter,
                     StageLowering &stage);

  /// The runtime context (the stage function's first argument).
  Value ctx();
  /// The address of `v`: an operand's converted pointer, or for a result of
  /// the op the base of its region plus its offset (null if it has none).
  Value address(Value v);
  /// The base pointer of arena region `region` (not `state`, whose base
  /// the runtime returns: pdrt_state_region).
  Value regionBase(ArenaRegion region);
  /// `ptr` advanced by `bytes`.
  Value offset(Value ptr, int64_t bytes);
  /// A null pointer (an absent optional operand).
  Value null();
  Value i64(int64_t v);
  Value i32(int64_t v);
  Value f32(double v);
  /// The address of constant i64 words (a kernel descriptor).
  Value descriptor(ArrayRef<int64_t> words);
  /// Calls `fn` with `args` (checked against pdrt_abi.def); returns its
  /// result, or null for a void function.
  Value call(RuntimeFn fn, ValueRange args);
  /// The addresses replacing the op's results.
  SmallVector<Value> resultAddresses();

  Operation *getOp() const { return op; }
  ConversionPatternRewriter &getRewriter() const { return rewriter; }
  StageLowering &getStage() const { return stage; }

private:
  Operation *op;
  ConversionPatternRewriter &rewriter;
  StageLowering &stage;
  Location loc;
  LLVM::LLVMFuncOp function;
  DenseMap<Value, Value> results;
};

/// Lowers one op of type OpTy with a function of (op, builder): the
/// function emits the calls, the pattern replaces the op's results by their
/// addresses (or erases an op without results).
template <typename OpTy>
class RuntimeCallPattern : public OpConversionPattern<OpTy> {
public:
  using LowerFn = std::function<LogicalResult(OpTy, RuntimeCallBuilder &)>;

  RuntimeCallPattern(const TypeConverter &converter, MLIRContext *context,
                     StageLowering &stage, LowerFn lower)
      : OpConversionPattern<OpTy>(converter, context), stage(stage),
        lower(std::move(lower)) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCallBuilder builder(op, rewriter, stage);
    if (failed(lower(op, builder)))
      return failure();
    if (op->getNumResults() == 0)
      rewriter.eraseOp(op);
    else
      rewriter.replaceOp(op, builder.resultAddresses());
    return success();
  }

private:
  StageLowering &stage;
  LowerFn lower;
};

/// The pattern set of a lowering, with the type converter and stage every
/// pattern shares.
class RuntimePatterns {
public:
  RuntimePatterns(RewritePatternSet &set, const TypeConverter &converter,
                  StageLowering &stage)
      : set(set), converter(converter), stage(stage) {}

  /// Adds a RuntimeCallPattern for each of OpTys with lowering `fn`
  /// (callable as fn(OpTy, RuntimeCallBuilder &) for each).
  template <typename... OpTys, typename Fn>
  void add(Fn fn) {
    (set.add(std::make_unique<RuntimeCallPattern<OpTys>>(
         converter, set.getContext(), stage,
         [fn](OpTys op, RuntimeCallBuilder &b) { return fn(op, b); })),
     ...);
  }

  /// Adds a hand-written pattern constructed from (converter, context,
  /// stage).
  template <typename PatternTy>
  void addPattern() {
    set.add(std::make_unique<PatternTy>(converter, set.getContext(), stage));
  }

private:
  RewritePatternSet &set;
  const TypeConverter &converter;
  StageLowering &stage;
};

/// `ptr` + `bytes` as an llvm.getelementptr over i8. The LLVM dialect keeps
/// a constant GEP index in 29 bits (LLVM::kGEPConstantBitWidth): offsets
/// beyond +-256 MiB, which the stash and weight regions of a 500M-parameter
/// model reach, go in as i64 constant values instead.
Value byteOffset(OpBuilder &builder, Location loc, Value ptr, int64_t bytes);

/// Stage structure: functions, returns, constants, parameters and state,
/// inputs, send/recv, gradient seeds, loss reports and accumulation.
void populateStageRuntimePatterns(RuntimePatterns &patterns);
/// Math: matmuls, elementwise, reductions, unary math, GELU, softmax, norms,
/// dropout and the losses.
void populateNNRuntimePatterns(RuntimePatterns &patterns);
/// Tensor and shape ops: copies, permutes, slices, gathers, compares, casts.
void populateTensorRuntimePatterns(RuntimePatterns &patterns);
/// Convolution, batch norm, pooling, padding.
void populateConvRuntimePatterns(RuntimePatterns &patterns);

//===----------------------------------------------------------------------===//
// Shapes and descriptors
//===----------------------------------------------------------------------===//

/// Element count of a ranked tensor value (its shape: PDOps.h shapeOf).
int64_t numel(Value v);

/// A broadcast descriptor [rank, dims..., strides of each operand...] for
/// operands of `shapes` broadcast to `dims` (rank-0 shapes become [1]).
SmallVector<int64_t> makeDescriptor(ArrayRef<int64_t> dims,
                                    ArrayRef<ArrayRef<int64_t>> shapes);

} // namespace mlir::pd

#endif // PD_PASSES_RUNTIMELOWERING_H
