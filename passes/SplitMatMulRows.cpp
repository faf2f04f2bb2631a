//===- SplitMatMulRows.cpp - A GEMM split by rows between stages -*- C++ -*-===//
//
// pd-split-matmul-rows: a pipeline cut falls between ops, so a stage can be
// balanced only to within its heaviest op at the cut: in the small
// benchmark GPT at d = 2 the MLP's up projection (its forward and two
// gradient GEMMs) is 5% of the model, and the best cut left the second
// stage 13% heavier than the first. This pass splits a 2-D pd.matmul by the
// rows of its left operand,
//
//   %y = pd.matmul %x, %w {transpose_rhs} : 1024x256, 1024x256 -> 1024x1024
// becomes
//   %x1 = pd.slice %x {starts = [0, 0]}   : 1024x256 -> 384x256
//   %x2 = pd.slice %x {starts = [384, 0]} : 1024x256 -> 640x256
//   %w2 = pd.param_ref @w                 (one read per use)
//   %y1 = pd.matmul %x1, %w {transpose_rhs}  : ... -> 384x1024
//   %y2 = pd.matmul %x2, %w2 {transpose_rhs} : ... -> 640x1024
//   %y = pd.concat %y1, %y2 {axis = 0}
//
// so that the planner can cut between the halves. Each half reads the
// parameter through its own pd.param_ref: on two stages the weight is tied
// (each owns a copy, their gradients are summed, as an embedding's and its
// LM head's). The products are the same sums in the same order per row.
// Runs on @main before pd-autodiff; `op-ids` are the positions of the
// matmuls in @main's body, the pd.op_id pd-autodiff gives them.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::pd {
#define GEN_PASS_DEF_SPLITMATMULROWSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct SplitMatMulRowsPass
    : public mlir::pd::impl::SplitMatMulRowsPassBase<SplitMatMulRowsPass> {
  using SplitMatMulRowsPassBase::SplitMatMulRowsPassBase;
  void runOnOperation() override;
};

/// `v`, or a second read of the same parameter when `v` is one, or a view
/// of one (pd-split-sliced-matmuls' row block of a weight): a parameter
/// read feeds one stage.
Value readAgain(OpBuilder &b, Value v) {
  Operation *def = v ? v.getDefiningOp() : nullptr;
  if (isa_and_nonnull<ParamRefOp>(def))
    return b.clone(*def)->getResult(0);
  if (!isa_and_nonnull<SliceOp, ReshapeOp>(def))
    return v;
  Value input = readAgain(b, def->getOperand(0));
  if (input == def->getOperand(0))
    return v;
  IRMapping map;
  map.map(def->getOperand(0), input);
  return b.clone(*def, map)->getResult(0);
}

/// Rows [start, start + rows) of the 2-D `x`.
Value sliceRows(OpBuilder &b, Location loc, Value x, int64_t start,
                int64_t rows) {
  auto type = cast<RankedTensorType>(x.getType());
  auto part = RankedTensorType::get({rows, type.getDimSize(1)},
                                    type.getElementType());
  return b.create<SliceOp>(loc, part, x,
                           b.getDenseI64ArrayAttr({start, 0}),
                           b.getDenseI64ArrayAttr({1, 1}));
}

/// Why `mm` cannot be split after `rows` rows, or "".
std::string whyNot(MatMulOp mm, int64_t rows) {
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  if (lhs.getRank() != 2 || mm.getTransposeLhs())
    return "its left operand is not a 2-D row-major matrix";
  if (rows <= 0 || rows >= lhs.getDimSize(0))
    return "the split must leave rows on both sides of " +
           std::to_string(lhs.getDimSize(0));
  return "";
}

void split(MatMulOp mm, int64_t rows) {
  OpBuilder b(mm);
  Location loc = mm.getLoc();
  auto result = cast<RankedTensorType>(mm.getType());
  int64_t m = result.getDimSize(0);
  auto half = [&](Value x, Value rhs, Value bias, int64_t n) {
    auto type = RankedTensorType::get({n, result.getDimSize(1)},
                                      result.getElementType());
    auto op = b.create<MatMulOp>(loc, type, x, rhs, bias,
                                 mm.getTransposeLhsAttr(),
                                 mm.getTransposeRhsAttr(), mm.getAlphaAttr());
    return op.getResult();
  };
  Value x1 = sliceRows(b, loc, mm.getLhs(), 0, rows);
  Value x2 = sliceRows(b, loc, mm.getLhs(), rows, m - rows);
  Value y1 = half(x1, mm.getRhs(), mm.getBias(), rows);
  Value rhs2 = readAgain(b, mm.getRhs());
  Value bias2 = readAgain(b, mm.getBias());
  Value y2 = half(x2, rhs2, bias2, m - rows);
  Value y = b.create<ConcatOp>(loc, result, ValueRange{y1, y2},
                               b.getI64IntegerAttr(0));
  mm.getResult().replaceAllUsesWith(y);
  mm.erase();
}

} // namespace

void SplitMatMulRowsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (opIds.size() != rows.size()) {
    module.emitError("pd-split-matmul-rows: ")
        << opIds.size() << " op-ids but " << rows.size() << " rows";
    return signalPassFailure();
  }
  auto main = module.lookupSymbol<func::FuncOp>(funcName);
  if (!main) {
    if (opIds.empty())
      return;
    module.emitError("pd-split-matmul-rows: no @") << funcName;
    return signalPassFailure();
  }
  SmallVector<Operation *> body;
  for (Operation &op : main.getBody().front().without_terminator())
    body.push_back(&op);
  SmallVector<std::pair<MatMulOp, int64_t>> splits;
  for (auto [id, n] : llvm::zip(opIds, rows)) {
    auto mm = id >= 0 && id < (int64_t)body.size()
                  ? dyn_cast<MatMulOp>(body[id])
                  : MatMulOp();
    if (!mm) {
      module.emitError("pd-split-matmul-rows: op ")
          << id << " of @" << funcName << " is not a pd.matmul";
      return signalPassFailure();
    }
    if (std::string why = whyNot(mm, n); !why.empty()) {
      mm.emitError("pd-split-matmul-rows: cannot split this matmul after ")
          << n << " rows: " << why;
      return signalPassFailure();
    }
    splits.push_back({mm, n});
  }
  for (auto [mm, n] : splits)
    split(mm, n);
}
