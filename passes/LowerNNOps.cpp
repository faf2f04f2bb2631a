//===- LowerNNOps.cpp - Runtime calls of NN ops -----------------*- C++ -*-===//
//
// pd-lower-to-runtime's patterns for math: matmuls, elementwise binary and
// unary math, reductions, GELU, dropout, softmax, layer norm, RMS norm and
// the cross-entropy losses. Each op becomes one call of its pdrt_* kernel
// (runtime/include/pdrt/pdrt.h, pdrt_nn.h) on its buffers' addresses.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"

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

/// The pdrt_binary code of an elementwise binary op.
static int32_t binaryCode(Operation *op) {
  if (isa<AddOp>(op))
    return PDRT_ADD;
  if (isa<SubOp>(op))
    return PDRT_SUB;
  if (isa<MulOp>(op))
    return PDRT_MUL;
  if (isa<DivOp>(op))
    return PDRT_DIV;
  if (isa<MinOp>(op))
    return PDRT_BINARY_MIN;
  return isa<MaxOp>(op) ? PDRT_BINARY_MAX : PDRT_BINARY_POW;
}

// The pd dialect's UnaryKind enum (PDEnums.td) numbers the unary functions
// as the runtime's pdrt_unary_kind does; the build checks the two agree.
static constexpr bool sameKind(UnaryKind kind, pdrt_unary_kind code) {
  return static_cast<int>(kind) == static_cast<int>(code);
}
static_assert(sameKind(UnaryKind::Neg, PDRT_NEG) &&
                  sameKind(UnaryKind::Sqrt, PDRT_SQRT) &&
                  sameKind(UnaryKind::Exp, PDRT_EXP) &&
                  sameKind(UnaryKind::Log, PDRT_LOG) &&
                  sameKind(UnaryKind::Erf, PDRT_ERF) &&
                  sameKind(UnaryKind::Tanh, PDRT_TANH) &&
                  sameKind(UnaryKind::Sigmoid, PDRT_SIGMOID) &&
                  sameKind(UnaryKind::Reciprocal, PDRT_RECIPROCAL) &&
                  sameKind(UnaryKind::Pow, PDRT_POW) &&
                  sameKind(UnaryKind::Cos, PDRT_COS) &&
                  sameKind(UnaryKind::Sin, PDRT_SIN) &&
                  sameKind(UnaryKind::Silu, PDRT_SILU) &&
                  getMaxEnumValForUnaryKind() == PDRT_SILU,
              "pd UnaryKind differs from runtime/include/pdrt/pdrt_codes.h");

/// pdrt_unary for a unary math op of `kind`.
static void lowerUnary(RuntimeCallBuilder &b, Operation *op, UnaryKind kind,
                       float alpha) {
  Value x = op->getOperand(0), y = op->getResult(0);
  b.call(RuntimeFn::pdrt_unary,
         {b.ctx(), b.i32(static_cast<int32_t>(kind)), b.f32(alpha),
          b.address(x), b.address(y), b.i64(numel(y))});
}

/// The outer/dim/inner split of a shape around `axis`.
static std::array<int64_t, 3> splitAt(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), shape[axis],
          product(shape.drop_front(axis + 1))};
}

/// pdrt_softmax, or pdrt_softmax_grad when `grad` is given.
static void lowerSoftmax(RuntimeCallBuilder &b, Operation *op, Value in,
                         int64_t axis, bool log, Value grad) {
  Value out = op->getResult(0);
  auto [outer, dim, inner] = splitAt(shapeOf(out), axis);
  SmallVector<Value> args{b.ctx()};
  if (grad)
    args.push_back(b.address(grad));
  args.append({b.address(in), b.address(out), b.i64(outer), b.i64(dim),
               b.i64(inner), b.i32(log)});
  b.call(grad ? RuntimeFn::pdrt_softmax_grad : RuntimeFn::pdrt_softmax, args);
}

