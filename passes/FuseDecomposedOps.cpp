//===- FuseDecomposedOps.cpp - Norms, GELU, SiLU, GLUs ----------*- C++ -*-===//
//
// pd-fuse-decomposed-ops: exporters before ONNX opset 17 (torch.onnx at
// opset 13, the common case) spell LayerNorm out as
//
//   mean = ReduceMean(x, trailing axes); d = x - mean
//   var = ReduceMean(d ^ 2 (or d * d)); n = d / Sqrt(var + eps)
//   y = n * gamma + beta                (the affine part optional)
//
// which imports to nine pd ops whose backward needs seven more and stashes
// four intermediate tensors per LayerNorm. This pass recognises the
// pattern and replaces it by one pd.layer_norm (x, gamma, beta, axis, eps),
// whose kernel computes the statistics in double and whose backward
// recomputes them from x. The replacement is exact in real arithmetic;
// only the last bits of float32 rounding differ.
//
// Likewise GELU before opset 20, 0.5 * x * (1 + Erf(x / sqrt(2))) (Div, Erf,
// Add, Mul, Mul: five kernels and four stashed tensors), and its tanh
// approximation 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
// become one pd.gelu each.
//
// RMSNorm (Llama, T5), x * 1/sqrt(mean(x^2) + eps) * weight with the
// inverse root as Div(1, Sqrt), Reciprocal(Sqrt) or x / Sqrt, becomes one
// pd.rms_norm; SiLU, x * Sigmoid(x), one pd.silu: one pass instead of two
// kernels, no stashed sigmoid, and a gradient in one pass from x (three
// kernels before); and the gated MLP of Llama, Mistral and Qwen,
// silu(gate) * up, one pd.swiglu, whose gradient gives both operands'
// in one pass and recomputes silu(gate) rather than stash it; Gemma's,
// gelu(gate) * up, likewise one pd.geglu.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"
#include "passes/ScalarConstant.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::pd {
#define GEN_PASS_DEF_FUSEDECOMPOSEDOPSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseDecomposedOpsPass
    : public mlir::pd::impl::FuseDecomposedOpsPassBase<FuseDecomposedOpsPass> {
  using FuseDecomposedOpsPassBase::FuseDecomposedOpsPassBase;
  void runOnOperation() override;
};

bool hasOneUse(Value v) { return v && v.hasOneUse(); }

/// Matches `v` = ReduceMean(x) over the trailing axes [axis, rank) with
/// keepdims (imported as pd.scale(pd.reduce_sum)); returns x and sets axis.
Value matchTrailingMean(Value v, int64_t &axis) {
  auto scale = v.getDefiningOp<ScaleOp>();
  if (!scale || !hasOneUse(scale.getInput()))
    return {};
  auto sum = scale.getInput().getDefiningOp<ReduceSumOp>();
  if (!sum || !sum.getKeepdims())
    return {};
  auto shape = cast<RankedTensorType>(sum.getInput().getType()).getShape();
  ArrayRef<int64_t> axes = sum.getAxes();
  int64_t rank = shape.size(), count = 1;
  if (axes.empty() || axes.back() != rank - 1)
    return {};
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != rank - (int64_t)axes.size() + (int64_t)i)
      return {};
    count *= shape[axes[i]];
  }
  float want = 1.0f / (float)count;
  if (std::abs(scale.getFactor().convertToFloat() - want) > 1e-6f * want)
    return {};
  axis = axes.front();
  return sum.getInput();
}

/// Matches d^2 as pd.pow(d, 2) or pd.mul(d, d); returns d.
Value matchSquare(Value v) {
  if (auto pow = v.getDefiningOp<PowOp>())
    return pow.getExponent().convertToFloat() == 2.0f ? pow.getInput() : Value();
  if (auto mul = v.getDefiningOp<MulOp>())
    return mul.getLhs() == mul.getRhs() ? mul.getLhs() : Value();
  return {};
}

/// The operand of a commutative binary op `op` other than `known`.
template <typename OpT> Value otherOperand(OpT op, Value known) {
  if (op.getLhs() == known)
    return op.getRhs();
  return op.getRhs() == known ? op.getLhs() : Value();
}

/// What a decomposed LayerNorm's normalisation n = (x - mean) / std binds.
struct Normalization {
  Value input;
  int64_t axis = 0;
  float epsilon = 0.0f;
};

