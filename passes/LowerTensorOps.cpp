//===- LowerTensorOps.cpp - Runtime calls of tensor ops ---------*- C++ -*-===//
//
// pd-lower-to-runtime's patterns for the tensor and shape ops: each op
// becomes calls of the pdrt_* kernels of runtime/include/pdrt/pdrt_tensor.h
// on its buffers' addresses. Transpose, slice and broadcast_to are
// strided copies (pdrt_permute), reshape a plain copy (buffers never alias
// yet), slice gradients and concat the inverse copy (pdrt_scatter, or
// pdrt_scatter_any for integer and bool tensors). Gather, GatherElements,
// comparisons, logical not and casts of run-time tensors call their
// element-type-aware kernels.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::pd;

/// Element size in bytes of a tensor value.
static int64_t elementBytes(Value v) {
  return getElementBytes(v.getType());
}

/// [rank, out_dims, input strides permuted by perm] for pdrt_permute.
static SmallVector<int64_t> permuteDescriptor(ArrayRef<int64_t> inShape,
                                              ArrayRef<int64_t> perm) {
  int64_t rank = inShape.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * inShape[i + 1];
  SmallVector<int64_t> words{std::max<int64_t>(rank, 1)};
  if (rank == 0)
    return {1, 1, 1};
  for (int64_t p : perm)
    words.push_back(inShape[p]);
  for (int64_t p : perm)
    words.push_back(strides[p]);
  return words;
}

/// Row-major strides of `shape` times `steps`, and the element offset of
/// `starts`: the view a slice reads (or its gradient writes).
static std::pair<SmallVector<int64_t>, int64_t>
windowStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> starts,
              ArrayRef<int64_t> steps) {
  int64_t rank = shape.size(), base = 0, stride = 1;
  SmallVector<int64_t> strides(rank);
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride * steps[d];
    base += starts[d] * stride;
    stride *= shape[d];
  }
  return {strides, base};
}

/// [rank, dims, strides] (rank-0 becomes [1]).
static SmallVector<int64_t> viewDescriptor(ArrayRef<int64_t> dims,
                                           ArrayRef<int64_t> strides) {
  if (dims.empty())
    return {1, 1, 1};
  SmallVector<int64_t> words{(int64_t)dims.size()};
  words.append(dims.begin(), dims.end());
  words.append(strides.begin(), strides.end());
  return words;
}

/// [outer, rows, inner] of data of `shape` gathered along `axis`: the
/// element counts before, at and after the axis.
static std::tuple<int64_t, int64_t, int64_t> gatherDims(ArrayRef<int64_t> shape,
                                                        int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < (int64_t)shape.size(); ++d)
    inner *= shape[d];
  return {outer, shape[axis], inner};
}

/// Writes each concatenated input into its window of the result.
static LogicalResult lowerConcat(RuntimeCallBuilder &b, ConcatOp c) {
  // pd-concat-in-place: the GEMMs computing the inputs wrote the result.
  if (PDDialect::InPlacePartsAttrHelper(c.getContext()).isAttrPresent(c))
    return success();
  auto out = shapeOf(c);
  int64_t offset = 0, rank = out.size();
  bool isFloat = cast<RankedTensorType>(c.getType()).getElementType().isF32();
  for (Value in : c.getInputs()) {
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    starts[c.getAxis()] = offset;
    offset += shapeOf(in)[c.getAxis()];
    auto [strides, base] = windowStrides(out, starts, steps);
    SmallVector<Value> args{b.ctx(), b.address(in), b.address(c),
                            b.i64(numel(c)), b.i64(base),
                            b.descriptor(viewDescriptor(shapeOf(in), strides)),
                            b.i32(PDRT_SCATTER_INTO)};
    if (!isFloat)
      args.push_back(b.i64(elementBytes(c)));
    b.call(isFloat ? RuntimeFn::pdrt_scatter : RuntimeFn::pdrt_scatter_any, args);
  }
  return success();
}

