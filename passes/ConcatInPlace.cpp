//===- ConcatInPlace.cpp - GEMM results written into their concat -*- C++ -*-=//
//
// pd-concat-in-place: a pd.concat whose inputs batched GEMMs can write in
// place (ConcatOp::getInPlaceParts), and whose result is neither sent nor
// returned, gets pd.in_place_parts and its GEMMs pd.concat_part; the
// buffer allocator and the lowering then drop the concat's copies.
//
// A concat whose inputs are contiguous runs of its result (a row concat,
// ConcatOp::hasContiguousInputs) gets pd.in_place_parts alone when every
// input has an op that can write it there (getContiguousParts: a GEMM, a
// pd.recv, any kernel): the allocator homes each at its offset in the
// result, which may be a stash slot or a sent buffer. At a pipeline cut
// inside a row-split GEMM (pd-split-matmul-rows) this joins the received
// half and the half computed here without a copy.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_CONCATINPLACEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct ConcatInPlacePass
    : public mlir::pd::impl::ConcatInPlacePassBase<ConcatInPlacePass> {
  using ConcatInPlacePassBase::ConcatInPlacePassBase;
  void runOnOperation() override;
};

} // namespace

/// Whether `concat`'s result stays in the workspace: no stash slot (the
/// forward's return) or comm buffer (a send) holds it.
static bool staysInWorkspace(ConcatOp concat) {
  return llvm::none_of(concat->getUsers(), [](Operation *user) {
    return isa<SendOp, func::ReturnOp>(user);
  });
}

void ConcatInPlacePass::runOnOperation() {
  MLIRContext *ctx = &getContext();
  PDDialect::InPlacePartsAttrHelper inPlace(ctx);
  PDDialect::ConcatPartAttrHelper concatPart(ctx);
  getOperation().walk([&](ConcatOp concat) {
    SmallVector<BatchMatMulOp> parts;
    if (staysInWorkspace(concat))
      parts = concat.getInPlaceParts();
    if (parts.empty()) {
      if (!concat.getContiguousParts().empty())
        inPlace.setAttr(concat, UnitAttr::get(ctx));
      return;
    }
    inPlace.setAttr(concat, UnitAttr::get(ctx));
    int64_t count = parts.size();
    for (auto [index, mm] : llvm::enumerate(parts))
      concatPart.setAttr(mm, DenseI64ArrayAttr::get(
                                 ctx, {(int64_t)concat.getAxis(), (int64_t)index, count}));
  });
}