/// Matches the normalisation ending in `div`; every intermediate must have
/// no other user, so the whole chain goes away.
std::optional<Normalization> matchNormalization(DivOp div) {
  Normalization norm;
  auto sub = div.getLhs().getDefiningOp<SubOp>();
  auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
  if (!sub || !sqrt || !hasOneUse(sub.getRhs()) || !hasOneUse(div.getRhs()))
    return std::nullopt;
  norm.input = matchTrailingMean(sub.getRhs(), norm.axis);
  if (!norm.input || norm.input != sub.getLhs() ||
      sub.getType() != norm.input.getType() || div.getType() != sub.getType())
    return std::nullopt;
  auto add = sqrt.getInput().getDefiningOp<AddOp>();
  if (!add || !hasOneUse(sqrt.getInput()))
    return std::nullopt;
  // var + eps in either order; var = mean of the square of d.
  for (auto [var, eps] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<float> epsilon = scalarF32Constant(eps);
    int64_t axis = -1;
    Value square = var.getDefiningOp<ScaleOp>() && hasOneUse(var)
                       ? var.getDefiningOp<ScaleOp>().getInput()
                       : Value();
    Value squared = square && square.getDefiningOp<ReduceSumOp>()
                        ? square.getDefiningOp<ReduceSumOp>().getInput()
                        : Value();
    if (!epsilon || !squared || !hasOneUse(squared) ||
        matchSquare(squared) != div.getLhs() ||
        matchTrailingMean(var, axis) != squared || axis != norm.axis ||
        add.getType() != var.getType())
      continue;
    // d feeds only the square and the division.
    for (Operation *user : div.getLhs().getUsers())
      if (user != div && user != squared.getDefiningOp())
        return std::nullopt;
    norm.epsilon = *epsilon;
    return norm;
  }
  return std::nullopt;
}

/// Whether `v` has exactly the trailing shape of `x` from `axis`.
bool isTrailingShaped(Value v, Value x, int64_t axis) {
  auto vt = dyn_cast<RankedTensorType>(v.getType());
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  return vt && vt.getElementType().isF32() &&
         vt.getShape() == shape.drop_front(axis);
}

/// A pd.constant filled with `value` of the trailing shape of x from axis.
Value trailingFill(PatternRewriter &rewriter, Location loc, Value x,
                   int64_t axis, float value) {
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  auto type = RankedTensorType::get(shape.drop_front(axis), rewriter.getF32Type());
  return rewriter.create<ConstantOp>(
      loc, type, DenseElementsAttr::get(type, rewriter.getF32FloatAttr(value)));
}

/// Rewrites a decomposed LayerNorm, anchored on its division, and the
/// multiply by gamma and add of beta that follow when they do.
struct FuseLayerNorm : public OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    std::optional<Normalization> norm = matchNormalization(div);
    if (!norm)
      return rewriter.notifyMatchFailure(div, "not a decomposed LayerNorm");
    Value x = norm->input, scale, bias;
    Operation *last = div;
    // y = n * gamma (+ beta), each with n's own type.
    if (hasOneUse(div.getResult()))
      if (auto mul = dyn_cast<MulOp>(*div->user_begin())) {
        Value gamma = otherOperand(mul, div.getResult());
        if (gamma && isTrailingShaped(gamma, x, norm->axis) &&
            mul.getType() == div.getType()) {
          scale = gamma;
          last = mul;
        }
      }
    if (last->getResult(0).hasOneUse())
      if (auto add = dyn_cast<AddOp>(*last->user_begin())) {
        Value beta = otherOperand(add, last->getResult(0));
        if (beta && isTrailingShaped(beta, x, norm->axis) &&
            add.getType() == div.getType()) {
          bias = beta;
          last = add;
        }
      }
    rewriter.setInsertionPoint(last);
    Location loc = last->getLoc();
    if (!scale)
      scale = trailingFill(rewriter, loc, x, norm->axis, 1.0f);
    if (!bias)
      bias = trailingFill(rewriter, loc, x, norm->axis, 0.0f);
    rewriter.replaceOpWithNewOp<LayerNormOp>(
        last, div.getType(), x, scale, bias,
        rewriter.getI64IntegerAttr(norm->axis),
        rewriter.getF32FloatAttr(norm->epsilon));
    return success();
  }
};

