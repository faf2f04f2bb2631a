//===- PDOpsNN.cpp - Verifiers, costs and gradients of nn ops -*- C++ -*-===//
//
// Verifiers, CostOpInterface and GradientOpInterface of the ops in
// PDOpsNN.td. Every gradient rule opens with the math of its forward op.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "dialects/PD/IR/PDOpsHelpers.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::pd;

/// Checks that `axes` are sorted, unique and within [0, rank).
static LogicalResult verifyAxes(Operation *op, ArrayRef<int64_t> axes,
                                int64_t rank) {
  for (auto [i, a] : llvm::enumerate(axes))
    if (a < 0 || a >= rank || (i > 0 && axes[i - 1] >= a))
      return op->emitOpError("axes must be sorted, unique and in [0, ")
             << rank << ")";
  return success();
}

/// The shape of `shape` reduced over `axes` (kept as 1 or dropped).
static SmallVector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> axes, bool keep) {
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(shape)) {
    bool reduced = llvm::is_contained(axes, (int64_t)i);
    if (!reduced)
      out.push_back(d);
    else if (keep)
      out.push_back(1);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// ReduceSumOp: y = sum_{axes} x          dx = broadcast_axes(dy)
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::verify() {
  auto in = getInput().getType();
  if (failed(verifyAxes(*this, getAxes(), in.getRank())))
    return failure();
  auto expected = reducedShape(in.getShape(), getAxes(), getKeepdims());
  if (ArrayRef<int64_t>(expected) != getType().getShape())
    return emitOpError("result shape ")
           << shapeStr(getType().getShape()) << " is not " << shapeStr(expected);
  return success();
}

LogicalResult ReduceSumOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(b.create<BroadcastAxesOp>(
      getLoc(), getInput().getType(), resultGrads[0], getAxesAttr()));
  return success();
}

int64_t ReduceSumOp::getFlops() { return numElements(getInput()); }

LogicalResult BroadcastAxesOp::verify() {
  auto out = getType();
  if (failed(verifyAxes(*this, getAxes(), out.getRank())))
    return failure();
  auto in = getInput().getType().getShape();
  if (ArrayRef<int64_t>(reducedShape(out.getShape(), getAxes(), false)) != in &&
      ArrayRef<int64_t>(reducedShape(out.getShape(), getAxes(), true)) != in)
    return emitOpError("operand shape ")
           << shapeStr(in) << " is not the result shape "
           << shapeStr(out.getShape()) << " without the broadcast axes";
  return success();
}

int64_t BroadcastAxesOp::getFlops() { return 0; }

//===----------------------------------------------------------------------===//
// DivOp: c = a / b     da = sum_to(dc / b),  db = sum_to(-(dc / b) * c)
//===----------------------------------------------------------------------===//

/// The operands of a broadcasting binary op broadcast to its result.
template <typename OpT> static LogicalResult verifyBroadcast(OpT op) {
  auto lhs = op.getLhs().getType(), rhs = op.getRhs().getType();
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op.emitOpError("operand shapes ")
           << shapeStr(lhs.getShape()) << " and " << shapeStr(rhs.getShape())
           << " do not broadcast";
  if (ArrayRef<int64_t>(*shape) != op.getType().getShape())
    return op.emitOpError("result shape ")
           << shapeStr(op.getType().getShape()) << " is not the broadcast shape "
           << shapeStr(*shape);
  return success();
}

LogicalResult DivOp::verify() { return verifyBroadcast(*this); }
LogicalResult PowBroadcastOp::verify() { return verifyBroadcast(*this); }
LogicalResult MinOp::verify() { return verifyBroadcast(*this); }
LogicalResult MaxOp::verify() { return verifyBroadcast(*this); }

static Value sumTo(OpBuilder &b, Location loc, Value grad, Type type) {
  return grad.getType() == type ? grad : b.create<SumToOp>(loc, type, grad);
}