/// Rows (the product of the dims before `axis`) and the row length of a
/// normalization over the trailing dims of `v`.
static std::pair<int64_t, int64_t> normRows(Value v, int64_t axis) {
  int64_t rows = product(shapeOf(v).take_front(axis));
  return {rows, numel(v) / std::max<int64_t>(rows, 1)};
}

/// Matmuls and the elementwise ops of pdrt.h.
static void populateCoreMath(RuntimePatterns &patterns) {
  patterns.add<MatMulOp>([](MatMulOp mm, RuntimeCallBuilder &b) {
    bool ta = mm.getTransposeLhs(), tb = mm.getTransposeRhs();
    int64_t m = shapeOf(mm)[0], n = shapeOf(mm)[1];
    int64_t k = shapeOf(mm.getLhs())[ta ? 0 : 1];
    if (Value bias = mm.getBias()) {
      // C = alpha A B + bias, the product started from the bias rows.
      b.call(RuntimeFn::pdrt_matmul_bias,
             {b.ctx(), b.address(mm.getLhs()), b.address(mm.getRhs()),
              b.address(bias), b.address(mm), b.i64(m), b.i64(n), b.i64(k),
              b.i32(ta), b.i32(tb), b.f32(mm.getAlpha().convertToFloat())});
      return success();
    }
    // pd.accumulate: C += A B into the gradient accumulator.
    bool accumulate = PDDialect::AccumulateAttrHelper(mm.getContext())
                          .isAttrPresent(mm);
    b.call(RuntimeFn::pdrt_matmul,
           {b.ctx(), b.address(mm.getLhs()), b.address(mm.getRhs()),
            b.address(mm), b.i64(m), b.i64(n), b.i64(k), b.i32(ta), b.i32(tb),
            b.f32(mm.getAlpha().convertToFloat()), b.f32(accumulate ? 1 : 0)});
    return success();
  });
  patterns.add<AddOp, SubOp, MulOp, DivOp, PowBroadcastOp, MinOp, MaxOp>(
      [](auto op, RuntimeCallBuilder &b) {
        Value lhs = op->getOperand(0), rhs = op->getOperand(1);
        Value desc = b.descriptor(
            makeDescriptor(shapeOf(op), {shapeOf(lhs), shapeOf(rhs)}));
        b.call(RuntimeFn::pdrt_binary,
               {b.ctx(), b.i32(binaryCode(op)), b.address(lhs), b.address(rhs),
                b.address(op), desc});
        return success();
      });
  patterns.add<ReluOp>([](ReluOp r, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_relu,
           {b.ctx(), b.address(r.getInput()), b.address(r), b.i64(numel(r))});
    return success();
  });
  patterns.add<ReluGradOp>([](ReluGradOp r, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_relu_grad,
           {b.ctx(), b.address(r.getGrad()), b.address(r.getOutput()),
            b.address(r), b.i64(numel(r))});
    return success();
  });
  patterns.add<ScaleOp>([](ScaleOp s, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_scale,
           {b.ctx(), b.address(s.getInput()), b.address(s), b.i64(numel(s)),
            b.f32(s.getFactor().convertToFloat())});
    return success();
  });
}

/// Reductions and broadcasts.
static void populateReductions(RuntimePatterns &patterns) {
  patterns.add<SumToOp>([](SumToOp s, RuntimeCallBuilder &b) {
    Value desc =
        b.descriptor(makeDescriptor(shapeOf(s.getInput()), {shapeOf(s)}));
    b.call(RuntimeFn::pdrt_sum_to, {b.ctx(), b.address(s.getInput()),
                                    b.address(s), b.i64(numel(s)), desc});
    return success();
  });
  patterns.add<ReduceSumOp>([](ReduceSumOp r, RuntimeCallBuilder &b) {
    auto in = shapeOf(r.getInput());
    Value desc =
        b.descriptor(makeDescriptor(in, {keptShape(in, r.getAxes())}));
    b.call(RuntimeFn::pdrt_sum_to, {b.ctx(), b.address(r.getInput()),
                                    b.address(r), b.i64(numel(r)), desc});
    return success();
  });
  patterns.add<BroadcastAxesOp>([](BroadcastAxesOp bc, RuntimeCallBuilder &b) {
    auto out = shapeOf(bc);
    Value desc =
        b.descriptor(makeDescriptor(out, {keptShape(out, bc.getAxes())}));
    b.call(RuntimeFn::pdrt_broadcast,
           {b.ctx(), b.address(bc.getInput()), b.address(bc), desc});
    return success();
  });
}