/// Whether `v` is a one-element f32 constant within 1e-6 (relative) of
/// `want`.
bool isConstantNear(Value v, double want) {
  std::optional<float> c = scalarF32Constant(v);
  return c && std::abs(*c - want) <= 1e-6 * std::abs(want);
}

/// What the inverse RMS 1/sqrt(mean(x^2) + eps) of a decomposed RMSNorm
/// binds.
struct RootMeanSquare {
  Value input;
  int64_t axis = 0;
  float epsilon = 0.0f;
};

/// Matches sqrt(mean(x^2) + eps) (eps on either side) over the trailing
/// axes, every intermediate used once.
std::optional<RootMeanSquare> matchRootMeanSquare(SqrtOp sqrt) {
  auto add = sqrt.getInput().getDefiningOp<AddOp>();
  if (!add || !hasOneUse(sqrt.getInput()))
    return std::nullopt;
  for (auto [var, eps] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
    RootMeanSquare rms;
    std::optional<float> epsilon = scalarF32Constant(eps);
    Value squared = hasOneUse(var) ? matchTrailingMean(var, rms.axis) : Value();
    if (!epsilon || !squared || !hasOneUse(squared) ||
        add.getType() != var.getType())
      continue;
    rms.input = matchSquare(squared);
    rms.epsilon = *epsilon;
    if (rms.input)
      return rms;
  }
  return std::nullopt;
}

/// The op computing x * (1 / r) from r = sqrt(...): x / r, x * (1 / r) or
/// x * reciprocal(r); null if none does.
Operation *matchDivideByRoot(Value x, SqrtOp sqrt) {
  Value r = sqrt.getResult();
  if (!r.hasOneUse())
    return nullptr;
  Operation *user = *r.user_begin();
  if (auto div = dyn_cast<DivOp>(user)) {
    if (div.getRhs() == r && div.getLhs() == x)
      return div;
    if (div.getRhs() != r || !isConstantNear(div.getLhs(), 1.0))
      return nullptr;
  } else if (!isa<ReciprocalOp>(user)) {
    return nullptr;
  }
  Value inverse = user->getResult(0);
  if (!inverse.hasOneUse())
    return nullptr;
  auto mul = dyn_cast<MulOp>(*inverse.user_begin());
  return mul && otherOperand(mul, inverse) == x ? mul.getOperation() : nullptr;
}

/// Rewrites a decomposed RMSNorm (Llama's: x * rsqrt(mean(x^2) + eps) *
/// weight), anchored on its Sqrt, and the multiply by the weight that
/// follows when it does.
struct FuseRMSNorm : public OpRewritePattern<SqrtOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SqrtOp sqrt,
                                PatternRewriter &rewriter) const override {
    std::optional<RootMeanSquare> rms = matchRootMeanSquare(sqrt);
    if (!rms)
      return rewriter.notifyMatchFailure(sqrt, "not sqrt(mean(x^2) + eps)");
    Value x = rms->input;
    Operation *last = matchDivideByRoot(x, sqrt);
    if (!last || last->getResult(0).getType() != x.getType())
      return rewriter.notifyMatchFailure(sqrt, "not x / sqrt(mean(x^2) + eps)");
    Value scale;
    if (last->getResult(0).hasOneUse())
      if (auto mul = dyn_cast<MulOp>(*last->user_begin())) {
        Value gamma = otherOperand(mul, last->getResult(0));
        if (gamma && isTrailingShaped(gamma, x, rms->axis) &&
            mul.getType() == x.getType()) {
          scale = gamma;
          last = mul;
        }
      }
    rewriter.setInsertionPoint(last);
    if (!scale)
      scale = trailingFill(rewriter, last->getLoc(), x, rms->axis, 1.0f);
    rewriter.replaceOpWithNewOp<RMSNormOp>(
        last, x.getType(), x, scale, rewriter.getI64IntegerAttr(rms->axis),
        rewriter.getF32FloatAttr(rms->epsilon));
    return success();
  }
};

/// Matches x / sqrt(2) (or x * (1 / sqrt(2))) with a scalar constant;
/// returns x.
Value matchDivSqrt2(Value v) {
  if (auto div = v.getDefiningOp<DivOp>())
    return isConstantNear(div.getRhs(), M_SQRT2) ? div.getLhs() : Value();
  if (auto mul = v.getDefiningOp<MulOp>()) {
    if (isConstantNear(mul.getRhs(), M_SQRT1_2))
      return mul.getLhs();
    if (isConstantNear(mul.getLhs(), M_SQRT1_2))
      return mul.getRhs();
  }
  return {};
}