LogicalResult DivOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Type t = getType();
  Value q = b.create<DivOp>(loc, t, resultGrads[0], getRhs());
  Value qc = b.create<MulOp>(loc, t, q, getResult());
  Value neg = b.create<ScaleOp>(loc, qc, b.getF32FloatAttr(-1.0f));
  operandGrads.push_back(sumTo(b, loc, q, getLhs().getType()));
  operandGrads.push_back(sumTo(b, loc, neg, getRhs().getType()));
  return success();
}

int64_t DivOp::getFlops() { return numElements(getResult()); }

//===----------------------------------------------------------------------===//
// PowBroadcastOp: y = a^b   da = sum_to(dy * b * a^(b-1)),
//                           db = sum_to(dy * y * log(a))
//===----------------------------------------------------------------------===//

LogicalResult PowBroadcastOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Type t = getType();
  Value dy = resultGrads[0], lhs = getLhs(), rhs = getRhs();
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Value one = b.create<ConstantOp>(
      loc, scalar, DenseElementsAttr::get(scalar, b.getF32FloatAttr(1.0f)));
  Value rhsMinusOne = b.create<SubOp>(loc, rhs.getType(), rhs, one);
  Value lower = b.create<PowBroadcastOp>(loc, t, lhs, rhsMinusOne);
  Value da = b.create<MulOp>(loc, t, b.create<MulOp>(loc, t, dy, rhs), lower);
  Value logLhs = b.create<LogOp>(loc, lhs.getType(), lhs);
  Value db = b.create<MulOp>(loc, t, b.create<MulOp>(loc, t, dy, getResult()),
                             logLhs);
  operandGrads.push_back(sumTo(b, loc, da, lhs.getType()));
  operandGrads.push_back(sumTo(b, loc, db, rhs.getType()));
  return success();
}

int64_t PowBroadcastOp::getFlops() { return 8 * numElements(getResult()); }

//===----------------------------------------------------------------------===//
// MinOp, MaxOp: c = min/max(a, b)   da = sum_to(minmax_grad(dc, a, b, 0)),
//                                   db = sum_to(minmax_grad(dc, a, b, 1))
//===----------------------------------------------------------------------===//

template <typename OpT>
static LogicalResult minMaxVJP(OpT op, OpBuilder &b, ArrayRef<Value> grads,
                               SmallVectorImpl<Value> &operandGrads,
                               bool isMax) {
  Location loc = op.getLoc();
  for (int64_t which = 0; which < 2; ++which) {
    Value d = b.create<MinMaxGradOp>(loc, op.getType(), grads[0], op.getLhs(),
                                     op.getRhs(), b.getBoolAttr(isMax),
                                     b.getI64IntegerAttr(which));
    operandGrads.push_back(
        sumTo(b, loc, d, op->getOperand(which).getType()));
  }
  return success();
}

LogicalResult MinOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  return minMaxVJP(*this, b, resultGrads, operandGrads, /*isMax=*/false);
}

LogicalResult MaxOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  return minMaxVJP(*this, b, resultGrads, operandGrads, /*isMax=*/true);
}

int64_t MinOp::getFlops() { return numElements(getResult()); }
int64_t MaxOp::getFlops() { return numElements(getResult()); }
int64_t MinMaxGradOp::getFlops() { return 2 * numElements(getResult()); }

//===----------------------------------------------------------------------===//
// Unary math: y = f(x)     dx = dy * f'(x), by pd.unary_grad
//   neg: -1; sqrt: 0.5/y; exp: y; log: 1/x; erf: 2/sqrt(pi) exp(-x^2);
//   tanh: 1-y^2; sigmoid: y(1-y); reciprocal: -y^2; pow: p x^(p-1);
//   cos: -sin x; sin: cos x; silu: s (1 + x (1 - s)), s = sigmoid(x)
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult unaryVJP(OpTy op, OpBuilder &b, ArrayRef<Value> grads,
                              SmallVectorImpl<Value> &operandGrads,
                              UnaryKind kind, float alpha) {
  operandGrads.push_back(b.create<UnaryGradOp>(
      op.getLoc(), op.getType(), grads[0], op.getInput(), op.getResult(),
      UnaryKindAttr::get(b.getContext(), kind), b.getF32FloatAttr(alpha)));
  return success();
}

