//===- FuseRotaryEmbedding.cpp - RoPE as one pd.rotary ----------*- C++ -*-===//
//
// pd-fuse-rotary-embedding: Hugging Face's apply_rotary_pos_emb (Llama,
// Mistral, Qwen, GPT-NeoX) exports as
//
//   %lo = pd.slice %x  [..., :h]          rotate_half(x) =
//   %hi = pd.slice %x  [..., h:]            concat(-x[h:], x[:h])
//   %n  = pd.neg %hi
//   %r  = pd.concat %n, %lo {axis = last}
//   %y  = pd.add (pd.mul %x, %cos), (pd.mul %r, %sin)
//
// five kernels forward per Q and K (the products and the add become one
// elementwise tree), and backward the slices' and concat's gradients and
// the negation's (which stashes its input and output). This
// pass makes it one pd.rotary (one pass over x each way; its gradient is
// the adjoint rotation). The heads' transpose usually sits just before it
// (x = transpose(reshape(Q projection))); where the tables' layout allows,
// the transpose moves behind the rotation, where
// pd-fold-transposes-into-matmul folds it into the attention's GEMM
// instead of copying the activations (a [1, 1, T, D] table over
// [B, H, T, D] is a [1, T, 1, D] one over [B, T, H, D]). Runs before
// pd-autodiff. Not bit for bit: the kernel may contract a product and the
// sum into one fused multiply-add.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FUSEROTARYEMBEDDINGPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseRotaryEmbeddingPass
    : public mlir::pd::impl::FuseRotaryEmbeddingPassBase<
          FuseRotaryEmbeddingPass> {
  using FuseRotaryEmbeddingPassBase::FuseRotaryEmbeddingPassBase;
  void runOnOperation() override;
};

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Whether `v` is a one-reader slice of `x` taking, with unit steps, all of
/// every axis but the last and [start, start + D / 2) of the last.
bool isHalfOf(Value v, Value x, int64_t start) {
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice || slice.getInput() != x || !v.hasOneUse())
    return false;
  ArrayRef<int64_t> in = shapeOf(x), out = shapeOf(v);
  int64_t last = in.size() - 1;
  for (int64_t d = 0; d <= last; ++d) {
    int64_t size = d == last ? in[d] / 2 : in[d];
    int64_t begin = d == last ? start : 0;
    if (out[d] != size || slice.getStarts()[d] != begin ||
        slice.getSteps()[d] != 1)
      return false;
  }
  return in[last] % 2 == 0;
}

/// Whether `r` is rotate_half(x) = concat(-x[h:], x[:h]) along the last
/// axis, every part read only there.
bool isRotateHalf(Value r, Value x) {
  auto concat = r.getDefiningOp<ConcatOp>();
  if (!concat || !r.hasOneUse() || concat.getInputs().size() != 2 ||
      static_cast<int64_t>(concat.getAxis()) !=
          static_cast<int64_t>(shapeOf(x).size()) - 1)
    return false;
  auto neg = concat.getInputs()[0].getDefiningOp<NegOp>();
  return neg && neg->hasOneUse() &&
         isHalfOf(neg.getInput(), x, shapeOf(x).back() / 2) &&
         isHalfOf(concat.getInputs()[1], x, 0);
}

/// The rotation's operands read off x * cos and r * sin (either operand
/// order of each multiply).
struct RotaryParts {
  Value x, cos, sin;
};

std::optional<RotaryParts> matchProducts(MulOp direct, MulOp rotated) {
  for (auto [x, cos] : {std::pair(direct.getLhs(), direct.getRhs()),
                        std::pair(direct.getRhs(), direct.getLhs())})
    for (auto [r, sin] : {std::pair(rotated.getLhs(), rotated.getRhs()),
                          std::pair(rotated.getRhs(), rotated.getLhs())})
      if (x.getType() == direct.getType() && cos.getType() == sin.getType() &&
          isRotateHalf(r, x))
        return RotaryParts{x, cos, sin};
  return std::nullopt;
}

/// x * cos + rotate_half(x) * sin -> pd.rotary, anchored on the add.
struct FuseRotary : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto lhs = add.getLhs().getDefiningOp<MulOp>();
    auto rhs = add.getRhs().getDefiningOp<MulOp>();
    if (!lhs || !rhs || !lhs->hasOneUse() || !rhs->hasOneUse() ||
        lhs.getType() != add.getType() || rhs.getType() != add.getType())
      return rewriter.notifyMatchFailure(add, "not a sum of two products");
    std::optional<RotaryParts> parts = matchProducts(lhs, rhs);
    if (!parts)
      parts = matchProducts(rhs, lhs);
    if (!parts)
      return rewriter.notifyMatchFailure(add, "not x cos + rotate_half(x) sin");
    if (!RotaryOp::tableLayout(shapeOf(parts->x), shapeOf(parts->cos)))
      return rewriter.notifyMatchFailure(add, "tables do not index x's rows");
    rewriter.replaceOpWithNewOp<RotaryOp>(add, add.getType(), parts->x,
                                          parts->cos, parts->sin,
                                          /*adjoint=*/false);
    return success();
  }
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
/// y's layout, so that the transpose can fold into the GEMM that reads the
/// rotation, anchored on the rotation.
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

} // namespace

void FuseRotaryEmbeddingPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<FuseRotary, SinkTransposeBelowRotary>(&getContext());
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
