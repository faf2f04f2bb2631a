//===- GradTags.cpp - Keeping pd.grad_of valid when forward ops fuse ------===//

#include "passes/GradTags.h"
#include "dialects/PD/IR/PDOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::pd;

std::optional<int64_t> mlir::pd::forwardIdOf(Operation *op) {
  if (auto id = getContractInt<PDDialect::OpIdAttrHelper>(op))
    return id;
  return getContractInt<PDDialect::GradOfAttrHelper>(op);
}

void mlir::pd::retagOrphanedGradients(ModuleOp module,
                                      const Absorbed &absorbed) {
  if (absorbed.empty())
    return;
  llvm::DenseSet<int64_t> live;
  module.walk([&](Operation *op) {
    if (auto id = getContractInt<PDDialect::OpIdAttrHelper>(op))
      live.insert(*id);
  });
  module.walk([&](Operation *op) {
    auto of = getContractInt<PDDialect::GradOfAttrHelper>(op);
    if (!of || live.contains(*of))
      return;
    int64_t target = *of;
    for (size_t hops = 0; !live.contains(target) && hops <= absorbed.size();
         ++hops) {
      auto it = absorbed.find(target);
      if (it == absorbed.end())
        return;
      target = it->second;
    }
    if (live.contains(target))
      setContractInt<PDDialect::GradOfAttrHelper>(op, target);
  });
}

LogicalResult mlir::pd::foldAndRetag(ModuleOp module,
                                     RewritePatternSet &&patterns,
                                     const Absorbed &absorbed) {
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(module, std::move(patterns), config)))
    return failure();
  retagOrphanedGradients(module, absorbed);
  return success();
}

int64_t mlir::pd::nextFreeOpId(ModuleOp module) {
  int64_t next = 0;
  module.walk([&](Operation *op) {
    if (auto id = getContractInt<PDDialect::OpIdAttrHelper>(op))
      next = std::max(next, *id + 1);
  });
  return next;
}

void ForwardViews::tagLike(Operation *view, Operation *standsFor) {
  if (getContractInt<PDDialect::OpIdAttrHelper>(standsFor))
    setContractInt<PDDialect::OpIdAttrHelper>(view, nextId++);
  else if (auto of = getContractInt<PDDialect::GradOfAttrHelper>(standsFor))
    setContractInt<PDDialect::GradOfAttrHelper>(view, *of);
}