/// pdrt_gather over the [outer, rows, inner] view of the data.
static LogicalResult lowerGather(RuntimeCallBuilder &b, GatherOp g) {
  auto [outer, rows, inner] = gatherDims(shapeOf(g.getData()), g.getAxis());
  b.call(RuntimeFn::pdrt_gather,
         {b.ctx(), b.address(g.getData()), b.address(g.getIndices()),
          b.address(g), b.i64(outer), b.i64(numel(g.getIndices())), b.i64(rows),
          b.i64(inner), b.i64(elementBytes(g))});
  return success();
}

/// pdrt_gather_grad into the [outer, rows, inner] view of the result,
/// zeroed first unless pd.accumulate homes it in a gradient accumulator.
static LogicalResult lowerGatherGrad(RuntimeCallBuilder &b, GatherGradOp g) {
  auto [outer, rows, inner] = gatherDims(shapeOf(g), g.getAxis());
  bool accumulate =
      PDDialect::AccumulateAttrHelper(g.getContext()).isAttrPresent(g);
  b.call(RuntimeFn::pdrt_gather_grad,
         {b.ctx(), b.address(g.getGrad()), b.address(g.getIndices()),
          b.address(g), b.i64(outer), b.i64(numel(g.getIndices())), b.i64(rows),
          b.i64(inner),
          b.i32(accumulate ? PDRT_SCATTER_INTO : PDRT_SCATTER_ZERO_FIRST)});
  return success();
}

/// [rank, axis, data dims, indices dims] of a GatherElements over `data`.
static SmallVector<int64_t> gatherElementsDescriptor(ArrayRef<int64_t> data,
                                                     ArrayRef<int64_t> idx,
                                                     int64_t axis) {
  SmallVector<int64_t> words{(int64_t)data.size(), axis};
  words.append(data.begin(), data.end());
  words.append(idx.begin(), idx.end());
  return words;
}

/// pdrt_gather_elements, elements of any size.
static LogicalResult lowerGatherElements(RuntimeCallBuilder &b,
                                         GatherElementsOp g) {
  b.call(RuntimeFn::pdrt_gather_elements,
         {b.ctx(), b.address(g.getData()), b.address(g.getIndices()),
          b.address(g),
          b.descriptor(gatherElementsDescriptor(
              shapeOf(g.getData()), shapeOf(g.getIndices()), g.getAxis())),
          b.i64(elementBytes(g))});
  return success();
}

/// pdrt_gather_elements_grad: zero, then scatter-add dy.
static LogicalResult lowerGatherElementsGrad(RuntimeCallBuilder &b,
                                             GatherElementsGradOp g) {
  b.call(RuntimeFn::pdrt_gather_elements_grad,
         {b.ctx(), b.address(g.getGrad()), b.address(g.getIndices()),
          b.address(g),
          b.descriptor(gatherElementsDescriptor(
              shapeOf(g), shapeOf(g.getIndices()), g.getAxis()))});
  return success();
}

/// The pdrt element type code (PDRT_DT_* of pdrt_tensor.h) of a tensor.
static int32_t dtypeCode(Value v) {
  Type elem = cast<RankedTensorType>(v.getType()).getElementType();
  if (elem.isF32())
    return PDRT_DT_F32;
  if (elem.isInteger(64))
    return PDRT_DT_I64;
  return elem.isInteger(32) ? PDRT_DT_I32 : PDRT_DT_BOOL;
}

/// The pdrt_compare code (PDRT_CMP_* / PDRT_LOGIC_* of pdrt_tensor.h) of a
/// predicate.
static int32_t predicateCode(StringRef predicate) {
  return llvm::StringSwitch<int32_t>(predicate)
      .Case("eq", PDRT_CMP_EQ)
      .Case("lt", PDRT_CMP_LT)
      .Case("le", PDRT_CMP_LE)
      .Case("gt", PDRT_CMP_GT)
      .Case("ge", PDRT_CMP_GE)
      .Case("and", PDRT_LOGIC_AND)
      .Case("or", PDRT_LOGIC_OR)
      .Case("xor", PDRT_LOGIC_XOR)
      .Default(-1);
}