/// The single user of `v` if it is an OpT with `v` as an operand and the
/// type of `v`.
template <typename OpT> OpT soleUser(Value v) {
  if (!v.hasOneUse())
    return {};
  auto op = dyn_cast<OpT>(*v.user_begin());
  return op && op.getType() == v.getType() ? op : OpT();
}

/// The op computing 0.5 * x * t from t: (x * t) * 0.5, x * (t * 0.5) or
/// (x * 0.5) * t, operands in either order; null if none does.
Operation *matchHalfXProduct(Value x, Value t) {
  auto first = soleUser<MulOp>(t);
  if (!first)
    return nullptr;
  Value other = otherOperand(first, t);
  if (other == x) { // (x * t) * 0.5
    auto second = soleUser<MulOp>(first.getResult());
    return second && isConstantNear(otherOperand(second, first.getResult()), 0.5)
               ? second.getOperation() : nullptr;
  }
  if (isConstantNear(other, 0.5)) { // x * (t * 0.5)
    auto second = soleUser<MulOp>(first.getResult());
    return second && otherOperand(second, first.getResult()) == x
               ? second.getOperation() : nullptr;
  }
  auto half = other.getDefiningOp<MulOp>(); // (x * 0.5) * t
  if (half && other.hasOneUse() && otherOperand(half, x) &&
      isConstantNear(otherOperand(half, x), 0.5))
    return first.getOperation();
  return nullptr;
}

/// Rewrites GELU spelled out with erf, as torch.onnx exports F.gelu before
/// opset 20: 0.5 * x * (1 + erf(x / sqrt(2))) in any association of the two
/// products, anchored on the Erf.
struct FuseErfGelu : public OpRewritePattern<ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ErfOp erf,
                                PatternRewriter &rewriter) const override {
    Value x = matchDivSqrt2(erf.getInput());
    if (!x || x.getType() != erf.getType() || !erf.getInput().hasOneUse())
      return rewriter.notifyMatchFailure(erf, "input is not x / sqrt(2)");
    auto add = soleUser<AddOp>(erf.getResult());
    if (!add || !isConstantNear(otherOperand(add, erf.getResult()), 1.0))
      return rewriter.notifyMatchFailure(erf, "not 1 + erf");
    Value onePlus = add.getResult();
    Operation *last = matchHalfXProduct(x, onePlus);
    if (!last)
      return rewriter.notifyMatchFailure(erf, "not 0.5 * x * (1 + erf)");
    rewriter.setInsertionPoint(last);
    rewriter.replaceOpWithNewOp<GeluOp>(
        last, erf.getType(), x, /*bias=*/Value(),
        GeluApproximationAttr::get(getContext(), GeluApproximation::None));
    return success();
  }
};

/// Matches x^3 as pd.pow(x, 3), x * (x * x) or (x * x) * x, with every
/// intermediate used once; returns x.
Value matchCube(Value v) {
  if (auto pow = v.getDefiningOp<PowOp>())
    return pow.getExponent().convertToFloat() == 3.0f ? pow.getInput() : Value();
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul)
    return {};
  for (auto [x, square] : {std::pair(mul.getLhs(), mul.getRhs()),
                           std::pair(mul.getRhs(), mul.getLhs())})
    if (square.hasOneUse() && matchSquare(square) == x)
      return x;
  return {};
}

/// Matches sqrt(2/pi) * (x + 0.044715 * x^3), factors in either order;
/// returns x.
Value matchTanhArgument(Value v) {
  auto scaled = v.getDefiningOp<MulOp>();
  if (!scaled || !v.hasOneUse())
    return {};
  Value inner;
  for (Value c : {scaled.getLhs(), scaled.getRhs()})
    if (isConstantNear(c, 0.7978845608028654))
      inner = otherOperand(scaled, c);
  auto add = inner ? inner.getDefiningOp<AddOp>() : AddOp();
  if (!add || !inner.hasOneUse())
    return {};
  for (auto [x, term] : {std::pair(add.getLhs(), add.getRhs()),
                         std::pair(add.getRhs(), add.getLhs())}) {
    auto mul = term.getDefiningOp<MulOp>();
    if (!mul || !term.hasOneUse())
      continue;
    for (Value c : {mul.getLhs(), mul.getRhs()})
      if (isConstantNear(c, 0.044715)) {
        Value cube = otherOperand(mul, c);
        if (cube.hasOneUse() && matchCube(cube) == x)
          return x;
      }
  }
  return {};
}

