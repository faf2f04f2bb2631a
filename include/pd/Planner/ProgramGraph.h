//===- ProgramGraph.h - The training function as the planner sees it -*- C++ -*-===//
//
// The differentiated training function (@main after pd-autodiff) reduced to
// flat arrays: its ops in program order with the facts the stage passes
// act on (phase, the forward op each one is or differentiates, purity,
// parameters and state it touches, its cost in seconds), its values with
// their bytes, definitions and users, and the op chain the partition cuts.
// Built once per model (and microbatch size); the memory and time model
// (StageModel.h) evaluates any split of it without touching MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_PROGRAMGRAPH_H
#define PD_PLANNER_PROGRAMGRAPH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "pd/Planner/Partition.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::pd {

struct ProgramGraph {
  enum class OpKind : uint8_t { Compute, ParamRef, Constant, AccumulateGrad };

  struct Op {
    OpKind kind = OpKind::Compute;
    bool backward = false;    ///< A gradient op (pd.grad_of).
    bool pure = false;        ///< Free of memory effects.
    bool recomputable = false; ///< A recomputing backward may rerun it.
    bool view = false;        ///< A reshape: a view of its input's buffer.
    /// An op computing a gradient straight into its accumulator (that
    /// accumulate_grad's index; AccumulateGradOp::getInPlaceProducer):
    /// pd-accumulate-in-place homes it in the gradient accumulator.
    int32_t accumulateUser = -1;
    /// A sum_to that is a bias gradient a GELU or layer-norm gradient can
    /// compute (that op's index; SumToOp::getSummedProducer):
    /// pd-fuse-bias-gradients folds it into that op when both are on one
    /// stage, which then costs `fusedSeconds` for the two.
    int32_t summedProducer = -1;
    double fusedSeconds = 0;
    /// The result that, stashed, may share its stash slot with operand 0
    /// (the start of its reshape chain), as its kernel writes it over that
    /// operand: 1 for a softmax_cross_entropy_with_grad's gradient over its
    /// logits (getInPlaceLogits), 0 for a masked_softmax over its scores
    /// (getInPlaceInput); -1 otherwise.
    int8_t inPlaceResult = -1;
    /// A pd.concat whose inputs batched GEMMs can write in place
    /// (ConcatOp::getInPlaceParts): pd-concat-in-place drops its copies
    /// when its result stays in the workspace and each input's chain is
    /// computed in the same stage function.
    bool inPlaceParts = false;
    /// A pd.concat whose inputs are contiguous runs of its result
    /// (ConcatOp::hasContiguousInputs): pd-concat-in-place has each
    /// input's producer write it there when every input has one in the
    /// stage function (partWriter, read only by the concat).
    bool contiguousInputs = false;
    /// Whether its results can be parts of such a concat
    /// (canWriteContiguousPart).
    bool partWriter = false;
    /// A pd.slice of one contiguous run of its input
    /// (SliceOp::getContiguousOffset): a view of it at an offset, which
    /// is 0 when `windowAtStart`.
    bool window = false;
    bool windowAtStart = false;
    /// The operand its first result may be written over when the operand
    /// dies at it (getOverwritableOperand); -1: none.
    int8_t overwritableOperand = -1;
    int32_t owner = -1;    ///< The forward op it is or differentiates.
    int32_t chainPos = -1; ///< Position in `chain` (forward compute ops).
    int32_t param = -1;    ///< Parameter a param_ref/accumulate_grad names.
    llvm::StringRef name;  ///< The op's name (for errors).
    bool costed = false;   ///< Implements PD_CostOpInterface.
    double flops = 0, bytes = 0; ///< Its FLOPs and bytes moved.
    double measured = -1;  ///< Its measured seconds (pd.seconds), if any.
    double seconds = 0;    ///< Its time on the device priced for.
    uint32_t operandBegin = 0, operandEnd = 0; ///< Into `operands`.
    uint32_t resultBegin = 0, resultEnd = 0;   ///< Value ids.
    uint32_t stateBegin = 0, stateEnd = 0;     ///< Into `stateRefs`.
    /// A view (reshape, contiguous slice) of a parameter read: a source
    /// in the weights, as the parameter is, that runs no kernel.
    bool weightView = false;
    /// A parameter read, a constant or a view of a parameter read: cloned
    /// into every stage function that reads it (pd-outline-stages), never
    /// stashed or sent.
    bool isSource() const {
      return kind == OpKind::ParamRef || kind == OpKind::Constant || weightView;
    }
  };

  struct Value {
    int64_t bytes = 0;
    int32_t def = -1; ///< Defining op; -1 for a graph input.
    int32_t arg = -1; ///< Graph input number, for a graph input.
    uint32_t userBegin = 0, userEnd = 0; ///< Into `users` (no return).
  };

  std::vector<Op> ops;
  std::vector<Value> values;
  std::vector<int32_t> operands, users, stateRefs;
  std::vector<int64_t> paramBytes, stateBytes;
  std::vector<std::string> paramNames;
  /// The parameters' bytes, each aligned as in the arena, counted once.
  int64_t alignedParamBytes() const;
  int32_t loss = -1; ///< The loss value (the function's first result).
  /// The forward compute ops (pd.op_id, with operands) in program order,
  /// each with the cost of itself and its gradient ops.
  OpChain chain;

  /// Reads `main` (after pd-autodiff). Fails with an error at the
  /// offending op if an op is neither forward nor gradient.
  static FailureOr<ProgramGraph> build(func::FuncOp main);

  /// Sets each op's seconds to `seconds(op)` and the chain's costs.
  void price(function_ref<double(const Op &)> seconds);

  /// The graph of the same model at microbatch size `target`, from its
  /// graphs at two other sizes: every value's bytes and every op's FLOPs
  /// and bytes are affine in the microbatch size. None if the two graphs
  /// differ in structure or a value is neither batch-independent nor
  /// proportional to the batch (a [b, b] similarity matrix): then only
  /// importing the model at `target` tells. Unpriced.
  static std::optional<ProgramGraph> atMicrobatch(const ProgramGraph &a,
                                                  int64_t sizeA,
                                                  const ProgramGraph &b,
                                                  int64_t sizeB,
                                                  int64_t target);

  /// Chain positions of `cuts` (the pd.op_id starting each later stage).
  std::vector<int64_t> cutPositions(ArrayRef<int64_t> cuts) const;

  llvm::ArrayRef<int32_t> operandsOf(const Op &op) const {
    return llvm::ArrayRef(operands).slice(op.operandBegin,
                                          op.operandEnd - op.operandBegin);
  }
  llvm::ArrayRef<int32_t> usersOf(int32_t value) const {
    const Value &v = values[value];
    return llvm::ArrayRef(users).slice(v.userBegin, v.userEnd - v.userBegin);
  }
};

} // namespace mlir::pd

#endif // PD_PLANNER_PROGRAMGRAPH_H
