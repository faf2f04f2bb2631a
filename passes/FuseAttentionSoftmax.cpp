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
// scores (one [T, T] causal mask broadcast over batch and heads).
//
// torch's export of scaled_dot_product_attention adds two things:
//
//   s = (Q * sqrt(c)) (K^T * sqrt(c))             the scale on each operand
//   y = Where(IsNaN(p), 0, p)                     after the softmax
//
// with the mask of a padding-mask input, Where(mask, 0, -inf) added to the
// scores ([B, 1, T, T] or [B, 1, 1, T], computed in the step). The guard
// (Not(Equal(p, p)) and a Where: three more kernels and an i1 stash) zeroes
// the rows whose softmax is NaN, those that keep no key; the fused op does
// so with zero_nan_rows, and then takes a mask of the step too, one block
// per batch entry (exact: a row keeping nothing is 0 either way; without
// the guard such a row is NaN, so a mask of the step filled with -inf fuses
// only with it). torch's dynamo export fills with finfo.min instead, which
// absorbs the scores: a row keeping nothing is then uniform, as the kernel
// makes it with uniform_empty_rows, guard or not.
// The operand scales move onto the scores when the product feeds nothing
// but this softmax: (Q c1)(K^T c2) becomes (Q K^T) scaled by c1 c2 in the
// kernel (not bit for bit: one rounding of the product instead of two of
// the operands), so that the head transposes before the product fold into
// the GEMM (pd-fold-transposes-into-matmul) instead of staying copies.
// Anything else is left as it is.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"
#include "passes/ScalarConstant.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <array>
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

/// The layout of a mask computed in the step, [G, R, N] over the scores'
/// rows (MaskedSoftmaxOp): G leading dims the mask shares with the
/// scores, then dims it broadcasts over (the heads), then R dims it shares
/// again (the query rows), N the keys.
struct StepMask {
  Value bits;         ///< i1, true = keep
  bool keepIf = true; ///< the value of `bits` that keeps
  int64_t groups = 1, rows = 1;
};

/// The [G, R] layout of an i1 mask `bits` broadcast to `scores` when its
/// dims are (after leading 1s) shared, then broadcast, then shared again,
/// with the keys (the last dim) its own.
std::optional<StepMask> stepMaskLayout(Value bits, RankedTensorType scores) {
  auto type = dyn_cast<RankedTensorType>(bits.getType());
  ArrayRef<int64_t> shape = scores.getShape();
  int64_t rank = shape.size();
  if (!type || !type.getElementType().isInteger(1) || type.getRank() > rank ||
      rank < 2 || type.getShape().back() != shape.back())
    return std::nullopt;
  SmallVector<int64_t> dims(rank - type.getRank(), 1);
  dims.append(type.getShape().begin(), type.getShape().end());
  // 0: the leading shared run, 1: the broadcast run, 2: the trailing one.
  int phase = 0;
  StepMask mask;
  mask.bits = bits;
  for (int64_t i = 0; i < rank - 1; ++i) {
    if (shape[i] == 1)
      continue;
    if (dims[i] == 1) {
      if (phase == 2) // broadcast again after the rows: no [G, R] view
        return std::nullopt;
      phase = 1;
    } else if (dims[i] == shape[i]) {
      if (phase == 1)
        phase = 2;
      (phase == 0 ? mask.groups : mask.rows) *= shape[i];
    } else {
      return std::nullopt;
    }
  }
  if (phase == 0) // no broadcast dim: one block of every row
    std::swap(mask.groups, mask.rows);
  return mask;
}

/// How the scores are masked: a constant RowMask, or a mask of the step
/// (whose rows that keep nothing are uniform with a finite fill).
struct MatchedMask {
  Value scores;
  std::optional<RowMask> constant;
  std::optional<StepMask> step;
  bool uniformEmptyRows = false;
};

/// Fills at or below this absorb any score (x + fill == fill in float32
/// for |x| < 1e31): a row of the step that keeps nothing is uniform.
constexpr double kAbsorbingFill = -1e30;

/// Whether a mask of the step filled with `fill` fuses, and then whether
/// its empty rows are uniform: -inf makes them NaN, which only the guard
/// after the softmax (`guarded`) zeroes as the kernel does; a finite fill
/// that absorbs the scores makes them uniform, which the kernel does with
/// uniform_empty_rows. Other fills leave empty rows that no kernel mode
/// reproduces.
std::optional<bool> stepFill(Value fill, bool guarded) {
  auto value = scalarF32Constant(fill);
  if (!value)
    return std::nullopt;
  if (std::isinf(*value) && *value < 0)
    return guarded ? std::optional<bool>(false) : std::nullopt;
  if (*value <= kAbsorbingFill)
    return true;
  return std::nullopt;
}

