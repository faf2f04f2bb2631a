//===- ONNXImporter.h - ONNX protobuf to the pd dialect ---------*- C++ -*-===//
//
// The public entry point of PDImport: reads an ONNX model (forward + loss)
// and builds a pd module with one `pd.param` per float initializer and a
// `@main` function from the graph inputs to the scalar loss.
//
//===----------------------------------------------------------------------===//

#ifndef PD_IMPORT_ONNXIMPORTER_H
#define PD_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <map>
#include <string>

namespace mlir::pd {

/// How the importer specialises the model (filled from pdc's options).
struct ImportOptions {
  /// Batch size given to dim 0 of every graph input; 0 keeps the exported
  /// dim 0 (which must then be static).
  int64_t batchSize = 0;
  /// Name of the value @main returns as the loss; empty selects the single
  /// graph output.
  std::string lossOutput;
  /// Values of named symbolic dimensions (e.g. the sequence length "T" of a
  /// dynamic-axes export); dimension 0 takes batchSize instead.
  std::map<std::string, int64_t> dimValues;

  /// Adds a `NAME=N` dimension value (N > 0); false if `spec` is not one.
  bool addDimValue(llvm::StringRef spec);
};

/// Imports the ONNX model at `path` into a new module in `ctx` (which must
/// have the pd dialect loaded or loadable). The module carries `pd.model`
/// (the absolute model path) and `pd.opset`, and has been verified. On error
/// emits one diagnostic (located at the offending node when there is one)
/// and returns failure. Never reads the bytes of float initializers, so
/// models whose external data files are absent import fine.
FailureOr<OwningOpRef<ModuleOp>> importONNXFile(llvm::StringRef path,
                                                MLIRContext &ctx,
                                                const ImportOptions &opts);

/// Imports the ONNX model held in `buffer`, whose identifier names the file
/// it came from (recorded, made absolute, as `pd.model`).
FailureOr<OwningOpRef<ModuleOp>> importONNXBuffer(llvm::MemoryBufferRef buffer,
                                                  MLIRContext &ctx,
                                                  const ImportOptions &opts);

} // namespace mlir::pd

#endif // PD_IMPORT_ONNXIMPORTER_H