/// pdrt_compare with one broadcast descriptor for both operands.
static LogicalResult lowerCompare(RuntimeCallBuilder &b, CompareOp c) {
  Value desc = b.descriptor(
      makeDescriptor(shapeOf(c), {shapeOf(c.getLhs()), shapeOf(c.getRhs())}));
  b.call(RuntimeFn::pdrt_compare,
         {b.ctx(), b.i32(predicateCode(c.getPredicate())),
          b.address(c.getLhs()), b.address(c.getRhs()), b.address(c), desc,
          b.i32(dtypeCode(c.getLhs()))});
  return success();
}

/// The slice window read through strides from an offset input pointer.
static LogicalResult lowerSlice(RuntimeCallBuilder &b, SliceOp sl) {
  // A view of a contiguous run of its input (pd-allocate-buffers gave it
  // that memory): nothing to do.
  if (PDDialect::ViewAttrHelper(sl.getContext()).isAttrPresent(sl))
    return success();
  auto [strides, base] =
      windowStrides(shapeOf(sl.getInput()), sl.getStarts(), sl.getSteps());
  int64_t bytes = elementBytes(sl);
  b.call(RuntimeFn::pdrt_permute,
         {b.ctx(), b.offset(b.address(sl.getInput()), base * bytes),
          b.address(sl), b.descriptor(viewDescriptor(shapeOf(sl), strides)),
          b.i64(bytes)});
  return success();
}

/// The batch strides of an operand or result of a GEMM whose last batch
/// dim is split into (entries / groups, groups): a grouped one keeps its
/// stride for the first and steps 0 along the second, any other steps
/// `groups` entries for the first and one for the second.
static void splitLastBatchDim(SmallVector<int64_t> &strides, int64_t groups,
                              bool grouped) {
  int64_t last = strides.back();
  strides.back() = grouped ? last : last * groups;
  strides.push_back(grouped ? 0 : last);
}

