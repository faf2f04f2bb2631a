//===- LowerTensorOps.cpp - Runtime calls of tensor ops ---------*- C++ -*-===//
//
// pd-lower-to-runtime's hook for the tensor and shape ops (transpose,
// reshape, gather, batched matmul): each op becomes one call of its pdrt_*
// kernel (runtime/include/pdrt/pdrt_tensor.h) on the addresses
// StageLowering computes.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"
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

/// `ptr` advanced by `bytes`.
static Value offsetPointer(StageLowering &L, Value ptr, int64_t bytes) {
  OpBuilder &b = L.getBuilder();
  return b.create<LLVM::GEPOp>(ptr.getLoc(), ptr.getType(), b.getI8Type(),
                               ptr, ArrayRef<LLVM::GEPArg>{L.byteOffset(bytes)});
}

/// Writes each concatenated input into its window of the result.
static LogicalResult lowerConcat(StageLowering &L, ConcatOp c) {
  auto out = shapeOf(c);
  int64_t offset = 0, rank = out.size();
  for (Value in : c.getInputs()) {
    if (!cast<RankedTensorType>(in.getType()).getElementType().isF32())
      return c.emitError("pd-lower-to-runtime: run-time concatenation of "
                         "non-float tensors is not supported");
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    starts[c.getAxis()] = offset;
    offset += shapeOf(in)[c.getAxis()];
    auto [strides, base] = windowStrides(out, starts, steps);
    L.call("pdrt_scatter",
           {L.ctx(), L.address(in), L.address(c), L.i64(numel(c)), L.i64(base),
            L.descriptor(viewDescriptor(shapeOf(in), strides)), L.i32(0)});
  }
  return success();
}

std::optional<LogicalResult> mlir::pd::lowerTensorOp(StageLowering &L,
                                                     Operation *op) {
  return TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case<TransposeOp>([&](TransposeOp t) {
        Value desc = L.descriptor(
            permuteDescriptor(shapeOf(t.getInput()), t.getPerm()));
        L.call("pdrt_permute", {L.ctx(), L.address(t.getInput()), L.address(t),
                                desc, L.i64(elementBytes(t))});
        return success();
      })
      .Case<ReshapeOp>([&](ReshapeOp r) {
        L.call("pdrt_copy", {L.ctx(), L.address(r.getInput()), L.address(r),
                             L.i64(numel(r) * elementBytes(r))});
        return success();
      })
      .Case<GatherOp>([&](GatherOp g) {
        auto data = shapeOf(g.getData());
        L.call("pdrt_gather",
               {L.ctx(), L.address(g.getData()), L.address(g.getIndices()),
                L.address(g), L.i64(numel(g.getIndices())), L.i64(data[0]),
                L.i64(numel(g.getData()) / std::max<int64_t>(data[0], 1))});
        return success();
      })
      .Case<GatherGradOp>([&](GatherGradOp g) {
        auto data = shapeOf(g);
        L.call("pdrt_gather_grad",
               {L.ctx(), L.address(g.getGrad()), L.address(g.getIndices()),
                L.address(g), L.i64(numel(g.getIndices())), L.i64(data[0]),
                L.i64(numel(g) / std::max<int64_t>(data[0], 1))});
        return success();
      })
      .Case<BatchMatMulOp>([&](BatchMatMulOp mm) {
        auto out = shapeOf(mm);
        int64_t m = out[out.size() - 2], n = out.back();
        auto lhs = shapeOf(mm.getLhs());
        int64_t k = mm.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
        L.call("pdrt_batch_matmul",
               {L.ctx(), L.address(mm.getLhs()), L.address(mm.getRhs()),
                L.address(mm), L.i64(numel(mm) / (m * n)), L.i64(m), L.i64(n),
                L.i64(k), L.i32(mm.getTransposeLhs()),
                L.i32(mm.getTransposeRhs())});
        return success();
      })
      .Case<SliceOp>([&](SliceOp sl) {
        auto [strides, base] = windowStrides(shapeOf(sl.getInput()),
                                             sl.getStarts(), sl.getSteps());
        int64_t bytes = elementBytes(sl);
        L.call("pdrt_permute",
               {L.ctx(), offsetPointer(L, L.address(sl.getInput()), base * bytes),
                L.address(sl), L.descriptor(viewDescriptor(shapeOf(sl), strides)),
                L.i64(bytes)});
        return success();
      })
      .Case<SliceGradOp>([&](SliceGradOp sg) {
        auto [strides, base] =
            windowStrides(shapeOf(sg), sg.getStarts(), sg.getSteps());
        L.call("pdrt_scatter",
               {L.ctx(), L.address(sg.getGrad()), L.address(sg),
                L.i64(numel(sg)), L.i64(base),
                L.descriptor(viewDescriptor(shapeOf(sg.getGrad()), strides)),
                L.i32(1)});
        return success();
      })
      .Case<ConcatOp>([&](ConcatOp c) { return lowerConcat(L, c); })
      .Case<WhereOp>([&](WhereOp w) {
        Value desc = L.descriptor(makeDescriptor(
            shapeOf(w), {shapeOf(w.getCond()), shapeOf(w.getLhs()),
                         shapeOf(w.getRhs())}));
        L.call("pdrt_where", {L.ctx(), L.address(w.getCond()),
                              L.address(w.getLhs()), L.address(w.getRhs()),
                              L.address(w), desc});
        return success();
      })
      .Case<WhereGradOp>([&](WhereGradOp w) {
        Value desc = L.descriptor(
            makeDescriptor(shapeOf(w), {shapeOf(w.getCond())}));
        L.call("pdrt_where_grad",
               {L.ctx(), L.address(w.getGrad()), L.address(w.getCond()),
                L.address(w), desc, L.i32(w.getNegate())});
        return success();
      })
      .Case<EqualOp, CastOp>([&](Operation *o) -> LogicalResult {
        return o->emitError("pd-lower-to-runtime: '")
               << o->getName()
               << "' of run-time values has no kernel; it must fold to a "
                  "constant at import";
      })
      .Default([](Operation *) { return std::nullopt; });
}