/// Rewrites GELU's tanh approximation spelled out (torch's
/// F.gelu(approximate="tanh") before opset 20, Hugging Face's NewGELU):
/// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), anchored on the
/// Tanh.
struct FuseTanhGelu : public OpRewritePattern<TanhOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TanhOp tanh,
                                PatternRewriter &rewriter) const override {
    Value x = matchTanhArgument(tanh.getInput());
    if (!x || x.getType() != tanh.getType())
      return rewriter.notifyMatchFailure(tanh, "not tanh of GELU's argument");
    auto add = soleUser<AddOp>(tanh.getResult());
    if (!add || !isConstantNear(otherOperand(add, tanh.getResult()), 1.0))
      return rewriter.notifyMatchFailure(tanh, "not 1 + tanh");
    Operation *last = matchHalfXProduct(x, add.getResult());
    if (!last)
      return rewriter.notifyMatchFailure(tanh, "not 0.5 * x * (1 + tanh)");
    rewriter.setInsertionPoint(last);
    rewriter.replaceOpWithNewOp<GeluOp>(
        last, tanh.getType(), x, /*bias=*/Value(),
        GeluApproximationAttr::get(getContext(), GeluApproximation::Tanh));
    return success();
  }
};

/// Rewrites SiLU as exporters spell it, x * sigmoid(x) (either order; the
/// sigmoid read by that product alone), anchored on the Sigmoid.
struct FuseSilu : public OpRewritePattern<SigmoidOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SigmoidOp sigmoid,
                                PatternRewriter &rewriter) const override {
    auto mul = soleUser<MulOp>(sigmoid.getResult());
    if (!mul || otherOperand(mul, sigmoid.getResult()) != sigmoid.getInput())
      return rewriter.notifyMatchFailure(sigmoid, "not x * sigmoid(x)");
    rewriter.replaceOpWithNewOp<SiluOp>(mul, sigmoid.getType(),
                                        sigmoid.getInput());
    return success();
  }
};

/// The product `act` * up (either order) that alone reads an activation's
/// result, with up of act's type: the gated MLP's gate. Null otherwise.
std::pair<MulOp, Value> gatedProduct(Value act) {
  auto mul = soleUser<MulOp>(act);
  Value up = mul ? otherOperand(mul, act) : Value();
  if (!up || up.getType() != act.getType())
    return {};
  return {mul, up};
}

/// Rewrites the gated MLP's silu(gate) * up (Llama, Mistral, Qwen) into
/// one pd.swiglu, anchored on the SiLU.
struct FuseSwiglu : public OpRewritePattern<SiluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SiluOp silu,
                                PatternRewriter &rewriter) const override {
    auto [mul, up] = gatedProduct(silu.getResult());
    if (!mul)
      return rewriter.notifyMatchFailure(silu, "not silu(gate) * up");
    // Where the product is: up may be computed after the SiLU.
    rewriter.setInsertionPoint(mul);
    rewriter.replaceOpWithNewOp<SwigluOp>(mul, silu.getType(),
                                          silu.getInput(), up);
    return success();
  }
};

/// Rewrites Gemma's gated MLP, gelu(gate) * up (the GELU without a bias),
/// into one pd.geglu, anchored on the GELU.
struct FuseGeglu : public OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GeluOp gelu,
                                PatternRewriter &rewriter) const override {
    auto [mul, up] = gatedProduct(gelu.getResult());
    if (!mul || gelu.getBias())
      return rewriter.notifyMatchFailure(gelu, "not gelu(gate) * up");
    rewriter.setInsertionPoint(mul);
    rewriter.replaceOpWithNewOp<GegluOp>(mul, gelu.getType(), gelu.getInput(),
                                         up, gelu.getApproximateAttr());
    return success();
  }
};

} // namespace

void FuseDecomposedOpsPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<FuseLayerNorm, FuseRMSNorm, FuseErfGelu, FuseTanhGelu, FuseSilu,
               FuseSwiglu, FuseGeglu>(&getContext());
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
