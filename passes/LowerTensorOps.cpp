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
      .Default([](Operation *) { return std::nullopt; });
}