/// Unary math, SwiGLU, rotary embedding, GELU and dropout, with their
/// gradients.
static void populateElementwise(RuntimePatterns &patterns) {
  patterns.add<NegOp, SqrtOp, ExpOp, LogOp, ErfOp, TanhOp, SigmoidOp,
               ReciprocalOp, CosOp, SinOp, SiluOp>([](auto u,
                                                     RuntimeCallBuilder &b) {
    lowerUnary(b, u, decltype(u)::kKind, 0.0f);
    return success();
  });
  patterns.add<PowOp>([](PowOp p, RuntimeCallBuilder &b) {
    lowerUnary(b, p, PowOp::kPowKind, p.getExponent().convertToFloat());
    return success();
  });
  patterns.add<UnaryGradOp>([](UnaryGradOp g, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_unary_grad,
           {b.ctx(), b.i32(static_cast<int32_t>(g.getKind())),
            b.f32(g.getAlpha().convertToFloat()), b.address(g.getGrad()),
            b.address(g.getInput()), b.address(g.getOutput()), b.address(g),
            b.i64(numel(g))});
    return success();
  });
  patterns.add<MinMaxGradOp>([](MinMaxGradOp g, RuntimeCallBuilder &b) {
    Value desc = b.descriptor(makeDescriptor(
        shapeOf(g), {shapeOf(g.getLhs()), shapeOf(g.getRhs())}));
    b.call(RuntimeFn::pdrt_minmax_grad,
           {b.ctx(), b.i32(g.getIsMax() ? PDRT_BINARY_MAX : PDRT_BINARY_MIN),
            b.address(g.getGrad()), b.address(g.getLhs()),
            b.address(g.getRhs()), b.address(g), desc, b.i32(g.getWhich())});
    return success();
  });
  patterns.add<DropoutOp>([](DropoutOp d, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_dropout,
           {b.ctx(), b.address(d.getInput()), b.address(d), b.i64(numel(d)),
            b.f32(d.getRatio().convertToFloat()),
            b.i64(static_cast<int64_t>(d.getRngId()))});
    return success();
  });
  patterns.add<SwigluOp>([](SwigluOp s, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_swiglu,
           {b.ctx(), b.address(s.getGate()), b.address(s.getUp()),
            b.address(s), b.i64(numel(s))});
    return success();
  });
  patterns.add<SwigluGradOp>([](SwigluGradOp g, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_swiglu_grad,
           {b.ctx(), b.address(g.getGrad()), b.address(g.getGate()),
            b.address(g.getUp()), b.address(g.getGateGrad()),
            b.address(g.getUpGrad()), b.i64(numel(g.getGrad()))});
    return success();
  });
  patterns.add<GegluOp>([](GegluOp g, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_geglu,
           {b.ctx(), b.i32(g.getApproximate() == GeluApproximation::Tanh),
            b.address(g.getGate()), b.address(g.getUp()), b.address(g),
            b.i64(numel(g))});
    return success();
  });
  patterns.add<GegluGradOp>([](GegluGradOp g, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_geglu_grad,
           {b.ctx(), b.i32(g.getApproximate() == GeluApproximation::Tanh),
            b.address(g.getGrad()), b.address(g.getGate()),
            b.address(g.getUp()), b.address(g.getGateGrad()),
            b.address(g.getUpGrad()), b.i64(numel(g.getGrad()))});
    return success();
  });
  patterns.add<RotaryOp>([](RotaryOp r, RuntimeCallBuilder &b) {
    auto shape = shapeOf(r), table = shapeOf(r.getCos());
    auto [tableRows, repeat] = *RotaryOp::tableLayout(shape, table);
    b.call(RuntimeFn::pdrt_rotary,
           {b.ctx(), b.address(r.getInput()), b.address(r.getCos()),
            b.address(r.getSin()), b.address(r), b.i64(numel(r) / shape.back()),
            b.i64(shape.back()), b.i64(table.back()), b.i64(tableRows),
            b.i64(repeat), b.i32(r.getAdjoint() ? 1 : 0)});
    return success();
  });
  patterns.add<GeluOp>([](GeluOp g, RuntimeCallBuilder &b) {
    Value tanh = b.i32(g.getApproximate() == GeluApproximation::Tanh);
    if (Value bias = g.getBias()) {
      // gelu(x + bias), the bias broadcast over the rows.
      int64_t cols = numel(bias);
      b.call(RuntimeFn::pdrt_gelu_bias,
             {b.ctx(), tanh, b.address(g.getInput()), b.address(bias),
              b.address(g), b.i64(cols ? numel(g) / cols : 0), b.i64(cols)});
      return success();
    }
    b.call(RuntimeFn::pdrt_gelu,
           {b.ctx(), tanh, b.address(g.getInput()), b.address(g),
            b.i64(numel(g))});
    return success();
  });
  patterns.add<GeluGradOp>([](GeluGradOp g, RuntimeCallBuilder &b) {
    Value dx = g.getResult();
    Value tanh = b.i32(g.getApproximate() == GeluApproximation::Tanh);
    Value bias = g.getInputBias(), db = g.getBiasGrad();
    if (bias || db) {
      // Rows at x + bias, and dx's sum over the rows (the bias gradient),
      // in one pass.
      int64_t cols = numel(bias ? bias : db);
      b.call(RuntimeFn::pdrt_gelu_grad_bias,
             {b.ctx(), tanh, b.address(g.getGrad()), b.address(g.getInput()),
              bias ? b.address(bias) : b.null(), b.address(dx),
              db ? b.address(db) : b.null(),
              b.i64(cols ? numel(dx) / cols : 0), b.i64(cols)});
      return success();
    }
    b.call(RuntimeFn::pdrt_gelu_grad,
           {b.ctx(), tanh, b.address(g.getGrad()), b.address(g.getInput()),
            b.address(dx), b.i64(numel(dx))});
    return success();
  });
}

