//===- FuseAttentionSoftmax.cpp - Scale + mask + softmax as one op -*- C++ -*-===//
//
// pd-fuse-attention-softmax: attention exports spell its softmax as
//
//   s = Q K^T * c  (or / c)                       scale by a scalar constant
//   t = Where(mask, s, fill) / Where(mask, fill, s) / s + M
//                                                  a constant causal mask
//   p = Softmax(t, axis = -1)
//
// three kernels forward and three backward (mul, where, softmax; softmax,
// where, mul), each a full pass over the [B, H, T, T] scores. This pass
// rewrites the chain to one pd.masked_softmax: the kernel scales, skips the
// masked tail of each row, and its gradient is one pass that needs no mask.
//
// The rewrite is exact when every masked element contributes exp(fill -
// max) == 0 in float32 and every row keeps an element: the fill must be
// -inf or at most -1e9 (torch's finfo.min, Hugging Face's masked_bias),
// an additive mask must hold only 0 and such fills, and the mask must be a
// compile-time constant that varies only over the trailing dims of the
// scores (one [T, T] causal mask broadcast over batch and heads). Anything
// else is left as it is.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"
#include "passes/ScalarConstant.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::pd {
#define GEN_PASS_DEF_FUSEATTENTIONSOFTMAXPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseAttentionSoftmaxPass
    : public mlir::pd::impl::FuseAttentionSoftmaxPassBase<
          FuseAttentionSoftmaxPass> {
  using FuseAttentionSoftmaxPassBase::FuseAttentionSoftmaxPassBase;
  void runOnOperation() override;
};

/// Fills at or below this vanish from a softmax in float32 exactly.
constexpr double kMaskFill = -1e9;

/// The constant elements of `v`, if it is a constant of one value per
/// element.
std::optional<DenseElementsAttr> constantOf(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  return attr;
}


bool isMaskFill(float v) { return v <= kMaskFill; }

/// A keep-mask over the rows of the scores: [rows, n] with rows the
/// product of the trailing dims the mask varies over.
struct RowMask {
  int64_t rows = 1;
  SmallVector<bool> keep;
};

/// Whether `values` (row-major over `dims` with `strides`) are the same at
/// every index of dim `axis`.
template <typename T>
bool invariantAlong(ArrayRef<T> values, ArrayRef<int64_t> dims,
                    ArrayRef<int64_t> strides, int64_t axis) {
  for (int64_t i = 0, e = values.size(); i < e; ++i)
    if ((i / strides[axis]) % dims[axis] != 0 &&
        values[i] != values[i - ((i / strides[axis]) % dims[axis]) * strides[axis]])
      return false;
  return true;
}

/// Folds `bits` (numpy-broadcast to `scores`, with `keepIf` the element
/// value that keeps) into a RowMask; fails when the mask varies over a
/// leading dim it then broadcasts over, or a row keeps nothing.
template <typename T, typename KeepFn>
std::optional<RowMask> rowMaskOf(DenseElementsAttr bits,
                                 RankedTensorType scores, KeepFn keepFn) {
  ArrayRef<int64_t> shape = scores.getShape();
  auto maskShape = cast<RankedTensorType>(bits.getType()).getShape();
  int64_t rank = shape.size();
  if ((int64_t)maskShape.size() > rank || rank < 1)
    return std::nullopt;
  SmallVector<int64_t> dims(rank - maskShape.size(), 1);
  dims.append(maskShape.begin(), maskShape.end());
  auto values = llvm::to_vector(bits.getValues<T>());
  // A leading dim the mask does not vary over (Hugging Face's [B, 1, T, T]
  // copies of one causal mask) counts as 1: read index 0 of it.
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  for (int64_t i = 0; i < rank - 1; ++i)
    if (dims[i] > 1 && invariantAlong<T>(values, dims, strides, i))
      dims[i] = 1;
  int64_t n = shape.back();
  if (dims.back() != n && dims.back() != 1)
    return std::nullopt;
  // Leading dims of 1, then dims equal to the scores' (the rows the
  // mask distinguishes).
  int64_t first = 0;
  while (first < rank - 1 && dims[first] == 1)
    ++first;
  RowMask mask;
  for (int64_t i = first; i < rank - 1; ++i) {
    if (dims[i] != shape[i])
      return std::nullopt;
    mask.rows *= shape[i];
  }
  bool perElement = dims.back() == n;
  mask.keep.reserve(mask.rows * n);
  for (int64_t r = 0; r < mask.rows; ++r) {
    // Row r's offset in the mask: its index over dims [first, rank - 1).
    int64_t offset = 0;
    for (int64_t i = rank - 2, rest = r; i >= first; --i) {
      offset += (rest % dims[i]) * strides[i];
      rest /= dims[i];
    }
    bool any = false;
    for (int64_t k = 0; k < n; ++k) {
      bool keep = keepFn(values[offset + (perElement ? k : 0)]);
      mask.keep.push_back(keep);
      any |= keep;
    }
    if (!any)
      return std::nullopt;
  }
  return mask;
}

