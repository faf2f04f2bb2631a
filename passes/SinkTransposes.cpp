//===- SinkTransposes.cpp - Transposes moved toward their GEMMs -*- C++ -*-===//
//
// pd-sink-transposes: attention's head transpose ([B, T, H, D] ->
// [B, H, T, D]) folds into the batched GEMM that reads it
// (pd-fold-transposes-into-matmul), unless an op stands between them. This
// pass moves a transpose below the ops that commute with it:
//
//   slice(transpose(x, perm))  -> transpose(slice(x), perm)
//       for every slice of a transpose read only by slices (GPT-NeoX's
//       whole [B, T, H, 3 D] QKV projection, transposed before Q, K and V
//       are sliced off): the whole-tensor copy disappears;
//   rotary(transpose(y), cos, sin) -> transpose(rotary(y, cos', sin'))
//       when the tables reshape to y's layout ([1, 1, T, D] over
//       [B, H, T, D] is [1, T, 1, D] over [B, T, H, D]).
//
// Both directions of the step follow: pd-autodiff differentiates the sunk
// form, whose gradients' transposes fold the same way. Runs after
// pd-fuse-rotary-embedding (the rotations formed while their slices still
// read the tensor the export rotated) and before pd-autodiff. Bit for bit:
// only the order of the copies changes.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pd {
#define GEN_PASS_DEF_SINKTRANSPOSESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct SinkTransposesPass
    : public mlir::pd::impl::SinkTransposesPassBase<SinkTransposesPass> {
  using SinkTransposesPassBase::SinkTransposesPassBase;
  void runOnOperation() override;
};

/// The shape of `table` (broadcast to a rank of `perm`'s size, the last
/// axis last) in the layout before a transpose by `perm`, if it is a
/// reshape of the table: its non-unit dims keep their order.
std::optional<SmallVector<int64_t>>
tableBeforeTranspose(ArrayRef<int64_t> table, ArrayRef<int64_t> perm) {
  int64_t rank = perm.size(), offset = rank - table.size();
  if (offset < 0 || perm.back() != rank - 1)
    return std::nullopt;
  SmallVector<int64_t> before(rank, 1);
  int64_t lastPos = -1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = d < offset ? 1 : table[d - offset];
    before[perm[d]] = size;
    if (size == 1)
      continue;
    if (perm[d] < lastPos)
      return std::nullopt;
    lastPos = perm[d];
  }
  return before;
}

/// rotary(transpose(y)) -> transpose(rotary(y)) with the tables reshaped to
/// y's layout, anchored on the rotation.
struct SinkTransposeBelowRotary : public OpRewritePattern<RotaryOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RotaryOp rotary,
                                PatternRewriter &rewriter) const override {
    auto transpose = rotary.getInput().getDefiningOp<TransposeOp>();
    if (!transpose || !transpose->hasOneUse())
      return rewriter.notifyMatchFailure(rotary,
                                         "input is no one-use transpose");
    Value y = transpose.getInput();
    std::optional<SmallVector<int64_t>> before =
        tableBeforeTranspose(shapeOf(rotary.getCos()), transpose.getPerm());
    if (!before || !RotaryOp::tableLayout(shapeOf(y), *before))
      return rewriter.notifyMatchFailure(rotary, "tables do not follow");
    Location loc = rotary.getLoc();
    auto tableType = RankedTensorType::get(
        *before,
        cast<RankedTensorType>(rotary.getCos().getType()).getElementType());
    Value cos = rewriter.create<ReshapeOp>(loc, tableType, rotary.getCos());
    Value sin = rewriter.create<ReshapeOp>(loc, tableType, rotary.getSin());
    Value rotated = rewriter.create<RotaryOp>(loc, y.getType(), y, cos, sin,
                                              rotary.getAdjoint());
    rewriter.replaceOpWithNewOp<TransposeOp>(rotary, rotary.getType(), rotated,
                                             transpose.getPermAttr());
    return success();
  }
};

/// slice(transpose(x, perm)) -> transpose(slice(x), perm) for every slice
/// of a transpose read only by slices, anchored on each slice.
struct SinkTransposeBelowSlice : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto transpose = slice.getInput().getDefiningOp<TransposeOp>();
    if (!transpose || !llvm::all_of(transpose->getUsers(), [](Operation *op) {
          return isa<SliceOp>(op);
        }))
      return rewriter.notifyMatchFailure(slice, "input is no transpose read by "
                                                "slices only");
    // The slice's dim d is x's dim perm[d].
    ArrayRef<int64_t> perm = transpose.getPerm(), out = shapeOf(slice);
    size_t rank = perm.size();
    SmallVector<int64_t> starts(rank), steps(rank), shape(rank);
    for (size_t d = 0; d < rank; ++d) {
      starts[perm[d]] = slice.getStarts()[d];
      steps[perm[d]] = slice.getSteps()[d];
      shape[perm[d]] = out[d];
    }
    auto type = cast<RankedTensorType>(slice.getType());
    Value part = rewriter.create<SliceOp>(slice.getLoc(), type.clone(shape),
                                          transpose.getInput(),
                                          rewriter.getDenseI64ArrayAttr(starts),
                                          rewriter.getDenseI64ArrayAttr(steps));
    rewriter.replaceOpWithNewOp<TransposeOp>(slice, type, part,
                                             transpose.getPermAttr());
    return success();
  }
};

} // namespace

void SinkTransposesPass::runOnOperation() {
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  RewritePatternSet patterns(&getContext());
  patterns.add<SinkTransposeBelowSlice, SinkTransposeBelowRotary>(
      &getContext());
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
