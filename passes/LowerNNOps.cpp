//===- LowerNNOps.cpp - Runtime calls of NN ops -----------------*- C++ -*-===//
//
// pd-lower-to-runtime's hook for neural-network math (reductions, unary
// math, GELU, division, min/max, softmax, layer norm and RMS norm): each op
// becomes one call of its
// pdrt_* kernel (runtime/include/pdrt/pdrt_nn.h) on the addresses
// StageLowering computes.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pd;

/// `shape` with the dimensions at `axes` set to 1.
static SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> axes) {
  SmallVector<int64_t> out(shape);
  for (int64_t a : axes)
    out[a] = 1;
  return out;
}

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// The pdrt_binary code of pd.div, pd.pow_broadcast, pd.min or pd.max.
static int32_t binaryCode(Operation *op) {
  if (isa<DivOp>(op))
    return PDRT_DIV;
  if (isa<MinOp>(op))
    return PDRT_BINARY_MIN;
  return isa<MaxOp>(op) ? PDRT_BINARY_MAX : PDRT_BINARY_POW;
}

// The pd dialect numbers its unary math ops (PD_UnaryMathOp in PDOpsNN.td)
// with the runtime's codes; the build checks the two tables agree.
static_assert(NegOp::kKind == PDRT_NEG && SqrtOp::kKind == PDRT_SQRT &&
                  ExpOp::kKind == PDRT_EXP && LogOp::kKind == PDRT_LOG &&
                  ErfOp::kKind == PDRT_ERF && TanhOp::kKind == PDRT_TANH &&
                  SigmoidOp::kKind == PDRT_SIGMOID &&
                  ReciprocalOp::kKind == PDRT_RECIPROCAL &&
                  PowOp::kPowKind == PDRT_POW && CosOp::kKind == PDRT_COS &&
                  SinOp::kKind == PDRT_SIN,
              "pd unary kinds differ from runtime/include/pdrt/pdrt_codes.h");

/// Calls pdrt_unary for a unary math op of `kind`.
static LogicalResult lowerUnary(StageLowering &L, Operation *op, int64_t kind,
                                float alpha) {
  Value x = op->getOperand(0), y = op->getResult(0);
  L.call("pdrt_unary", {L.ctx(), L.i32(kind), L.f32(alpha), L.address(x),
                        L.address(y), L.i64(numel(y))});
  return success();
}

/// The outer/dim/inner split of a shape around `axis`.
static std::array<int64_t, 3> splitAt(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), shape[axis],
          product(shape.drop_front(axis + 1))};
}

static LogicalResult lowerSoftmax(StageLowering &L, Operation *op, Value in,
                                  Value out, int64_t axis, bool log,
                                  Value grad) {
  auto [outer, dim, inner] = splitAt(shapeOf(out), axis);
  SmallVector<Value> args{L.ctx()};
  if (grad)
    args.push_back(L.address(grad));
  args.append({L.address(in), L.address(op->getResult(0)), L.i64(outer),
               L.i64(dim), L.i64(inner), L.i32(log)});
  L.call(grad ? "pdrt_softmax_grad" : "pdrt_softmax", args);
  return success();
}