#define PD_UNARY_MATH(Op, flopsPerElement)                                     \
  LogicalResult Op::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,        \
                             SmallVectorImpl<Value> &operandGrads) {           \
    return unaryVJP(*this, b, resultGrads, operandGrads, kKind, 0.0f);         \
  }                                                                            \
  int64_t Op::getFlops() { return flopsPerElement * numElements(getResult()); }

PD_UNARY_MATH(NegOp, 1)
PD_UNARY_MATH(SqrtOp, 4)
PD_UNARY_MATH(ExpOp, 8)
PD_UNARY_MATH(LogOp, 8)
PD_UNARY_MATH(ErfOp, 16)
PD_UNARY_MATH(TanhOp, 16)
PD_UNARY_MATH(SigmoidOp, 12)
PD_UNARY_MATH(ReciprocalOp, 4)
PD_UNARY_MATH(CosOp, 16)
PD_UNARY_MATH(SinOp, 16)
PD_UNARY_MATH(SiluOp, 14)
#undef PD_UNARY_MATH

LogicalResult PowOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  return unaryVJP(*this, b, resultGrads, operandGrads, kPowKind,
                  getExponent().convertToFloat());
}

int64_t PowOp::getFlops() { return 8 * numElements(getResult()); }
int64_t UnaryGradOp::getFlops() { return 8 * numElements(getResult()); }

//===----------------------------------------------------------------------===//
// GeluOp: y = 0.5 x (1 + erf(x / sqrt(2)))                        (none)
//         y = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3) (tanh)
//   dx = dy * gelu'(x), by pd.gelu_grad:
//   none: gelu'(x) = 0.5 (1 + erf(x / sqrt(2))) + x exp(-x^2 / 2) / sqrt(2 pi)
//   tanh: gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) u', t = tanh(u),
//         u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
//===----------------------------------------------------------------------===//

/// Verifies that `bias`, when present, is a vector the size of the last
/// dimension of `x`, which it is broadcast over.
static LogicalResult verifyRowBias(Operation *op, Value x, Value bias,
                                   StringRef what) {
  if (!bias)
    return success();
  auto xt = cast<RankedTensorType>(x.getType());
  auto bt = cast<RankedTensorType>(bias.getType());
  if (xt.getRank() < 1 || bt.getRank() != 1 ||
      bt.getDimSize(0) != xt.getDimSize(xt.getRank() - 1))
    return op->emitOpError() << what << " shape " << shapeStr(bt.getShape())
                             << " is not the last dimension of "
                             << shapeStr(xt.getShape());
  return success();
}

LogicalResult GeluOp::verify() {
  return verifyRowBias(*this, getInput(), getBias(), "bias");
}

LogicalResult GeluOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Value dx = b.create<GeluGradOp>(getLoc(), getType(), /*bias_grad=*/Type(),
                                  resultGrads[0], getInput(), getBias(),
                                  getApproximateAttr())
                 .getResult();
  operandGrads.push_back(dx);
  // The bias was broadcast over the rows: its gradient is dx summed over
  // them (pd-fuse-bias-gradients folds the sum into the gelu_grad).
  if (Value bias = getBias())
    operandGrads.push_back(b.create<SumToOp>(getLoc(), bias.getType(), dx));
  return success();
}

LogicalResult GeluGradOp::verify() {
  if (failed(verifyRowBias(*this, getInput(), getInputBias(), "input bias")))
    return failure();
  return verifyRowBias(*this, getResult(), getBiasGrad(), "bias gradient");
}

/// The last axis of a tensor value.
static int64_t lastAxis(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank() - 1;
}

Operation *SumToOp::getSummedProducer() {
  RankedTensorType out = getType();
  auto lastDim = [](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    return type.getRank() ? type.getShape().back() : int64_t(-1);
  };
  if (out.getRank() != 1 || lastDim(getInput()) != out.getDimSize(0))
    return {};
  Value v = getInput();
  while (auto view = v.getDefiningOp<ReshapeOp>()) {
    v = view.getInput();
    if (lastDim(v) != out.getDimSize(0))
      return {};
  }
  if (auto grad = v.getDefiningOp<GeluGradOp>())
    return grad.getBiasGrad() ? nullptr : grad.getOperation();
  if (auto grad = v.getDefiningOp<LayerNormGradOp>())
    return v == grad.getInputGrad() && !grad.getInputGradSum() &&
                   static_cast<int64_t>(grad.getAxis()) == lastAxis(v)
               ? grad.getOperation()
               : nullptr;
  return nullptr;
}

