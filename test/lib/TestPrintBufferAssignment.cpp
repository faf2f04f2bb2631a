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

static void printValue(llvm::raw_ostream &os, int64_t stage, StringRef phase,
                       StringRef what, Value v, BufferAttr buffer) {
  os << "stage = " << stage << ", func = " << phase << ", value = " << what
     << ", region = " << (buffer ? stringifyArenaRegion(buffer.getRegion()) : "none")
     << ", offset = " << (buffer ? buffer.getOffset() : -1)
     << ", size = " << getTensorBytes(v.getType()) << "\n";
}

void TestPrintBufferAssignmentPass::runOnOperation() {
  ModuleOp module = getOperation();
  llvm::raw_ostream &os = llvm::outs();
  for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
    auto stage = fn->getAttrOfType<IntegerAttr>(kStageAttr);
    auto phase = PDDialect::PhaseAttrHelper(fn.getContext()).getAttr(fn);
    if (!stage || !phase)
      continue;
    for (BlockArgument arg : fn.getArguments())
      printValue(os, stage.getInt(), stringifyPhase(phase.getValue()), "arg" + std::to_string(arg.getArgNumber()),
                 arg, getBuffer(arg));
    fn.walk([&](Operation *op) {
      for (Value v : op->getResults())
        printValue(os, stage.getInt(), stringifyPhase(phase.getValue()), op->getName().getStringRef(), v,
                   getBuffer(v));
    });
  }
  int64_t stages = 0;
  if (auto attr = module->getAttrOfType<IntegerAttr>("pd.num_stages"))
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
       << ", comm = " << r.comm << ", total = " << r.total() << "\n";
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
