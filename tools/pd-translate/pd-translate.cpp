//===- pd-translate.cpp - Translations into the pd dialect ------*- C++ -*-===//
//
// mlir-translate for pd: `pd-translate --import-onnx model.onnx` runs the
// ONNX importer alone and prints the imported module, so the importer is
// tested without pdc's driver (as mlir-translate tests MLIR's importers).
// --microbatch, --loss and --dim specialise the import as pdc's do.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDDialect.h"
#include "pd/Import/ONNXImporter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<int64_t> microbatch(
    "microbatch", cl::desc("--import-onnx: dim 0 of every graph input "
                           "(0 keeps the exported one)"),
    cl::init(0));
static cl::opt<std::string>
    lossName("loss", cl::desc("--import-onnx: the graph output that is the "
                              "loss (default: the only one)"));
static cl::list<std::string>
    dimValues("dim", cl::desc("--import-onnx: NAME=N, the value of a "
                              "symbolic dimension"));

/// The --import-onnx translation: the main buffer is the model's bytes.
static OwningOpRef<Operation *> importONNX(llvm::SourceMgr &sourceMgr,
                                          MLIRContext *ctx) {
  pd::ImportOptions opts;
  opts.batchSize = microbatch;
  opts.lossOutput = lossName;
  for (const std::string &spec : dimValues)
    if (!opts.addDimValue(spec)) {
      emitError(UnknownLoc::get(ctx))
          << "--dim expects NAME=N with N > 0, got '" << spec << "'";
      return nullptr;
    }
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  auto module = pd::importONNXBuffer(buffer->getMemBufferRef(), *ctx, opts);
  if (failed(module))
    return nullptr;
  return OwningOpRef<Operation *>(module->release());
}

int main(int argc, char **argv) {
  TranslateToMLIRRegistration importRegistration(
      "import-onnx", "import an ONNX model (forward + loss) into pd",
      importONNX, [](DialectRegistry &registry) {
        registry.insert<pd::PDDialect, func::FuncDialect>();
      });
  return failed(mlirTranslateMain(argc, argv, "pd translation driver"));
}