/// One pdrt_batch_matmul over the batch of trailing [m, k] x [k, n].
/// pdrt_batch_matmul_strided for operands or a result stored in another
/// dim order, operands that are a part of their stored tensor, a result
/// written as a part of the concat that joins it, or a GEMM that skips a
/// causal triangle.
static LogicalResult lowerStridedBatchMatMul(RuntimeCallBuilder &b,
                                             BatchMatMulOp mm) {
  auto a = BatchMatMulOp::stridedOperand(shapeOf(mm.getLhs()), mm.getLhsPerm(),
                                         mm.getTransposeLhs(), mm.getLhsSelect());
  auto bm = BatchMatMulOp::stridedOperand(shapeOf(mm.getRhs()), mm.getRhsPerm(),
                                          mm.getTransposeRhs(), mm.getRhsSelect());
  std::optional<BatchMatMulOp::ResultPart> whole = mm.getResultPart();
  auto c = whole ? BatchMatMulOp::stridedResult(whole->stored,
                                                mm.getResultPerm(),
                                                ArrayRef(whole->select))
                 : BatchMatMulOp::stridedResult(shapeOf(mm), mm.getResultPerm());
  if (!a || !bm || !c)
    return mm.emitOpError("has a stored layout no GEMM can read");
  SmallVector<int64_t> lhs = mm.getLogicalLhsShape();
  SmallVector<int64_t> rhs = mm.getLogicalRhsShape();
  size_t rank = lhs.size();
  int64_t m = lhs[rank - (mm.getTransposeLhs() ? 1 : 2)];
  int64_t k = lhs[rank - (mm.getTransposeLhs() ? 2 : 1)];
  int64_t n = rhs[rank - (mm.getTransposeRhs() ? 2 : 1)];
  SmallVector<int64_t> batch(lhs.begin(), lhs.end() - 2);
  if (int64_t groups = mm.getBatchGroups(); groups > 1) {
    // The last batch dim split into (entries / groups, groups); a grouped
    // rhs or result steps 0 along the groups (the runtime accumulates C
    // along a dim it steps 0).
    batch.back() /= groups;
    batch.push_back(groups);
    splitLastBatchDim(a->batchStrides, groups, false);
    splitLastBatchDim(bm->batchStrides, groups, (bool)mm.getRhsGroups());
    splitLastBatchDim(c->batchStrides, groups, (bool)mm.getResultGroups());
  }
  SmallVector<int64_t> words{(int64_t)batch.size()};
  words.append(batch.begin(), batch.end());
  for (const auto *layout : {&*a, &*bm, &*c})
    words.append(layout->batchStrides.begin(), layout->batchStrides.end());
  words.append({m, n, k, a->transpose, bm->transpose, a->ld, bm->ld, c->ld,
                mm.getTriangle() ? (int64_t)*mm.getTriangle()
                                 : (int64_t)PDRT_DENSE});
  // A selected operand starts at its part's offset in the stored tensor.
  auto part = [&](Value operand, std::optional<ArrayRef<int64_t>> select) {
    int64_t at = BatchMatMulOp::selectOffset(shapeOf(operand), select);
    return at ? b.offset(b.address(operand), at * elementBytes(operand))
              : b.address(operand);
  };
  Value aPtr = part(mm.getLhs(), mm.getLhsSelect());
  Value bPtr = part(mm.getRhs(), mm.getRhsSelect());
  // A part of a concat's result starts at its offset in the result.
  int64_t at = whole ? BatchMatMulOp::selectOffset(whole->stored,
                                                   ArrayRef(whole->select))
                     : 0;
  Value result = at ? b.offset(b.address(mm), at * elementBytes(mm))
                    : b.address(mm);
  b.call(RuntimeFn::pdrt_batch_matmul_strided,
         {b.ctx(), aPtr, bPtr, result, b.descriptor(words)});
  return success();
}

static_assert((int)Triangle::ResultLower == PDRT_RESULT_LOWER &&
                  (int)Triangle::LhsLower == PDRT_LHS_LOWER &&
                  (int)Triangle::LhsUpper == PDRT_LHS_UPPER &&
                  getMaxEnumValForTriangle() == PDRT_LHS_UPPER,
              "pd Triangle differs from runtime/include/pdrt/pdrt_codes.h");
static_assert(BatchMatMulOp::kCausalBlock == PDRT_CAUSAL_BLOCK,
              "the FLOPs of a causal GEMM count other blocks than it runs");

static LogicalResult lowerBatchMatMul(RuntimeCallBuilder &b, BatchMatMulOp mm) {
  if (mm.isStrided())
    return lowerStridedBatchMatMul(b, mm);
  auto out = shapeOf(mm);
  int64_t m = out[out.size() - 2], n = out.back();
  auto lhs = shapeOf(mm.getLhs());
  int64_t k = mm.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
  b.call(RuntimeFn::pdrt_batch_matmul,
         {b.ctx(), b.address(mm.getLhs()), b.address(mm.getRhs()),
          b.address(mm), b.i64(numel(mm) / (m * n)), b.i64(m), b.i64(n),
          b.i64(k), b.i32(mm.getTransposeLhs()), b.i32(mm.getTransposeRhs())});
  return success();
}

/// pdrt_where with one broadcast descriptor for the three operands.
static LogicalResult lowerWhere(RuntimeCallBuilder &b, WhereOp w) {
  Value desc = b.descriptor(
      makeDescriptor(shapeOf(w), {shapeOf(w.getCond()), shapeOf(w.getLhs()),
                                  shapeOf(w.getRhs())}));
  b.call(RuntimeFn::pdrt_where, {b.ctx(), b.address(w.getCond()), b.address(w.getLhs()),
                        b.address(w.getRhs()), b.address(w), desc});
  return success();
}