/// Softmax, layer norm and RMS norm, with their gradients.
static void populateNormalizations(RuntimePatterns &patterns) {
  patterns.add<SoftmaxOp>([](SoftmaxOp s, RuntimeCallBuilder &b) {
    lowerSoftmax(b, s, s.getInput(), s.getAxis(), s.getLog(), Value());
    return success();
  });
  patterns.add<SoftmaxGradOp>([](SoftmaxGradOp s, RuntimeCallBuilder &b) {
    lowerSoftmax(b, s, s.getOutput(), s.getAxis(), s.getLog(), s.getGrad());
    return success();
  });
  patterns.add<MaskedSoftmaxOp>([](MaskedSoftmaxOp s, RuntimeCallBuilder &b) {
    int64_t dim = shapeOf(s).back();
    Value mask = s.getMask();
    // [R, N] or [G, R, N]: G groups of R mask rows.
    ArrayRef<int64_t> maskShape = mask ? shapeOf(mask) : ArrayRef<int64_t>();
    int64_t maskRows = mask ? maskShape[maskShape.size() - 2] : 1;
    int64_t groups = maskShape.size() == 3 ? maskShape.front() : 1;
    b.call(RuntimeFn::pdrt_masked_softmax,
           {b.ctx(), b.address(s.getInput()), mask ? b.address(mask) : b.null(),
            b.address(s), b.i64(numel(s) / dim), b.i64(dim), b.i64(maskRows),
            b.i64(groups), b.f32(s.getScale().convertToFloat()),
            b.i64(s.getDiagonalBlocks() ? BatchMatMulOp::kCausalBlock : 0),
            b.i64((s.getZeroNanRows() ? PDRT_SOFTMAX_ZERO_NAN_ROWS : 0) |
                  (s.getUniformEmptyRows() ? PDRT_SOFTMAX_UNIFORM_EMPTY_ROWS
                                           : 0))});
    return success();
  });
  patterns.add<MaskedSoftmaxGradOp>(
      [](MaskedSoftmaxGradOp s, RuntimeCallBuilder &b) {
        auto shape = shapeOf(s);
        int64_t dim = shape.back();
        int64_t causalRows = s.getCausal() ? shape[shape.size() - 2] : 0;
        b.call(RuntimeFn::pdrt_masked_softmax_grad,
               {b.ctx(), b.address(s.getGrad()), b.address(s.getOutput()),
                b.address(s), b.i64(numel(s) / dim), b.i64(dim),
                b.f32(s.getScale().convertToFloat()), b.i64(causalRows),
                b.i64(s.getDiagonalBlocks() ? BatchMatMulOp::kCausalBlock
                                            : 0)});
        return success();
      });
  patterns.add<LayerNormOp>([](LayerNormOp n, RuntimeCallBuilder &b) {
    auto [rows, cols] = normRows(n, n.getAxis());
    b.call(RuntimeFn::pdrt_layer_norm,
           {b.ctx(), b.address(n.getInput()), b.address(n.getScale()),
            b.address(n.getBias()), b.address(n), b.i64(rows), b.i64(cols),
            b.f32(n.getEpsilon().convertToFloat())});
    return success();
  });
  patterns.add<LayerNormGradOp>([](LayerNormGradOp n, RuntimeCallBuilder &b) {
    auto [rows, cols] = normRows(n.getInput(), n.getAxis());
    Value addend = n.getAddend(), sum = n.getInputGradSum();
    b.call(RuntimeFn::pdrt_layer_norm_grad,
           {b.ctx(), b.address(n.getGrad()), b.address(n.getInput()),
            b.address(n.getScale()), addend ? b.address(addend) : b.null(),
            b.address(n.getInputGrad()), b.address(n.getScaleGrad()),
            b.address(n.getBiasGrad()), sum ? b.address(sum) : b.null(),
            b.i64(rows), b.i64(cols), b.f32(n.getEpsilon().convertToFloat())});
    return success();
  });
  patterns.add<FusedElementwiseOp>(
      [](FusedElementwiseOp f, RuntimeCallBuilder &b) {
        SmallVector<int64_t> words{numel(f), (int64_t)f.getInputs().size()};
        words.append(f.getPeriods().begin(), f.getPeriods().end());
        ArrayRef<int64_t> program = f.getProgram();
        int64_t instructions = program.size() / 5;
        words.push_back(f.getInputs().size() + instructions);
        words.push_back(instructions);
        words.append(program.begin(), program.end());
        SmallVector<Value> args{b.ctx(), b.descriptor(words), b.address(f)};
        for (size_t i = 0; i < 4; ++i)
          args.push_back(i < f.getInputs().size()
                             ? b.address(f.getInputs()[i])
                             : b.null());
        b.call(RuntimeFn::pdrt_elementwise_chain, args);
        return success();
      });
  patterns.add<AddLayerNormOp>([](AddLayerNormOp n, RuntimeCallBuilder &b) {
    auto [rows, cols] = normRows(n.getSum(), n.getAxis());
    Value rhsBias = n.getRhsBias();
    b.call(RuntimeFn::pdrt_add_layer_norm,
           {b.ctx(), b.address(n.getLhs()), b.address(n.getRhs()),
            rhsBias ? b.address(rhsBias) : b.null(),
            b.address(n.getScale()), b.address(n.getBias()),
            b.address(n.getSum()), b.address(n.getResult()), b.i64(rows),
            b.i64(cols), b.f32(n.getEpsilon().convertToFloat())});
    return success();
  });
  patterns.add<RMSNormOp>([](RMSNormOp n, RuntimeCallBuilder &b) {
    auto [rows, cols] = normRows(n, n.getAxis());
    b.call(RuntimeFn::pdrt_rms_norm,
           {b.ctx(), b.address(n.getInput()), b.address(n.getScale()),
            b.address(n), b.i64(rows), b.i64(cols),
            b.f32(n.getEpsilon().convertToFloat())});
    return success();
  });
  patterns.add<AddRMSNormOp>([](AddRMSNormOp n, RuntimeCallBuilder &b) {
    auto [rows, cols] = normRows(n.getSum(), n.getAxis());
    b.call(RuntimeFn::pdrt_add_rms_norm,
           {b.ctx(), b.address(n.getLhs()), b.address(n.getRhs()),
            b.address(n.getScale()), b.address(n.getSum()),
            b.address(n.getResult()), b.i64(rows), b.i64(cols),
            b.f32(n.getEpsilon().convertToFloat())});
    return success();
  });
  patterns.add<RMSNormGradOp>([](RMSNormGradOp n, RuntimeCallBuilder &b) {
    auto [rows, cols] = normRows(n.getInput(), n.getAxis());
    Value addend = n.getAddend();
    b.call(RuntimeFn::pdrt_rms_norm_grad,
           {b.ctx(), b.address(n.getGrad()), b.address(n.getInput()),
            b.address(n.getScale()), addend ? b.address(addend) : b.null(),
            b.address(n.getInputGrad()), b.address(n.getScaleGrad()),
            b.i64(rows), b.i64(cols), b.f32(n.getEpsilon().convertToFloat())});
    return success();
  });
}