std::optional<LogicalResult> mlir::pd::lowerNNOp(StageLowering &L,
                                                 Operation *op) {
  return TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case<ReduceSumOp>([&](ReduceSumOp r) {
        auto in = shapeOf(r.getInput());
        Value desc = L.descriptor(
            makeDescriptor(in, {keptShape(in, r.getAxes())}));
        L.call("pdrt_sum_to", {L.ctx(), L.address(r.getInput()), L.address(r),
                               L.i64(numel(r)), desc});
        return success();
      })
      .Case<BroadcastAxesOp>([&](BroadcastAxesOp b) {
        auto out = shapeOf(b);
        Value desc = L.descriptor(
            makeDescriptor(out, {keptShape(out, b.getAxes())}));
        L.call("pdrt_broadcast",
               {L.ctx(), L.address(b.getInput()), L.address(b), desc});
        return success();
      })
      .Case<DivOp, PowBroadcastOp, MinOp, MaxOp>([&](Operation *d) {
        Value lhs = d->getOperand(0), rhs = d->getOperand(1),
              out = d->getResult(0);
        Value desc = L.descriptor(
            makeDescriptor(shapeOf(out), {shapeOf(lhs), shapeOf(rhs)}));
        L.call("pdrt_binary",
               {L.ctx(), L.i32(binaryCode(d)), L.address(lhs),
                L.address(rhs), L.address(out), desc});
        return success();
      })
      .Case<NegOp, SqrtOp, ExpOp, LogOp, ErfOp, TanhOp, SigmoidOp,
            ReciprocalOp, CosOp, SinOp>(
          [&](auto u) { return lowerUnary(L, op, decltype(u)::kKind, 0.0f); })
      .Case<PowOp>([&](PowOp p) {
        return lowerUnary(L, op, PowOp::kPowKind,
                          p.getExponent().convertToFloat());
      })
      .Case<MinMaxGradOp>([&](MinMaxGradOp g) {
        Value desc = L.descriptor(makeDescriptor(
            shapeOf(g), {shapeOf(g.getLhs()), shapeOf(g.getRhs())}));
        L.call("pdrt_minmax_grad",
               {L.ctx(), L.i32(g.getIsMax() ? PDRT_BINARY_MAX : PDRT_BINARY_MIN),
                L.address(g.getGrad()), L.address(g.getLhs()),
                L.address(g.getRhs()), L.address(g), desc,
                L.i32(g.getWhich())});
        return success();
      })
      .Case<UnaryGradOp>([&](UnaryGradOp g) {
        L.call("pdrt_unary_grad",
               {L.ctx(), L.i32(g.getKind()), L.f32(g.getAlpha().convertToFloat()),
                L.address(g.getGrad()), L.address(g.getInput()),
                L.address(g.getOutput()), L.address(g), L.i64(numel(g))});
        return success();
      })
      .Case<DropoutOp>([&](DropoutOp d) {
        L.call("pdrt_dropout",
               {L.ctx(), L.address(d.getInput()), L.address(d), L.i64(numel(d)),
                L.f32(d.getRatio().convertToFloat()),
                L.i64((int64_t)d.getRngId())});
        return success();
      })
      .Case<GeluOp>([&](GeluOp g) {
        L.call("pdrt_gelu",
               {L.ctx(), L.i32(g.getApproximate() == "tanh"),
                L.address(g.getInput()), L.address(g), L.i64(numel(g))});
        return success();
      })
      .Case<GeluGradOp>([&](GeluGradOp g) {
        L.call("pdrt_gelu_grad",
               {L.ctx(), L.i32(g.getApproximate() == "tanh"),
                L.address(g.getGrad()), L.address(g.getInput()), L.address(g),
                L.i64(numel(g))});
        return success();
      })
      .Case<SoftmaxOp>([&](SoftmaxOp s) {
        return lowerSoftmax(L, op, s.getInput(), s, s.getAxis(), s.getLog(),
                            Value());
      })
      .Case<SoftmaxGradOp>([&](SoftmaxGradOp s) {
        return lowerSoftmax(L, op, s.getOutput(), s, s.getAxis(), s.getLog(),
                            s.getGrad());
      })
      .Case<LayerNormOp>([&](LayerNormOp n) {
        auto shape = shapeOf(n);
        int64_t rows = product(shape.take_front(n.getAxis()));
        L.call("pdrt_layer_norm",
               {L.ctx(), L.address(n.getInput()), L.address(n.getScale()),
                L.address(n.getBias()), L.address(n), L.i64(rows),
                L.i64(numel(n) / std::max<int64_t>(rows, 1)),
                L.f32(n.getEpsilon().convertToFloat())});
        return success();
      })
      .Case<LayerNormGradOp>([&](LayerNormGradOp n) {
        auto shape = shapeOf(n.getInput());
        int64_t rows = product(shape.take_front(n.getAxis()));
        L.call("pdrt_layer_norm_grad",
               {L.ctx(), L.address(n.getGrad()), L.address(n.getInput()),
                L.address(n.getScale()), L.address(n.getInputGrad()),
                L.address(n.getScaleGrad()), L.address(n.getBiasGrad()),
                L.i64(rows), L.i64(numel(n.getInput()) / std::max<int64_t>(rows, 1)),
                L.f32(n.getEpsilon().convertToFloat())});
        return success();
      })
      .Case<RMSNormOp>([&](RMSNormOp n) {
        int64_t rows = product(shapeOf(n).take_front(n.getAxis()));
        L.call("pdrt_rms_norm",
               {L.ctx(), L.address(n.getInput()), L.address(n.getScale()),
                L.address(n), L.i64(rows),
                L.i64(numel(n) / std::max<int64_t>(rows, 1)),
                L.f32(n.getEpsilon().convertToFloat())});
        return success();
      })
      .Case<RMSNormGradOp>([&](RMSNormGradOp n) {
        int64_t rows = product(shapeOf(n.getInput()).take_front(n.getAxis()));
        L.call("pdrt_rms_norm_grad",
               {L.ctx(), L.address(n.getGrad()), L.address(n.getInput()),
                L.address(n.getScale()), L.address(n.getInputGrad()),
                L.address(n.getScaleGrad()), L.i64(rows),
                L.i64(numel(n.getInput()) / std::max<int64_t>(rows, 1)),
                L.f32(n.getEpsilon().convertToFloat())});
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}