/// pdrt_where_grad with the condition broadcast to the gradient.
static LogicalResult lowerWhereGrad(RuntimeCallBuilder &b, WhereGradOp w) {
  Value desc = b.descriptor(makeDescriptor(shapeOf(w), {shapeOf(w.getCond())}));
  b.call(RuntimeFn::pdrt_where_grad,
         {b.ctx(), b.address(w.getGrad()), b.address(w.getCond()), b.address(w),
          desc, b.i32(w.getNegate())});
  return success();
}

/// Adapts a `lower(builder, op)` function to RuntimePatterns::add.
template <typename OpTy>
static void addLowering(RuntimePatterns &patterns,
                        LogicalResult (*lower)(RuntimeCallBuilder &, OpTy)) {
  patterns.add<OpTy>(
      [lower](OpTy op, RuntimeCallBuilder &b) { return lower(b, op); });
}

void mlir::pd::populateTensorRuntimePatterns(RuntimePatterns &patterns) {
  patterns.add<TransposeOp>([](TransposeOp t, RuntimeCallBuilder &b) {
    Value desc =
        b.descriptor(permuteDescriptor(shapeOf(t.getInput()), t.getPerm()));
    b.call(RuntimeFn::pdrt_permute, {b.ctx(), b.address(t.getInput()),
                                     b.address(t), desc,
                                     b.i64(elementBytes(t))});
    return success();
  });
  patterns.add<ReshapeOp>([](ReshapeOp r, RuntimeCallBuilder &b) {
    // A view of its input's memory (pd-allocate-buffers gave both the same
    // buffer): nothing to do.
    if (PDDialect::ViewAttrHelper(r.getContext()).isAttrPresent(r))
      return success();
    b.call(RuntimeFn::pdrt_copy, {b.ctx(), b.address(r.getInput()),
                                  b.address(r),
                                  b.i64(numel(r) * elementBytes(r))});
    return success();
  });
  patterns.add<BroadcastToOp>([](BroadcastToOp bc, RuntimeCallBuilder &b) {
    Value desc =
        b.descriptor(makeDescriptor(shapeOf(bc), {shapeOf(bc.getInput())}));
    b.call(RuntimeFn::pdrt_permute, {b.ctx(), b.address(bc.getInput()),
                                     b.address(bc), desc,
                                     b.i64(elementBytes(bc))});
    return success();
  });
  patterns.add<SliceGradOp>([](SliceGradOp sg, RuntimeCallBuilder &b) {
    auto [strides, base] =
        windowStrides(shapeOf(sg), sg.getStarts(), sg.getSteps());
    b.call(RuntimeFn::pdrt_scatter,
           {b.ctx(), b.address(sg.getGrad()), b.address(sg), b.i64(numel(sg)),
            b.i64(base),
            b.descriptor(viewDescriptor(shapeOf(sg.getGrad()), strides)),
            b.i32(PDRT_SCATTER_ZERO_FIRST)});
    return success();
  });
  patterns.add<NotOp>([](NotOp n, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_not, {b.ctx(), b.address(n.getInput()),
                                 b.address(n), b.i64(numel(n))});
    return success();
  });
  patterns.add<CastOp>([](CastOp c, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_cast,
           {b.ctx(), b.address(c.getInput()), b.address(c), b.i64(numel(c)),
            b.i32(dtypeCode(c.getInput())), b.i32(dtypeCode(c))});
    return success();
  });
  addLowering(patterns, lowerGather);
  addLowering(patterns, lowerGatherGrad);
  addLowering(patterns, lowerBatchMatMul);
  addLowering(patterns, lowerSlice);
  addLowering(patterns, lowerConcat);
  addLowering(patterns, lowerWhere);
  addLowering(patterns, lowerWhereGrad);
  addLowering(patterns, lowerGatherElements);
  addLowering(patterns, lowerGatherElementsGrad);
  addLowering(patterns, lowerCompare);
}