/// Softmax cross-entropy (mean, or per row), its gradient, and both at once.
static void populateLosses(RuntimePatterns &patterns) {
  patterns.add<SoftmaxCrossEntropyLossOp>(
      [](SoftmaxCrossEntropyLossOp l, RuntimeCallBuilder &b) {
        auto dims = shapeOf(l.getLogits());
        b.call(l.getType().getRank() ? RuntimeFn::pdrt_softmax_xent_rows
                                     : RuntimeFn::pdrt_softmax_xent,
               {b.ctx(), b.address(l.getLogits()), b.address(l.getLabels()),
                b.address(l), b.i64(dims[0]), b.i64(dims[1]),
                b.i64(l.getIgnoreIndex())});
        return success();
      });
  patterns.add<SoftmaxCrossEntropyLossGradOp>(
      [](SoftmaxCrossEntropyLossGradOp l, RuntimeCallBuilder &b) {
        auto dims = shapeOf(l.getLogits());
        bool rows = l.getGrad().getType().getRank() != 0;
        b.call(rows ? RuntimeFn::pdrt_softmax_xent_rows_grad
                    : RuntimeFn::pdrt_softmax_xent_grad,
               {b.ctx(), b.address(l.getGrad()), b.address(l.getLogits()),
                b.address(l.getLabels()), b.address(l), b.i64(dims[0]),
                b.i64(dims[1]), b.i64(l.getIgnoreIndex())});
        return success();
      });
  patterns.add<SoftmaxCrossEntropyWithGradOp>(
      [](SoftmaxCrossEntropyWithGradOp l, RuntimeCallBuilder &b) {
        auto dims = shapeOf(l.getLogits());
        b.call(RuntimeFn::pdrt_softmax_xent_with_grad,
               {b.ctx(), b.address(l.getLogits()), b.address(l.getLabels()),
                b.address(l.getLoss()), b.address(l.getDlogits()),
                b.i64(dims[0]), b.i64(dims[1]), b.i64(l.getIgnoreIndex())});
        return success();
      });
}

void mlir::pd::populateNNRuntimePatterns(RuntimePatterns &patterns) {
  populateCoreMath(patterns);
  populateReductions(patterns);
  populateElementwise(patterns);
  populateNormalizations(patterns);
  populateLosses(patterns);
}