/// The masked scores and their RowMask when `t` is a constant mask applied
/// to them (Where with a fill, or an additive mask).
std::optional<std::pair<Value, RowMask>> matchMask(Value t,
                                                   RankedTensorType type) {
  if (auto where = t.getDefiningOp<WhereOp>()) {
    auto cond = constantOf(where.getCond());
    if (!cond || !where->hasOneUse())
      return std::nullopt;
    for (bool fillIsLhs : {true, false}) {
      Value fill = fillIsLhs ? where.getLhs() : where.getRhs();
      Value scores = fillIsLhs ? where.getRhs() : where.getLhs();
      auto value = scalarF32Constant(fill);
      if (!value || !isMaskFill(*value) || scores.getType() != type)
        continue;
      // Where(c, fill, s) keeps where c is false; Where(c, s, fill) where true.
      auto mask = rowMaskOf<bool>(*cond, type, [&](bool c) {
        return c != fillIsLhs;
      });
      if (mask)
        return std::make_pair(scores, *mask);
    }
    return std::nullopt;
  }
  if (auto add = t.getDefiningOp<AddOp>()) {
    if (!add->hasOneUse())
      return std::nullopt;
    for (bool maskIsLhs : {true, false}) {
      Value additive = maskIsLhs ? add.getLhs() : add.getRhs();
      Value scores = maskIsLhs ? add.getRhs() : add.getLhs();
      auto values = constantOf(additive);
      if (!values || !values->getElementType().isF32() ||
          scores.getType() != type)
        continue;
      if (!llvm::all_of(values->getValues<float>(), [](float v) {
            return v == 0.0f || isMaskFill(v);
          }))
        continue;
      auto mask = rowMaskOf<float>(*values, type,
                                   [](float v) { return v == 0.0f; });
      if (mask)
        return std::make_pair(scores, *mask);
    }
  }
  return std::nullopt;
}

/// The unscaled scores and the scale when `s` is scores * c, c * scores or
/// scores / c with c a scalar constant.
std::optional<std::pair<Value, float>> matchScale(Value s,
                                                  RankedTensorType type) {
  Operation *op = s.getDefiningOp();
  if (!op || !op->hasOneUse())
    return std::nullopt;
  if (auto mul = dyn_cast<MulOp>(op)) {
    for (auto [x, c] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())})
      if (auto value = scalarF32Constant(c); value && x.getType() == type)
        return std::make_pair(x, *value);
  }
  if (auto div = dyn_cast<DivOp>(op))
    if (auto value = scalarF32Constant(div.getRhs());
        value && *value != 0.0f && div.getLhs().getType() == type)
      return std::make_pair(div.getLhs(), 1.0f / *value);
  return std::nullopt;
}

/// Rewrites softmax(mask(scale(s))) along the last axis to one
/// pd.masked_softmax, anchored on the softmax.
struct FuseMaskedSoftmax : public OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(softmax.getType());
    if (softmax.getLog() || (int64_t)softmax.getAxis() != type.getRank() - 1)
      return rewriter.notifyMatchFailure(softmax, "not along the last axis");
    Value scores = softmax.getInput();
    auto masked = matchMask(scores, type);
    if (masked)
      scores = masked->first;
    auto scaled = matchScale(scores, type);
    if (scaled)
      scores = scaled->first;
    if (!masked && !scaled)
      return rewriter.notifyMatchFailure(softmax, "no constant mask or scale");
    Value mask;
    if (masked) {
      const RowMask &rows = masked->second;
      auto maskType = RankedTensorType::get({rows.rows, type.getShape().back()},
                                            rewriter.getI1Type());
      mask = rewriter.create<ConstantOp>(
          softmax.getLoc(), maskType,
          DenseElementsAttr::get(maskType, ArrayRef<bool>(rows.keep)));
    }
    rewriter.replaceOpWithNewOp<MaskedSoftmaxOp>(
        softmax, type, scores, mask,
        rewriter.getF32FloatAttr(scaled ? scaled->second : 1.0f),
        /*diagonal_blocks=*/nullptr);
    return success();
  }
};

} // namespace

void FuseAttentionSoftmaxPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<FuseMaskedSoftmax>(&getContext());
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
