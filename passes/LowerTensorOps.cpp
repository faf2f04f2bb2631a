//===- LowerTensorOps.cpp - Runtime calls of tensor ops ---------*- C++ -*-===//
//
// pd-lower-to-runtime's hook for the tensor and shape ops: each op becomes
// calls of the pdrt_* kernels of runtime/include/pdrt/pdrt_tensor.h on the
// addresses StageLowering computes. Transpose, slice and broadcast_to are
// strided copies (pdrt_permute), reshape a plain copy (buffers never alias
// yet), slice gradients and concat the inverse copy (pdrt_scatter, or
// pdrt_scatter_any for integer and bool tensors). Gather, GatherElements,
// comparisons, logical not and casts of run-time tensors call their
// element-type-aware kernels.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pd;

/// Element size in bytes of a tensor value.
static int64_t elementBytes(Value v) {
  return (cast<RankedTensorType>(v.getType()).getElementTypeBitWidth() + 7) / 8;
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

/// `ptr` advanced by `bytes`.
static Value offsetPointer(StageLowering &L, Value ptr, int64_t bytes) {
  OpBuilder &b = L.getBuilder();
  return b.create<LLVM::GEPOp>(ptr.getLoc(), ptr.getType(), b.getI8Type(), ptr,
                               ArrayRef<LLVM::GEPArg>{L.byteOffset(bytes)});
}

/// Writes each concatenated input into its window of the result.
static LogicalResult lowerConcat(StageLowering &L, ConcatOp c) {
  auto out = shapeOf(c);
  int64_t offset = 0, rank = out.size();
  bool isFloat = cast<RankedTensorType>(c.getType()).getElementType().isF32();
  for (Value in : c.getInputs()) {
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    starts[c.getAxis()] = offset;
    offset += shapeOf(in)[c.getAxis()];
    auto [strides, base] = windowStrides(out, starts, steps);
    SmallVector<Value> args{L.ctx(), L.address(in), L.address(c),
                            L.i64(numel(c)), L.i64(base),
                            L.descriptor(viewDescriptor(shapeOf(in), strides)),
                            L.i32(PDRT_SCATTER_INTO)};
    if (!isFloat)
      args.push_back(L.i64(elementBytes(c)));
    L.call(isFloat ? "pdrt_scatter" : "pdrt_scatter_any", args);
  }
  return success();
}

/// pdrt_gather over the [outer, rows, inner] view of the data.
static LogicalResult lowerGather(StageLowering &L, GatherOp g) {
  auto [outer, rows, inner] = gatherDims(shapeOf(g.getData()), g.getAxis());
  L.call("pdrt_gather",
         {L.ctx(), L.address(g.getData()), L.address(g.getIndices()),
          L.address(g), L.i64(outer), L.i64(numel(g.getIndices())), L.i64(rows),
          L.i64(inner), L.i64(elementBytes(g))});
  return success();
}

/// pdrt_gather_grad into the [outer, rows, inner] view of the result.
static LogicalResult lowerGatherGrad(StageLowering &L, GatherGradOp g) {
  auto [outer, rows, inner] = gatherDims(shapeOf(g), g.getAxis());
  L.call("pdrt_gather_grad",
         {L.ctx(), L.address(g.getGrad()), L.address(g.getIndices()),
          L.address(g), L.i64(outer), L.i64(numel(g.getIndices())), L.i64(rows),
          L.i64(inner)});
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
static LogicalResult lowerGatherElements(StageLowering &L,
                                         GatherElementsOp g) {
  L.call("pdrt_gather_elements",
         {L.ctx(), L.address(g.getData()), L.address(g.getIndices()),
          L.address(g),
          L.descriptor(gatherElementsDescriptor(
              shapeOf(g.getData()), shapeOf(g.getIndices()), g.getAxis())),
          L.i64(elementBytes(g))});
  return success();
}

/// pdrt_gather_elements_grad: zero, then scatter-add dy.
static LogicalResult lowerGatherElementsGrad(StageLowering &L,
                                             GatherElementsGradOp g) {
  L.call("pdrt_gather_elements_grad",
         {L.ctx(), L.address(g.getGrad()), L.address(g.getIndices()),
          L.address(g),
          L.descriptor(gatherElementsDescriptor(
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
static LogicalResult lowerCompare(StageLowering &L, CompareOp c) {
  Value desc = L.descriptor(
      makeDescriptor(shapeOf(c), {shapeOf(c.getLhs()), shapeOf(c.getRhs())}));
  L.call("pdrt_compare",
         {L.ctx(), L.i32(predicateCode(c.getPredicate())),
          L.address(c.getLhs()), L.address(c.getRhs()), L.address(c), desc,
          L.i32(dtypeCode(c.getLhs()))});
  return success();
}

/// The slice window read through strides from an offset input pointer.
static LogicalResult lowerSlice(StageLowering &L, SliceOp sl) {
  auto [strides, base] =
      windowStrides(shapeOf(sl.getInput()), sl.getStarts(), sl.getSteps());
  int64_t bytes = elementBytes(sl);
  L.call("pdrt_permute",
         {L.ctx(), offsetPointer(L, L.address(sl.getInput()), base * bytes),
          L.address(sl), L.descriptor(viewDescriptor(shapeOf(sl), strides)),
          L.i64(bytes)});
  return success();
}

/// One pdrt_batch_matmul over the batch of trailing [m, k] x [k, n].
static LogicalResult lowerBatchMatMul(StageLowering &L, BatchMatMulOp mm) {
  auto out = shapeOf(mm);
  int64_t m = out[out.size() - 2], n = out.back();
  auto lhs = shapeOf(mm.getLhs());
  int64_t k = mm.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
  L.call("pdrt_batch_matmul",
         {L.ctx(), L.address(mm.getLhs()), L.address(mm.getRhs()),
          L.address(mm), L.i64(numel(mm) / (m * n)), L.i64(m), L.i64(n),
          L.i64(k), L.i32(mm.getTransposeLhs()), L.i32(mm.getTransposeRhs())});
  return success();
}

/// pdrt_where with one broadcast descriptor for the three operands.
static LogicalResult lowerWhere(StageLowering &L, WhereOp w) {
  Value desc = L.descriptor(
      makeDescriptor(shapeOf(w), {shapeOf(w.getCond()), shapeOf(w.getLhs()),
                                  shapeOf(w.getRhs())}));
  L.call("pdrt_where", {L.ctx(), L.address(w.getCond()), L.address(w.getLhs()),
                        L.address(w.getRhs()), L.address(w), desc});
  return success();
}

/// pdrt_where_grad with the condition broadcast to the gradient.
static LogicalResult lowerWhereGrad(StageLowering &L, WhereGradOp w) {
  Value desc = L.descriptor(makeDescriptor(shapeOf(w), {shapeOf(w.getCond())}));
  L.call("pdrt_where_grad",
         {L.ctx(), L.address(w.getGrad()), L.address(w.getCond()), L.address(w),
          desc, L.i32(w.getNegate())});
  return success();
}

std::optional<LogicalResult> mlir::pd::lowerTensorOp(StageLowering &L,
                                                     Operation *op) {
  return TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case<TransposeOp>([&](TransposeOp t) {
        Value desc =
            L.descriptor(permuteDescriptor(shapeOf(t.getInput()), t.getPerm()));
        L.call("pdrt_permute", {L.ctx(), L.address(t.getInput()), L.address(t),
                                desc, L.i64(elementBytes(t))});
        return success();
      })
      .Case<ReshapeOp>([&](ReshapeOp r) {
        L.call("pdrt_copy", {L.ctx(), L.address(r.getInput()), L.address(r),
                             L.i64(numel(r) * elementBytes(r))});
        return success();
      })
      .Case<GatherOp>([&](GatherOp g) { return lowerGather(L, g); })
      .Case<GatherGradOp>([&](GatherGradOp g) { return lowerGatherGrad(L, g); })
      .Case<BroadcastToOp>([&](BroadcastToOp bc) {
        Value desc =
            L.descriptor(makeDescriptor(shapeOf(bc), {shapeOf(bc.getInput())}));
        L.call("pdrt_permute", {L.ctx(), L.address(bc.getInput()),
                                L.address(bc), desc, L.i64(elementBytes(bc))});
        return success();
      })
      .Case<BatchMatMulOp>(
          [&](BatchMatMulOp mm) { return lowerBatchMatMul(L, mm); })
      .Case<SliceOp>([&](SliceOp sl) { return lowerSlice(L, sl); })
      .Case<SliceGradOp>([&](SliceGradOp sg) {
        auto [strides, base] =
            windowStrides(shapeOf(sg), sg.getStarts(), sg.getSteps());
        L.call("pdrt_scatter",
               {L.ctx(), L.address(sg.getGrad()), L.address(sg),
                L.i64(numel(sg)), L.i64(base),
                L.descriptor(viewDescriptor(shapeOf(sg.getGrad()), strides)),
                L.i32(PDRT_SCATTER_ZERO_FIRST)});
        return success();
      })
      .Case<ConcatOp>([&](ConcatOp c) { return lowerConcat(L, c); })
      .Case<WhereOp>([&](WhereOp w) { return lowerWhere(L, w); })
      .Case<WhereGradOp>([&](WhereGradOp w) { return lowerWhereGrad(L, w); })
      .Case<GatherElementsOp>(
          [&](GatherElementsOp g) { return lowerGatherElements(L, g); })
      .Case<GatherElementsGradOp>([&](GatherElementsGradOp g) {
        return lowerGatherElementsGrad(L, g);
      })
      .Case<CompareOp>([&](CompareOp c) { return lowerCompare(L, c); })
      .Case<NotOp>([&](NotOp n) {
        L.call("pdrt_not", {L.ctx(), L.address(n.getInput()), L.address(n),
                            L.i64(numel(n))});
        return success();
      })
      .Case<CastOp>([&](CastOp c) {
        L.call("pdrt_cast", {L.ctx(), L.address(c.getInput()), L.address(c),
                             L.i64(numel(c)), L.i32(dtypeCode(c.getInput())),
                             L.i32(dtypeCode(c))});
        return success();
      })

      .Default([](Operation *) { return std::nullopt; });
}
