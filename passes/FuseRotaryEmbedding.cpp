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
// the adjoint rotation). Partial rotary (GPT-NeoX, Phi: the rotation on
// the first R columns of each head, the rest passed through) exports that
// rotation on a slice, concatenated with the other slice: it becomes one
// pd.rotary of the whole head with R-wide tables. The heads' transpose
// that usually sits before the rotation (x = transpose(reshape(Q
// projection))) is pd-sink-transposes' to move, after this pass: the
// slices must still read the tensor the export rotated. Runs before
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

/// Whether `v` is a one-reader slice of `x` taking, with unit steps, all of
/// every axis but the last and [start, start + size) of the last.
bool isColumnsOf(Value v, Value x, int64_t start, int64_t size) {
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice || slice.getInput() != x || !v.hasOneUse())
    return false;
  ArrayRef<int64_t> in = shapeOf(x), out = shapeOf(v);
  int64_t last = in.size() - 1;
  for (int64_t d = 0; d <= last; ++d) {
    int64_t want = d == last ? size : in[d];
    int64_t begin = d == last ? start : 0;
    if (out[d] != want || slice.getStarts()[d] != begin ||
        slice.getSteps()[d] != 1)
      return false;
  }
  return true;
}

/// Whether `v` is the half of x's last axis that starts at `start`.
bool isHalfOf(Value v, Value x, int64_t start) {
  int64_t cols = shapeOf(x).back();
  return cols % 2 == 0 && isColumnsOf(v, x, start, cols / 2);
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

/// Partial rotary (GPT-NeoX, Phi): concat(rotary(x[..., :R]), x[..., R:])
/// along the last axis -> pd.rotary(x) with the same R-wide tables, which
/// copies the columns past R; anchored on the concat.
struct FusePartialRotary : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    int64_t last = concat.getType().getRank() - 1;
    if (concat.getInputs().size() != 2 ||
        static_cast<int64_t>(concat.getAxis()) != last)
      return rewriter.notifyMatchFailure(concat, "not two parts of the last "
                                                 "axis");
    auto rotary = concat.getInputs()[0].getDefiningOp<RotaryOp>();
    auto rest = concat.getInputs()[1].getDefiningOp<SliceOp>();
    if (!rotary || !rotary->hasOneUse() || !rest)
      return rewriter.notifyMatchFailure(concat, "not a rotation and a slice");
    Value x = rest.getInput();
    int64_t cols = shapeOf(x).back(), rotated = shapeOf(rotary).back();
    if (x.getType() != concat.getType() ||
        !isColumnsOf(rotary.getInput(), x, 0, rotated) ||
        !isColumnsOf(rest, x, rotated, cols - rotated))
      return rewriter.notifyMatchFailure(concat,
                                         "parts are not x's columns in order");
    if (!RotaryOp::tableLayout(shapeOf(x), shapeOf(rotary.getCos())))
      return rewriter.notifyMatchFailure(concat,
                                         "tables do not index x's rows");
    rewriter.replaceOpWithNewOp<RotaryOp>(concat, concat.getType(), x,
                                          rotary.getCos(), rotary.getSin(),
                                          rotary.getAdjoint());
    return success();
  }
};

} // namespace

void FuseRotaryEmbeddingPass::runOnOperation() {
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  RewritePatternSet patterns(&getContext());
  patterns.add<FuseRotary, FusePartialRotary>(&getContext());
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