int64_t GeluOp::getFlops() {
  // The bias: one add per element.
  return (getBias() ? 21 : 20) * numElements(getResult());
}
int64_t GeluGradOp::getFlops() {
  // The input's bias and the bias gradient's sum: one add per element each.
  return (28 + (getInputBias() ? 1 : 0) + (getBiasGrad() ? 1 : 0)) *
         numElements(getResult());
}

//===----------------------------------------------------------------------===//
// SwigluOp: y = silu(g) u, silu(g) = g s, s = sigmoid(g)
//   dg = dy u s (1 + g (1 - s)), du = dy g s, both by pd.swiglu_grad
//===----------------------------------------------------------------------===//

LogicalResult SwigluOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  auto grad = b.create<SwigluGradOp>(getLoc(), getType(), getType(),
                                     resultGrads[0], getGate(), getUp());
  operandGrads.push_back(grad.getGateGrad());
  operandGrads.push_back(grad.getUpGrad());
  return success();
}

int64_t SwigluOp::getFlops() { return 15 * numElements(getResult()); }
int64_t SwigluGradOp::getFlops() { return 20 * numElements(getGrad()); }

//===----------------------------------------------------------------------===//
// GegluOp: y = gelu(g) u
//   dg = dy u gelu'(g), du = dy gelu(g), both by pd.geglu_grad
//===----------------------------------------------------------------------===//

LogicalResult GegluOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  auto grad =
      b.create<GegluGradOp>(getLoc(), getType(), getType(), resultGrads[0],
                            getGate(), getUp(), getApproximateAttr());
  operandGrads.push_back(grad.getGateGrad());
  operandGrads.push_back(grad.getUpGrad());
  return success();
}

// pd.gelu's and pd.gelu_grad's work and a product; the gradient evaluates
// both gelu and gelu'.
int64_t GegluOp::getFlops() { return 21 * numElements(getResult()); }
int64_t GegluGradOp::getFlops() { return 50 * numElements(getGrad()); }

//===----------------------------------------------------------------------===//
// RotaryOp: y = x c + R(x) s, R(x) = concat(-x[h:], x[:h]), a linear map of
//   x whose transpose is x c + R^T(x s), R^T(z) = concat(z[h:], -z[:h]):
//   dx = the adjoint op on dy (and back), dc = sum_to(dy x),
//   ds = sum_to(dy R(x)), or sum_to(R(dy) x) for the adjoint; x and dy
//   there are their first R columns (partial rotary; the columns past R
//   pass through, their gradient too)
//===----------------------------------------------------------------------===//

std::optional<std::pair<int64_t, int64_t>>
RotaryOp::tableLayout(ArrayRef<int64_t> x, ArrayRef<int64_t> table) {
  int64_t rank = x.size(), offset = rank - static_cast<int64_t>(table.size());
  if (rank < 1 || offset < 0 || table.back() < 2 || table.back() > x.back() ||
      table.back() % 2)
    return std::nullopt;
  // Leading dims: a run of x's dims the table has whole (units of x may
  // sit inside it), broadcast (size 1 in the table) everywhere else.
  int64_t last = -1, rows = 1;
  bool broadcastAfterRun = false;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    int64_t t = d < offset ? 1 : table[d - offset];
    if (t != 1 && t != x[d])
      return std::nullopt;
    if (x[d] == 1)
      continue;
    if (t == 1) {
      broadcastAfterRun |= last >= 0;
      continue;
    }
    if (broadcastAfterRun)
      return std::nullopt;
    last = d;
    rows *= t;
  }
  int64_t repeat = 1;
  for (int64_t d = last + 1; last >= 0 && d + 1 < rank; ++d)
    repeat *= x[d];
  return std::make_pair(rows, repeat);
}

