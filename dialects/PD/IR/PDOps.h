//===- PDOps.h - Ops, attributes and interfaces of pd -----------*- C++ -*-===//
//
// The pd ops (generated from PDOps.td), their interfaces and the shape
// helpers the verifiers, gradient rules and importer share.
//
//===----------------------------------------------------------------------===//

#ifndef PD_DIALECT_PD_IR_PDOPS_H
#define PD_DIALECT_PD_IR_PDOPS_H

#include "dialects/PD/IR/PDDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::pd {

/// The shape of a ranked tensor value.
ArrayRef<int64_t> shapeOf(Value v);

/// Returns the size in bytes of a statically shaped tensor type (0 for
/// anything else).
int64_t getTensorBytes(Type type);

/// The bytes of one element of a ranked tensor type (a bool takes one).
int64_t getElementBytes(Type tensorType);

/// Computes the numpy broadcast of two shapes; fails if they are not
/// broadcast-compatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);

} // namespace mlir::pd

#include "dialects/PD/IR/PDInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/PD/IR/PDOps.h.inc"

namespace mlir::pd {

/// The buffer pd-allocate-buffers gave `v`: the `pd.buffer` argument
/// attribute of a function argument, the `pd.buffer` of a single-result op,
/// or entry i of a multi-result op's `pd.buffers` array. Null before
/// allocation.
BufferAttr getBuffer(Value v);

/// Records `buffer` as the home of `v` (see getBuffer).
void setBuffer(Value v, BufferAttr buffer);

/// The value whose buffer an op's result may share when its kernel writes
/// that result over `operand` (pd-allocate-buffers and the planner's stage
/// model): `operand`, or the start of the reshape chain it is, when every
/// value of the chain has one reader (the op, or the next reshape) and the
/// start is computed by an op of this function (not a constant, a
/// parameter, an input or a received tensor); null otherwise.
Value getInPlaceOperandRoot(Value operand);

/// Whether `op` writes its results where pd-allocate-buffers puts them, so
/// that a result can be a part of a concat's result: any op but a view
/// (reshape, slice), a concat, a constant or a parameter read.
bool canWriteContiguousPart(Operation *op);

/// The value that can write the concat input `input` at its place in the
/// concat's result: `input`, or the start of the reshape chain it is, when
/// every value of the chain has one reader and canWriteContiguousPart holds
/// for the start's op (a received tensor or an input counts); null
/// otherwise (a function argument, or a value read elsewhere too).
Value getContiguousPartRoot(Value input);

/// The operand whose workspace slot `op`'s first result may take when `op`
/// is that operand's last reader: its kernel reads each element (or row)
/// of the operand before it writes the result's, and the two are of one
/// type (pd.gelu_grad, pd.swiglu_grad, pd.geglu_grad, pd.masked_softmax_grad
/// and pd.layer_norm_grad over their incoming gradient); null for other ops.
/// pd-allocate-buffers and the planner's stage model apply it.
Value getOverwritableOperand(Operation *op);

/// Whether `op` runs no kernel in a stage: a parameter read, a constant
/// (data of the stage object), a profile mark, an interleaved group's
/// bounds, or a reshape or slice that pd-allocate-buffers made a view.
bool runsNoKernel(Operation *op);

/// An integer contract attribute (pd.op_id, pd.grad_of, pd.stage,
/// pd.grad_offset) of `op` through its generated helper, e.g.
/// `getContractInt<PDDialect::StageAttrHelper>(op)`; nullopt if absent.
template <typename Helper>
std::optional<int64_t> getContractInt(Operation *op) {
  if (IntegerAttr attr = Helper(op->getContext()).getAttr(op))
    return attr.getInt();
  return std::nullopt;
}

/// Sets an integer contract attribute of `op` (an i64 IntegerAttr).
template <typename Helper>
void setContractInt(Operation *op, int64_t value) {
  MLIRContext *ctx = op->getContext();
  Helper(ctx).setAttr(op, IntegerAttr::get(IntegerType::get(ctx, 64), value));
}

/// The stage function of (`stage`, `phase`) in `module`: the func.func
/// pd-outline-stages marked with `pd.stage` and `pd.phase`. Null if none.
func::FuncOp lookupStageFunction(ModuleOp module, int64_t stage, Phase phase);

/// Marks `fn` as the stage function of (`stage`, `phase`).
void markStageFunction(func::FuncOp fn, int64_t stage, Phase phase);

} // namespace mlir::pd

#endif // PD_DIALECT_PD_IR_PDOPS_H
