//===- TestPrintBufferAssignment.cpp - Print pd-allocate-buffers -*- C++ -*-=//
//
// -test-pd-print-buffer-assignment prints, in IR order, the home of every
// tensor of every stage function, each stage's region sizes and total, each
// stage's parameter copies (offsets and owner stages) and its pd.state
// layout, so that FileCheck
// can match what pd-allocate-buffers decided.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "mlir/Pass/Pass.h"
#include "pd/Codegen/StageInfo.h"
#include "passes/Passes.h"
#include "passes/WorkspacePlan.h"

using namespace mlir;
using namespace mlir::pd;

namespace {

struct TestPrintBufferAssignmentPass
    : public PassWrapper<TestPrintBufferAssignmentPass,
                         OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintBufferAssignmentPass)

  StringRef getArgument() const final {
    return "test-pd-print-buffer-assignment";
  }
  StringRef getDescription() const final {
    return "Prints the buffer of every stage tensor, each stage's bytes and "
           "parameter layout.";
  }
  void runOnOperation() override;
};

} // namespace

/// Prints one value's home; for a workspace value also its live range as
/// the workspace analysis (WorkspacePlan, on mlir::Liveness) computes it.
static void printValue(llvm::raw_ostream &os, int64_t stage, StringRef phase,
                       StringRef what, Value v, const WorkspacePlan &plan) {
  BufferAttr buffer = getBuffer(v);
  os << "stage = " << stage << ", func = " << phase << ", value = " << what
     << ", region = "
     << (buffer ? stringifyArenaRegion(buffer.getRegion()) : "none")
     << ", offset = " << (buffer ? buffer.getOffset() : -1)
     << ", size = " << getTensorBytes(v.getType());
  if (const WorkspacePlan::Slot *slot = plan.lookup(v))
    os << ", live = [" << slot->start << ", " << slot->end << "]";
  os << "\n";
}

void TestPrintBufferAssignmentPass::runOnOperation() {
  ModuleOp module = getOperation();
  llvm::raw_ostream &os = llvm::outs();
  MLIRContext *ctx = module.getContext();
  for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
    auto stage = getContractInt<PDDialect::StageAttrHelper>(fn);
    auto phase = PDDialect::PhaseAttrHelper(ctx).getAttr(fn);
    if (!stage || !phase)
      continue;
    StringRef phaseName = stringifyPhase(phase.getValue());
    WorkspacePlan plan(
        fn,
        [](Value v) {
          BufferAttr buffer = getBuffer(v);
          return buffer && buffer.getRegion() == ArenaRegion::Workspace;
        },
        /*align=*/64);
    for (BlockArgument arg : fn.getArguments())
      printValue(os, *stage, phaseName,
                 "arg" + std::to_string(arg.getArgNumber()), arg, plan);
    fn.walk([&](Operation *op) {
      for (Value v : op->getResults())
        printValue(os, *stage, phaseName, op->getName().getStringRef(), v,
                   plan);
    });
  }
  int64_t stages = 0;
  if (auto attr = PDDialect::NumStagesAttrHelper(ctx).getAttr(module))
    stages = attr.getInt();
  for (int64_t s = 0; s < stages; ++s) {
    auto info = collectStageInfo(module, s);
    if (failed(info))
      return signalPassFailure();
    const StageRegions &r = info->regions;
    os << "stage = " << s << ", weights = " << r.weights << " x "
       << r.weightVersions << ", grads = " << r.grads
       << ", optimizer = " << r.optimizer << ", stash = " << r.stashSlot
       << " x " << r.stashSlots << ", workspace = " << r.workspace
       << ", comm = " << r.comm << ", tie_grads = " << r.tieGrads
       << ", total = " << r.total() << "\n";
    for (const StageParam &p : info->params) {
      os << "stage = " << s << ", param = " << p.name
         << ", weight = " << p.offset << ", grad = " << p.gradOffset
         << ", optimizer = " << p.optimizerOffset << ", owners =";
      for (int64_t owner : p.owners)
        os << " " << owner;
      os << "\n";
    }
    for (const StageState &st : info->state)
      os << "stage = " << s << ", state = " << st.name
         << ", offset = " << st.offset << ", region bytes = " << r.state
         << "\n";
  }
}

namespace mlir::pd::test {
void registerTestPasses() {
  PassRegistration<TestPrintBufferAssignmentPass>();
}
} // namespace mlir::pd::test