LogicalResult RotaryOp::verify() {
  auto x = cast<RankedTensorType>(getType()).getShape();
  auto table = cast<RankedTensorType>(getCos().getType()).getShape();
  if (!tableLayout(x, table))
    return emitOpError("cos and sin ")
           << shapeStr(table) << " must broadcast to the input " << shapeStr(x)
           << " as one run of dims, with an even last axis no longer than "
              "the input's";
  return success();
}

/// Columns [start, start + cols) of z's last axis, as a pd.slice.
static Value columns(OpBuilder &b, Location loc, Value z, int64_t start,
                     int64_t cols) {
  auto type = cast<RankedTensorType>(z.getType());
  SmallVector<int64_t> shape(type.getShape()), starts(shape.size(), 0),
      steps(shape.size(), 1);
  shape.back() = cols;
  starts.back() = start;
  return b.create<SliceOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), z,
      b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(steps));
}

/// rotate_half(z) = concat(-z[h:], z[:h]) along the last axis, in ops.
static Value rotateHalf(OpBuilder &b, Location loc, Value z) {
  auto type = cast<RankedTensorType>(z.getType());
  int64_t h = type.getShape().back() / 2;
  Value low = columns(b, loc, z, 0, h), high = columns(b, loc, z, h, h);
  Value negHigh = b.create<NegOp>(loc, high.getType(), high);
  return b.create<ConcatOp>(loc, type, ValueRange{negHigh, low},
                            b.getI64IntegerAttr(type.getRank() - 1));
}

/// The first `cols` columns of z's last axis (z itself when that is all).
static Value leadingColumns(OpBuilder &b, Location loc, Value z, int64_t cols) {
  if (cast<RankedTensorType>(z.getType()).getShape().back() == cols)
    return z;
  return columns(b, loc, z, 0, cols);
}

LogicalResult RotaryOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  auto table = cast<RankedTensorType>(getCos().getType());
  operandGrads.push_back(b.create<RotaryOp>(loc, getType(), resultGrads[0],
                                            getCos(), getSin(), !getAdjoint()));
  // The tables' gradients read the rotated columns only.
  int64_t rotated = table.getShape().back();
  Value dy = leadingColumns(b, loc, resultGrads[0], rotated);
  Value x = leadingColumns(b, loc, getInput(), rotated);
  Type type = x.getType();
  operandGrads.push_back(
      sumTo(b, loc, b.create<MulOp>(loc, type, dy, x), table));
  Value sinGrad = getAdjoint()
                      ? b.create<MulOp>(loc, type, rotateHalf(b, loc, dy), x)
                      : b.create<MulOp>(loc, type, dy, rotateHalf(b, loc, x));
  operandGrads.push_back(sumTo(b, loc, sinGrad, table));
  return success();
}

int64_t RotaryOp::getFlops() {
  // Three per rotated element; the columns past them are copied.
  auto table = cast<RankedTensorType>(getCos().getType()).getShape();
  int64_t cols = cast<RankedTensorType>(getType()).getShape().back();
  return 3 * numElements(getResult()) / cols * table.back();
}

//===----------------------------------------------------------------------===//
// DropoutOp: y = x * keep / (1 - p)    dx = dy * keep / (1 - p), the same op
// on dy with the same rng_id (the mask is regenerated, never stashed)
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio > 0.0f && ratio < 1.0f))
    return emitOpError("ratio ") << ratio << " is outside (0, 1)";
  if ((int64_t)getRngId() < 0 || (int64_t)getRngId() > UINT32_MAX)
    return emitOpError("rng_id ") << (int64_t)getRngId()
                                  << " is outside [0, 2^32)";
  return success();
}

LogicalResult DropoutOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(b.create<DropoutOp>(getLoc(), getType(), resultGrads[0],
                                             getRatioAttr(), getRngIdAttr()));
  return success();
}

int64_t DropoutOp::getFlops() { return 12 * numElements(getResult()); }

//===----------------------------------------------------------------------===//
// SoftmaxOp: y = softmax(x)     dx = y * (dy - sum(dy * y))
//            y = log_softmax(x) dx = dy - exp(y) * sum(dy)
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  int64_t axis = getAxis();
  if (axis < 0 || axis >= getType().getRank())
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << getType().getRank();
  return success();
}

LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(b.create<SoftmaxGradOp>(
      getLoc(), getType(), resultGrads[0], getResult(), getAxisAttr(),
      getLogAttr()));
  return success();
}

int64_t SoftmaxOp::getFlops() { return 12 * numElements(getResult()); }
int64_t SoftmaxGradOp::getFlops() { return 4 * numElements(getResult()); }

//===----------------------------------------------------------------------===//
// MaskedSoftmaxOp: y = softmax(mask ? scale * x : -inf) along the last axis
//   dx = scale * y * (dy - sum(dy * y)); y = 0 where masked, so dx = 0 there
//===----------------------------------------------------------------------===//

/// Whether `shape` is [..., T, T].
static bool isSquareRows(ArrayRef<int64_t> shape) {
  return shape.size() >= 2 && shape[shape.size() - 2] == shape.back();
}

LogicalResult MaskedSoftmaxOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (type.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  if (getDiagonalBlocks() && (!getMask() || !isSquareRows(type.getShape())))
    return emitOpError("diagonal_blocks needs a mask over [..., T, T] rows");
  if (!getMask())
    return success();
  auto mask = cast<RankedTensorType>(getMask().getType());
  int64_t n = type.getShape().back();
  int64_t rows = type.getNumElements() / std::max<int64_t>(n, 1);
  int64_t groups = mask.getRank() == 3 ? mask.getDimSize(0) : 1;
  int64_t maskRows =
      mask.getRank() >= 2 ? mask.getDimSize(mask.getRank() - 2) : 0;
  if (mask.getRank() < 2 || mask.getRank() > 3 || mask.getShape().back() != n ||
      groups < 1 || maskRows < 1 || rows % (groups * maskRows) != 0)
    return emitOpError("mask must be [R, ")
           << n << "] or [G, R, " << n << "] with G R dividing the " << rows
           << " rows, got " << shapeStr(mask.getShape());
  if (getDiagonalBlocks() && groups != 1)
    return emitOpError("diagonal_blocks needs an [R, N] mask");
  DenseElementsAttr bits;
  if (matchPattern(getMask(), m_Constant(&bits))) {
    auto values = llvm::to_vector(bits.getValues<bool>());
    for (int64_t r = 0; r < groups * maskRows; ++r)
      if (llvm::none_of(ArrayRef<bool>(values).slice(r * n, n),
                        [](bool keep) { return keep; }))
        return emitOpError("mask row ") << r << " keeps no element";
  }
  return success();
}

LogicalResult MaskedSoftmaxGradOp::verify() {
  auto shape = cast<RankedTensorType>(getType()).getShape();
  if (getCausal() && !isSquareRows(shape))
    return emitOpError("causal needs [..., T, T] rows, got ")
           << shapeStr(shape);
  if (getDiagonalBlocks() && !getCausal())
    return emitOpError("diagonal_blocks needs causal");
  return success();
}

LogicalResult MaskedSoftmaxOp::buildVJP(OpBuilder &b,
                                        ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(b.create<MaskedSoftmaxGradOp>(
      getLoc(), getType(), resultGrads[0], getResult(), getScaleAttr(),
      /*causal=*/nullptr, /*diagonal_blocks=*/nullptr));
  if (getMask())
    operandGrads.push_back(Value());
  return success();
}

Value MaskedSoftmaxOp::getInPlaceInput() {
  return getInPlaceOperandRoot(getInput());
}

int64_t MaskedSoftmaxOp::getFlops() { return 12 * numElements(getResult()); }
int64_t MaskedSoftmaxGradOp::getFlops() {
  return 5 * numElements(getResult());
}

//===----------------------------------------------------------------------===//
// LayerNormOp: y = xhat * g + b, xhat = (x - mean) * rstd over trailing axes
//   db = sum dy, dg = sum dy * xhat,
//   dx = rstd * (dy g - mean(dy g) - xhat * mean(dy g xhat))
//===----------------------------------------------------------------------===//

