//===- InstrumentOps.cpp - Timing every op of a real plan -----------------===//
//
// The marks come from pd-insert-profile-marks (every-op) on the allocated
// module, after the plan's checks and prediction, which read it unmarked;
// each stage's lowering then turns them into pdrt_profile_mark calls.
//
//===----------------------------------------------------------------------===//

#include "InstrumentOps.h"
#include "OpProfile.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::pd;

/// The description of the op a mark times.
static llvm::json::Object describeOp(Operation *op, int64_t id, int64_t stage,
                                     StringRef function,
                                     const DeviceSpec &spec) {
  llvm::json::Object entry{{"id", id},
                           {"stage", stage},
                           {"function", function},
                           {"op", op->getName().getStringRef()},
                           {"signature", opSignature(op)}};
  if (auto cost = dyn_cast<CostOpInterface>(op)) {
    entry["flops"] = cost.getFlops();
    entry["predicted_seconds"] = opSeconds(op, spec);
  } else {
    entry["flops"] = 0;
    entry["predicted_seconds"] = nullptr;
  }
  return entry;
}

FailureOr<std::string> mlir::pd::instrumentOps(ModuleOp module,
                                               const DeviceSpec &spec) {
  PassManager pm(module.getContext());
  InsertProfileMarksPassOptions marks;
  marks.everyOp = true;
  pm.addPass(createInsertProfileMarksPass(marks));
  if (failed(pm.run(module)))
    return failure();
  llvm::json::Array ops;
  for (auto fn : module.getOps<func::FuncOp>()) {
    PhaseAttr phase = PDDialect::PhaseAttrHelper(module.getContext()).getAttr(fn);
    std::optional<int64_t> stage =
        getContractInt<PDDialect::StageAttrHelper>(fn);
    if (!phase || !stage)
      continue;
    for (auto mark : fn.getBody().front().getOps<ProfileMarkOp>()) {
      auto id = static_cast<int64_t>(mark.getId()); // -1: the function's end
      if (id >= 0)
        ops.push_back(describeOp(mark->getNextNode(), id, *stage,
                                 stringifyPhase(phase.getValue()), spec));
    }
  }
  llvm::json::Object doc{{"format", 1}, {"ops", std::move(ops)}};
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(doc))).str() + "\n";
}
