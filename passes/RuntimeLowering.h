//===- RuntimeLowering.h - Lowering pd ops to pdrt_* calls ------*- C++ -*-===//
//
// The builder pd-lower-to-runtime uses to turn one stage function into an
// LLVM function of runtime calls. Core ops are lowered in LowerToRuntime.cpp;
// each op family has its own file (LowerTensorOps.cpp, LowerNNOps.cpp,
// LowerConvOps.cpp) with a hook that lowers the ops it knows.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_RUNTIMELOWERING_H
#define PD_PASSES_RUNTIMELOWERING_H

#include "dialects/PD/IR/PDOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "pdrt/pdrt_codes.h"

#include <optional>

namespace mlir::pd {

/// Builds the LLVM function of one stage function, op by op.
class StageLowering {
public:
  StageLowering(ModuleOp module, OpBuilder &b) : module(module), b(b) {}

  /// Lowers `fn` into a new `llvm.func @name` of the C ABI in pdrt.h.
  LogicalResult lower(func::FuncOp fn, StringRef name);

  /// The runtime context argument.
  Value ctx() const { return params[0]; }
  /// The address of a tensor (its region base plus its pd.buffer offset),
  /// or null if it has no buffer.
  Value address(Value v);
  /// The base of region `weights`, `grads`, `stash`, `workspace` or `comm`.
  Value regionBase(StringRef region);
  /// LLVM constants.
  Value i64(int64_t v);
  Value i32(int64_t v);
  Value f32(double v);
  /// A GEP index of `bytes` (constant when it fits in 32 bits).
  LLVM::GEPArg byteOffset(int64_t bytes);
  /// The address of an internal constant i64 array (a kernel descriptor).
  Value descriptor(ArrayRef<int64_t> words);
  /// Calls runtime function `callee` (declared on first use; returns void).
  void call(StringRef callee, ValueRange args);
  ModuleOp getModule() { return module; }
  OpBuilder &getBuilder() { return b; }

private:
  LogicalResult lowerOp(Operation *op);
  Value constantGlobal(ConstantOp op);

  ModuleOp module;
  OpBuilder &b;
  Location loc = b.getUnknownLoc();
  /// ctx, weights, grads, stash, workspace, comm.
  SmallVector<Value> params;
  DenseMap<Value, Value> addresses;
  /// Numbers the internal globals.
  int64_t globalCounter = 0;
};

/// Row-major shape and element count of a ranked tensor value.
ArrayRef<int64_t> shapeOf(Value v);
int64_t numel(Value v);

/// A broadcast descriptor [rank, dims..., strides of each operand...] for
/// operands of `shapes` broadcast to `dims` (rank-0 shapes become [1]).
SmallVector<int64_t> makeDescriptor(ArrayRef<int64_t> dims,
                                    ArrayRef<ArrayRef<int64_t>> shapes);

/// Family hooks: lower `op` if the family owns it (nullopt otherwise).
std::optional<LogicalResult> lowerTensorOp(StageLowering &L, Operation *op);
std::optional<LogicalResult> lowerNNOp(StageLowering &L, Operation *op);
std::optional<LogicalResult> lowerConvOp(StageLowering &L, Operation *op);

} // namespace mlir::pd

#endif // PD_PASSES_RUNTIMELOWERING_H