/// A normalization over the trailing axes of `op`'s input from `axis`:
/// the axis in range, every parameter (`what` in errors) of the
/// normalized shape, the result of the input's type.
static LogicalResult verifyTrailingNorm(Operation *op, int64_t axis,
                                        ValueRange params, StringRef what) {
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  if (axis < 0 || axis >= in.getRank())
    return op->emitOpError("axis ") << axis << " is out of range for rank "
                                    << in.getRank();
  ArrayRef<int64_t> trailing = in.getShape().drop_front(axis);
  for (Value v : params) {
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    if (shape != trailing)
      return op->emitOpError(what) << " must have the normalized shape "
                                   << shapeStr(trailing) << ", got "
                                   << shapeStr(shape);
  }
  if (op->getResult(0).getType() != in)
    return op->emitOpError("result type must be the input type");
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyTrailingNorm(*this, static_cast<int64_t>(getAxis()),
                            {getScale(), getBias()}, "scale and bias");
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Type scale = getScale().getType();
  auto grad = b.create<LayerNormGradOp>(
      getLoc(), TypeRange{getInput().getType(), scale, scale}, resultGrads[0],
      getInput(), getScale(), /*addend=*/Value(), getAxisAttr(),
      getEpsilonAttr());
  operandGrads.append(grad->result_begin(), grad->result_end());
  return success();
}

//===----------------------------------------------------------------------===//
// AddLayerNormOp: s = a + b, y = layer_norm(s)
//   ds_total = ds + layer_norm_grad(dy, s) (one op, ds as its addend);
//   da = db = ds_total; dscale, dbias as for layer_norm
//===----------------------------------------------------------------------===//

LogicalResult LayerNormGradOp::verify() {
  if (getInputGradSum() &&
      static_cast<int64_t>(getAxis()) != lastAxis(getInputGrad()))
    return emitOpError("an input_grad_sum needs the norm over the last "
                       "dimension");
  return verifyRowBias(*this, getInputGrad(), getInputGradSum(),
                       "input_grad_sum");
}

LogicalResult AddLayerNormOp::verify() {
  if (getLhs().getType() != getRhs().getType() ||
      getSum().getType() != getLhs().getType())
    return emitOpError("operands and sum must have one type");
  if (failed(verifyRowBias(*this, getRhs(), getRhsBias(), "rhs bias")))
    return failure();
  if (getRhsBias() && static_cast<int64_t>(getAxis()) != lastAxis(getSum()))
    return emitOpError("a rhs bias needs the norm over the last dimension");
  return verifyTrailingNorm(*this, static_cast<int64_t>(getAxis()),
                            {getScale(), getBias()}, "scale and bias");
}

LogicalResult AddLayerNormOp::buildVJP(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  Value ds = resultGrads[0], dy = resultGrads[1];
  Value dx = ds, dscale, dbias;
  if (dy) {
    Type scale = getScale().getType();
    auto grad = b.create<LayerNormGradOp>(
        getLoc(), TypeRange{getSum().getType(), scale, scale}, dy, getSum(),
        getScale(), ds, getAxisAttr(), getEpsilonAttr());
    dx = grad.getInputGrad();
    dscale = grad.getScaleGrad();
    dbias = grad.getBiasGrad();
  }
  operandGrads.append({dx, dx, dscale, dbias});
  // rhs_bias was broadcast over the rows of rhs: dx summed over them.
  if (Value rhsBias = getRhsBias())
    operandGrads.push_back(
        dx ? b.create<SumToOp>(getLoc(), rhsBias.getType(), dx).getResult()
           : Value());
  return success();
}

//===----------------------------------------------------------------------===//
// FusedElementwiseOp: a straight-line program over block registers
//===----------------------------------------------------------------------===//

