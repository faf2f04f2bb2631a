//===- SplitSlicedMatMuls.cpp - One GEMM per column block -------*- C++ -*-===//
//
// pd-split-sliced-matmuls: a fused projection (Phi-3's qkv_proj and
// gate_up_proj) computes one GEMM whose columns the model then slices
// apart,
//
//   %y = pd.matmul %x, %w {transpose_rhs} : [M, K], [N, K] -> [M, N]
//   %r = pd.reshape %y : -> [B, T, N]
//   %q = pd.slice %r [..., 0:n0]      %k = pd.slice %r [..., n0:n0+n1] ...
//
// and each slice copies its columns out (forward), their gradients are
// concatenated back (backward). Column block [a, a + n) of the product is
// the product with rows [a, a + n) of w, a contiguous block of the weight
// (a view: no copy), so this pass gives each slice its own GEMM,
//
//   %wq = pd.slice %w [0:n0, :]    %q = pd.reshape (pd.matmul %x, %wq)
//
// (a bias sliced likewise). The backward then writes the weight's
// gradient block by block (a row concat the GEMMs write in place) and sums
// the input's gradient over the GEMMs. Only where the slices tile the
// product's columns, are its only readers (directly or through one
// reshape that keeps the last dim), and one of them is read by other ops
// than batched GEMMs: those read their column block in place anyway
// (pd-fold-slices-into-matmul: GPT-2's attention), where splitting would
// only add the gradient's sums. The blocks read one pd.param_ref, so the
// planner cuts no stage between them (OpChain::flowsBack). Runs before
// pd-autodiff.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pd {
#define GEN_PASS_DEF_SPLITSLICEDMATMULSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct SplitSlicedMatMulsPass
    : public mlir::pd::impl::SplitSlicedMatMulsPassBase<
          SplitSlicedMatMulsPass> {
  using SplitSlicedMatMulsPassBase::SplitSlicedMatMulsPassBase;
  void runOnOperation() override;
};

/// The first column and the width of `slice` when it takes a block of the
/// last dim of its input, with unit steps, all of every other dim.
std::optional<std::pair<int64_t, int64_t>> columnBlock(SliceOp slice) {
  ArrayRef<int64_t> in = shapeOf(slice.getInput()), out = shapeOf(slice);
  size_t last = in.size() - 1;
  for (size_t d = 0; d <= last; ++d)
    if (slice.getSteps()[d] != 1 ||
        (d < last && (slice.getStarts()[d] != 0 || out[d] != in[d])))
      return std::nullopt;
  return std::make_pair(slice.getStarts()[last], out[last]);
}

/// Whether every reader of `v`, through reshapes and transposes, is a
/// batched GEMM (which reads a column block in place).
bool readOnlyByBatchedGemms(Value v) {
  return llvm::all_of(v.getUsers(), [](Operation *user) {
    if (isa<BatchMatMulOp>(user))
      return true;
    if (isa<ReshapeOp, TransposeOp>(user))
      return readOnlyByBatchedGemms(user->getResult(0));
    return false;
  });
}

/// Splits a matmul whose product's column blocks are sliced apart,
/// anchored on the matmul.
struct SplitSlicedMatMul : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp mm,
                                PatternRewriter &rewriter) const override {
    if (!mm.getTransposeRhs() || mm.getType().getRank() != 2 || mm->use_empty())
      return rewriter.notifyMatchFailure(mm, "not a Linear layer's GEMM");
    // The product, or its one reader, a reshape that keeps the last dim.
    Value product = mm.getResult();
    auto reshape = mm->hasOneUse()
                       ? dyn_cast<ReshapeOp>(*mm->getUsers().begin())
                       : ReshapeOp();
    if (reshape && shapeOf(reshape).back() == shapeOf(mm).back())
      product = reshape.getResult();
    else
      reshape = nullptr;
    SmallVector<std::pair<int64_t, SliceOp>> blocks;
    for (Operation *user : product.getUsers()) {
      auto slice = dyn_cast<SliceOp>(user);
      auto block = slice ? columnBlock(slice) : std::nullopt;
      if (!block)
        return rewriter.notifyMatchFailure(mm, "read other than by column "
                                               "blocks");
      blocks.push_back({block->first, slice});
    }
    llvm::sort(blocks, [](auto &a, auto &b) { return a.first < b.first; });
    int64_t next = 0;
    for (auto &[start, slice] : blocks) {
      if (start != next)
        return rewriter.notifyMatchFailure(mm, "blocks do not tile the "
                                               "columns");
      next += shapeOf(slice).back();
    }
    if (blocks.size() < 2 || next != shapeOf(mm).back())
      return rewriter.notifyMatchFailure(mm, "blocks do not tile the "
                                             "columns");
    if (llvm::all_of(blocks, [](auto &block) {
          return readOnlyByBatchedGemms(block.second.getResult());
        }))
      return rewriter.notifyMatchFailure(mm, "batched GEMMs read the blocks "
                                             "in place");
    for (auto &[start, slice] : blocks)
      replaceBlock(rewriter, mm, slice, start);
    if (reshape)
      rewriter.eraseOp(reshape);
    rewriter.eraseOp(mm);
    return success();
  }

  /// The GEMM of one column block, replacing its slice.
  static void replaceBlock(PatternRewriter &rewriter, MatMulOp mm,
                           SliceOp slice, int64_t start) {
    Location loc = mm.getLoc();
    int64_t cols = shapeOf(slice).back();
    auto rowsOf = [&](Value t) -> Value {
      ArrayRef<int64_t> shape = shapeOf(t);
      SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1),
          out(shape);
      starts[0] = start;
      out[0] = cols;
      auto type = cast<RankedTensorType>(t.getType()).clone(out);
      return rewriter.create<SliceOp>(loc, type, t,
                                      rewriter.getDenseI64ArrayAttr(starts),
                                      rewriter.getDenseI64ArrayAttr(steps));
    };
    rewriter.setInsertionPoint(slice);
    Value w = rowsOf(mm.getRhs());
    Value bias = mm.getBias() ? rowsOf(mm.getBias()) : Value();
    SmallVector<int64_t> shape(shapeOf(mm));
    shape.back() = cols;
    Value block = rewriter.create<MatMulOp>(
        loc, mm.getType().clone(shape), mm.getLhs(), w, bias,
        mm.getTransposeLhsAttr(), mm.getTransposeRhsAttr(), mm.getAlphaAttr());
    if (block.getType() != slice.getType())
      block = rewriter.create<ReshapeOp>(loc, slice.getType(), block);
    rewriter.replaceOp(slice, block);
  }
};

} // namespace

void SplitSlicedMatMulsPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<SplitSlicedMatMul>(&getContext());
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
