//===- FoldSlicesIntoMatMul.cpp - Q, K, V read in place from QKV -*- C++ -*-===//
//
// pd-fold-slices-into-matmul: attention with a fused QKV projection splits
// its output into Q, K and V (ONNX Split or Slice) and reshapes each into
// heads before the batched GEMMs read them:
//
//   %q  = pd.slice %qkv {starts = [0, 0, 0]} : 2x8x192 -> 2x8x64
//   %qh = pd.reshape %q : 2x8x64 -> 2x8x4x16
//   %s  = pd.batch_matmul %qh, %kh {lhs_perm = [0, 2, 1, 3], ...}
//
// Each slice copies a third of the projection out (in the forward, and it
// is what the backward's GEMMs read again). When a slice takes a whole
// part of one axis (unit steps, every other axis whole, its size dividing
// the axis and its start) the GEMM can read the part in place: the sliced
// axis of %qkv is split into (parts, size) by a reshape (a view) and the
// operand becomes that tensor with the part's index selected:
//
//   %qkv5 = pd.reshape %qkv : 2x8x192 -> 2x8x3x4x16
//   %s    = pd.batch_matmul %qkv5, %qkv5 {lhs_select = [2, 0], lhs_perm = [0, 2, 1, 3], rhs_select = [2, 1], ...}
//
// The reshape after the slice may split the dims from the sliced axis on
// (heads); the dims before it stay. Runs after pd-autodiff and
// pd-fold-transposes-into-matmul, so the forward's and the backward's
// GEMMs fold alike and their perms are already set; a slice whose every
// user folded disappears, with its copy and its buffer (the projection is
// then kept for the backward instead of Q, K and V: the same bytes).
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/GradTags.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FOLDSLICESINTOMATMULPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FoldSlicesIntoMatMulPass
    : public mlir::pd::impl::FoldSlicesIntoMatMulPassBase<
          FoldSlicesIntoMatMulPass> {
  using FoldSlicesIntoMatMulPassBase::FoldSlicesIntoMatMulPassBase;
  void runOnOperation() override;
};

/// An operand read as a part of a larger tensor: `stored` (the sliced
/// tensor's shape with the sliced axis split into [parts, the operand's
/// dims from there on]) and the part's [axis, index].
struct PartOf {
  SmallVector<int64_t> stored;
  SmallVector<int64_t, 2> select;
};

/// How reshape(slice(x)) (or slice(x)) of shape `operand` reads x, if it is
/// one whole part of one axis of x.
std::optional<PartOf> partOf(SliceOp slice, ArrayRef<int64_t> operand) {
  auto full = cast<RankedTensorType>(slice.getInput().getType()).getShape();
  auto part = cast<RankedTensorType>(slice.getType()).getShape();
  int64_t axis = -1;
  for (size_t i = 0; i < full.size(); ++i) {
    if (slice.getSteps()[i] != 1)
      return std::nullopt;
    if (part[i] == full[i] && slice.getStarts()[i] == 0)
      continue;
    if (axis != -1)
      return std::nullopt;
    axis = i;
  }
  if (axis == -1 || part[axis] == 0 || full[axis] % part[axis] != 0 ||
      slice.getStarts()[axis] % part[axis] != 0)
    return std::nullopt;
  if ((int64_t)operand.size() < axis ||
      operand.take_front(axis) != part.take_front(axis))
    return std::nullopt;
  PartOf p;
  p.stored.assign(part.begin(), part.begin() + axis);
  p.stored.push_back(full[axis] / part[axis]);
  p.stored.append(operand.begin() + axis, operand.end());
  p.select = {axis, slice.getStarts()[axis] / part[axis]};
  return p;
}

/// Folds slice (and the reshape into heads after it) defining an operand
/// into the operand's select.
struct FoldOperandSlice : public OpRewritePattern<BatchMatMulOp> {
  FoldOperandSlice(MLIRContext *ctx, Absorbed &absorbed, ForwardViews &views)
      : OpRewritePattern(ctx), absorbed(absorbed), views(views) {}
  Absorbed &absorbed;
  ForwardViews &views;

  LogicalResult matchAndRewrite(BatchMatMulOp mm,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    for (bool isLhs : {true, false}) {
      Value operand = isLhs ? mm.getLhs() : mm.getRhs();
      if (isLhs ? mm.getLhsSelect() : mm.getRhsSelect())
        continue;
      auto reshape = operand.getDefiningOp<ReshapeOp>();
      auto slice = (reshape ? reshape.getInput() : operand)
                       .getDefiningOp<SliceOp>();
      if (!slice)
        continue;
      auto shape = cast<RankedTensorType>(operand.getType()).getShape();
      std::optional<PartOf> part = partOf(slice, shape);
      bool flag = isLhs ? mm.getTransposeLhs() : mm.getTransposeRhs();
      auto perm = isLhs ? mm.getLhsPerm() : mm.getRhsPerm();
      if (!part || !BatchMatMulOp::stridedOperand(part->stored, perm, flag,
                                                  ArrayRef(part->select)))
        continue;
      // The sliced tensor with the sliced axis split into parts, made in
      // the slice's phase.
      Value x = slice.getInput();
      Value stored = views.get<ReshapeOp>(
          rewriter, slice, x,
          cast<RankedTensorType>(x.getType()).clone(part->stored), Attribute());
      if (auto into = forwardIdOf(mm)) {
        for (Operation *gone : {slice.getOperation(), reshape.getOperation()})
          if (auto id = gone ? getContractInt<PDDialect::OpIdAttrHelper>(gone)
                             : std::nullopt)
            absorbed.try_emplace(*id, *into);
      }
      rewriter.modifyOpInPlace(mm, [&] {
        if (isLhs) {
          mm.getLhsMutable().assign(stored);
          mm.setLhsSelect(part->select);
        } else {
          mm.getRhsMutable().assign(stored);
          mm.setRhsSelect(part->select);
        }
      });
      changed = true;
    }
    return success(changed);
  }
};

} // namespace

void FoldSlicesIntoMatMulPass::runOnOperation() {
  Absorbed absorbed;
  ForwardViews views(getOperation());
  RewritePatternSet patterns(&getContext());
  patterns.add<FoldOperandSlice>(&getContext(), absorbed, views);
  if (failed(foldAndRetag(getOperation(), std::move(patterns), absorbed)))
    signalPassFailure();
}