LogicalResult FusedElementwiseOp::verify() {
  int64_t inputs = getInputs().size(), n = numElements(getResult());
  if (inputs < 1 || inputs > 4)
    return emitOpError("takes 1 to 4 inputs, got ") << inputs;
  if ((int64_t)getPeriods().size() != inputs)
    return emitOpError("needs one period per input");
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    int64_t p = getPeriods()[i], size = numElements(v);
    if (p < 1 || p != size || n % p != 0)
      return emitOpError("input ") << i << " has " << size
                                   << " elements, which period " << p
                                   << " does not tile " << n << " with";
  }
  ArrayRef<int64_t> program = getProgram();
  if (program.empty() || program.size() % 5 != 0)
    return emitOpError("program must be a non-empty list of 5-word "
                       "instructions");
  int64_t next = inputs;
  for (size_t at = 0; at < program.size(); at += 5) {
    ArrayRef<int64_t> ins = program.slice(at, 5);
    bool reads1 = ins[0] != 2, reads2 = ins[0] == 0;
    if (ins[0] < 0 || ins[0] > 3 || ins[2] != next ||
        (reads1 && (ins[3] < 0 || ins[3] >= next)) ||
        (reads2 && (ins[4] < 0 || ins[4] >= next)))
      return emitOpError("instruction ")
             << at / 5 << " must read earlier registers and write register "
             << next;
    ++next;
  }
  return success();
}

int64_t FusedElementwiseOp::getFlops() {
  int64_t flops = 0;
  ArrayRef<int64_t> program = getProgram();
  for (size_t at = 0; at < program.size(); at += 5)
    flops += program[at] == 1 ? 8 : 1; // a transcendental or one flop
  return flops * numElements(getResult());
}

int64_t AddLayerNormOp::getFlops() { return 9 * numElements(getResult()); }

int64_t LayerNormOp::getFlops() { return 8 * numElements(getResult()); }
int64_t LayerNormGradOp::getFlops() {
  // The addend and the input_grad_sum: one add per element each.
  return (16 + (getAddend() ? 1 : 0) + (getInputGradSum() ? 1 : 0)) *
         numElements(getInput());
}

//===----------------------------------------------------------------------===//
// RMSNormOp: y = x * rstd * g, rstd = 1/sqrt(mean(x^2) + eps) over trailing
// axes     dg = sum dy * x * rstd,
//          dx = rstd * (dy g - x * rstd^2 * mean(dy g x))
//===----------------------------------------------------------------------===//

LogicalResult RMSNormOp::verify() {
  return verifyTrailingNorm(*this, static_cast<int64_t>(getAxis()),
                            {getScale()}, "scale");
}

LogicalResult RMSNormOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  auto grad = b.create<RMSNormGradOp>(
      getLoc(), TypeRange{getInput().getType(), getScale().getType()},
      resultGrads[0], getInput(), getScale(), /*addend=*/Value(), getAxisAttr(),
      getEpsilonAttr());
  operandGrads.append(grad->result_begin(), grad->result_end());
  return success();
}

LogicalResult RMSNormGradOp::verify() {
  if (getAddend() && getAddend().getType() != getInputGrad().getType())
    return emitOpError("addend must have the input gradient's type");
  return success();
}

int64_t RMSNormOp::getFlops() { return 4 * numElements(getResult()); }
int64_t RMSNormGradOp::getFlops() {
  return (getAddend() ? 11 : 10) * numElements(getInput());
}

//===----------------------------------------------------------------------===//
// AddRMSNormOp: s = a + b, y = rms_norm(s)
//   ds_total = ds + rms_norm_grad(dy, s) (one op, ds as its addend);
//   da = db = ds_total; dscale as for rms_norm
//===----------------------------------------------------------------------===//

LogicalResult AddRMSNormOp::verify() {
  return verifyTrailingNorm(*this, static_cast<int64_t>(getAxis()),
                            {getScale()}, "scale");
}

LogicalResult AddRMSNormOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Value ds = resultGrads[0], dy = resultGrads[1];
  Value dx = ds, dscale;
  if (dy) {
    auto grad = b.create<RMSNormGradOp>(
        getLoc(), TypeRange{getSum().getType(), getScale().getType()}, dy,
        getSum(), getScale(), ds, getAxisAttr(), getEpsilonAttr());
    dx = grad.getInputGrad();
    dscale = grad.getScaleGrad();
  }
  operandGrads.append({dx, dx, dscale});
  return success();
}

int64_t AddRMSNormOp::getFlops() { return 5 * numElements(getResult()); }