/// The mask of Where(cond, s, fill) / Where(cond, fill, s) (`scores` the
/// s side) or of an additive Where(cond, 0, fill) / Where(cond, fill, 0):
/// constant when the fill vanishes, or of the step when it fuses
/// (stepFill).
std::optional<MatchedMask> maskOfCond(Value cond, bool keepIf, Value fill,
                                      Value scores, RankedTensorType type,
                                      bool guarded) {
  if (auto bits = constantOf(cond)) {
    auto value = scalarF32Constant(fill);
    if (!value || !isMaskFill(*value))
      return std::nullopt;
    auto rows =
        rowMaskOf<bool>(*bits, type, [&](bool c) { return c == keepIf; });
    if (!rows)
      return std::nullopt;
    return MatchedMask{scores, rows, std::nullopt};
  }
  auto uniform = stepFill(fill, guarded);
  auto step = uniform ? stepMaskLayout(cond, type) : std::nullopt;
  if (!step)
    return std::nullopt;
  step->keepIf = keepIf;
  return MatchedMask{scores, std::nullopt, step, *uniform};
}

/// The masked scores and their mask when `t` is a mask applied to them
/// (Where with a fill, or an additive mask); `guarded`: the softmax's NaN
/// rows are zeroed after it.
std::optional<MatchedMask> matchMask(Value t, RankedTensorType type,
                                     bool guarded) {
  if (auto where = t.getDefiningOp<WhereOp>()) {
    if (!where->hasOneUse())
      return std::nullopt;
    for (bool fillIsLhs : {true, false}) {
      Value fill = fillIsLhs ? where.getLhs() : where.getRhs();
      Value scores = fillIsLhs ? where.getRhs() : where.getLhs();
      if (scores.getType() != type)
        continue;
      // Where(c, fill, s) keeps where c is false; Where(c, s, fill) where true.
      if (auto mask = maskOfCond(where.getCond(), !fillIsLhs, fill, scores,
                                 type, guarded))
        return mask;
    }
    return std::nullopt;
  }
  auto add = t.getDefiningOp<AddOp>();
  if (!add || !add->hasOneUse())
    return std::nullopt;
  for (bool maskIsLhs : {true, false}) {
    Value additive = maskIsLhs ? add.getLhs() : add.getRhs();
    Value scores = maskIsLhs ? add.getRhs() : add.getLhs();
    if (scores.getType() != type)
      continue;
    if (auto values = constantOf(additive);
        values && values->getElementType().isF32() &&
        llvm::all_of(values->getValues<float>(),
                     [](float v) { return v == 0.0f || isMaskFill(v); })) {
      if (auto rows = rowMaskOf<float>(*values, type,
                                       [](float v) { return v == 0.0f; }))
        return MatchedMask{scores, rows, std::nullopt};
      continue;
    }
    // Where(cond, 0, fill), cond constant or of the step (torch's export of
    // a boolean attn_mask), read by this add alone.
    auto where = additive.getDefiningOp<WhereOp>();
    if (!where || !where->hasOneUse() ||
        where.getType() !=
            where.getCond().getType().clone(type.getElementType()))
      continue;
    for (bool zeroIsLhs : {true, false}) {
      Value zero = zeroIsLhs ? where.getLhs() : where.getRhs();
      Value fill = zeroIsLhs ? where.getRhs() : where.getLhs();
      if (scalarF32Constant(zero) != 0.0f)
        continue;
      if (auto mask = maskOfCond(where.getCond(), zeroIsLhs, fill, scores, type,
                                 guarded))
        return mask;
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

/// Scalar-constant scales on the operands of the batched GEMM that computes
/// `scores` and feeds nothing else: each operand's scale op (or null) and
/// the product of the scales.
struct OperandScales {
  BatchMatMulOp gemm;
  std::array<Operation *, 2> ops = {nullptr, nullptr};
  std::array<Value, 2> unscaled;
  float product = 1.0f;
};

std::optional<OperandScales> matchOperandScales(Value scores) {
  auto gemm = scores.getDefiningOp<BatchMatMulOp>();
  if (!gemm || !gemm->hasOneUse())
    return std::nullopt;
  OperandScales found;
  found.gemm = gemm;
  for (int i = 0; i < 2; ++i) {
    Value operand = gemm->getOperand(i);
    found.unscaled[i] = operand;
    auto type = cast<RankedTensorType>(operand.getType());
    if (auto scale = matchScale(operand, type)) {
      found.ops[i] = operand.getDefiningOp();
      found.unscaled[i] = scale->first;
      found.product *= scale->second;
    }
  }
  if (!found.ops[0] && !found.ops[1])
    return std::nullopt;
  return found;
}

/// torch's guard after a softmax p, Where(Not(Equal(p, p)), 0, p) (IsNaN
/// imported as Not of Equal), when p feeds nothing else: its ops, the
/// Where last.
std::optional<std::array<Operation *, 3>> matchNanGuard(Value p) {
  CompareOp equal;
  WhereOp where;
  for (Operation *user : p.getUsers()) {
    if (auto cmp = dyn_cast<CompareOp>(user);
        cmp && !equal && cmp.getLhs() == p && cmp.getRhs() == p &&
        cmp.getPredicate() == "eq")
      equal = cmp;
    else if (auto w = dyn_cast<WhereOp>(user); w && !where)
      where = w;
    else if (user != equal && user != where)
      return std::nullopt;
  }
  if (!equal || !where || !equal->hasOneUse())
    return std::nullopt;
  auto notOp = dyn_cast<NotOp>(*equal->getUsers().begin());
  if (!notOp || !notOp->hasOneUse() || where.getCond() != notOp.getResult() ||
      where.getRhs() != p || where.getType() != p.getType() ||
      scalarF32Constant(where.getLhs()) != 0.0f)
    return std::nullopt;
  return std::array<Operation *, 3>{equal, notOp, where};
}

/// The i1 [R, N] constant keep-mask of a RowMask.
Value buildConstantMask(PatternRewriter &rewriter, Location loc,
                        const RowMask &rows, int64_t n) {
  auto maskType = RankedTensorType::get({rows.rows, n}, rewriter.getI1Type());
  return rewriter.create<ConstantOp>(
      loc, maskType,
      DenseElementsAttr::get(maskType, ArrayRef<bool>(rows.keep)));
}

/// A step mask viewed as [R, N] (one group) or [G, R, N], true = keep.
Value buildStepMask(PatternRewriter &rewriter, Location loc,
                    const StepMask &mask, int64_t n) {
  Value bits = mask.bits;
  if (!mask.keepIf)
    bits = rewriter.create<NotOp>(loc, bits.getType(), bits);
  SmallVector<int64_t> shape;
  if (mask.groups > 1)
    shape.push_back(mask.groups);
  shape.append({mask.rows, n});
  auto type = RankedTensorType::get(shape, rewriter.getI1Type());
  if (type == bits.getType())
    return bits;
  return rewriter.create<ReshapeOp>(loc, type, bits);
}

/// Rewrites softmax(mask(scale(s))) along the last axis to one
/// pd.masked_softmax, anchored on the softmax; with torch's NaN guard
/// after it, the guard too.
struct FuseMaskedSoftmax : public OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(softmax.getType());
    if (softmax.getLog() || (int64_t)softmax.getAxis() != type.getRank() - 1)
      return rewriter.notifyMatchFailure(softmax, "not along the last axis");
    auto guard = matchNanGuard(softmax.getResult());
    Value scores = softmax.getInput();
    auto masked = matchMask(scores, type, /*guarded=*/guard.has_value());
    if (masked)
      scores = masked->scores;
    auto scaled = matchScale(scores, type);
    if (scaled)
      scores = scaled->first;
    auto operandScales = matchOperandScales(scores);
    if (!masked && !scaled && !operandScales && !guard)
      return rewriter.notifyMatchFailure(softmax, "no mask, scale or guard");
    float scale = scaled ? scaled->second : 1.0f;
    if (operandScales) {
      scale *= operandScales->product;
      BatchMatMulOp gemm = operandScales->gemm;
      rewriter.modifyOpInPlace(gemm, [&] {
        gemm->setOperand(0, operandScales->unscaled[0]);
        gemm->setOperand(1, operandScales->unscaled[1]);
      });
      for (Operation *op : operandScales->ops)
        if (op && op->use_empty())
          rewriter.eraseOp(op);
    }
    Location loc = softmax.getLoc();
    int64_t n = type.getShape().back();
    Value mask;
    if (masked && masked->constant)
      mask = buildConstantMask(rewriter, loc, *masked->constant, n);
    else if (masked)
      mask = buildStepMask(rewriter, loc, *masked->step, n);
    auto fused = rewriter.create<MaskedSoftmaxOp>(
        loc, type, scores, mask, rewriter.getF32FloatAttr(scale),
        /*diagonal_blocks=*/nullptr,
        /*zero_nan_rows=*/guard ? rewriter.getUnitAttr() : nullptr,
        /*uniform_empty_rows=*/masked && masked->uniformEmptyRows
            ? rewriter.getUnitAttr()
            : nullptr);
    if (!guard) {
      rewriter.replaceOp(softmax, fused.getResult());
      return success();
    }
    auto [equal, notOp, where] = *guard;
    rewriter.replaceOp(where, fused.getResult());
    rewriter.eraseOp(notOp);
    rewriter.eraseOp(equal);
    rewriter.eraseOp(softmax);
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
