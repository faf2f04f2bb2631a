//===- StageInfo.h - What one buffer-assigned stage holds -------*- C++ -*-===//
//
// The facts about one pipeline stage that the stage manifest and plan.json
// report, read from a module after pd-allocate-buffers: region sizes,
// parameters and their offsets, graph inputs, channels and FLOPs.
//
//===----------------------------------------------------------------------===//

#ifndef PD_CODEGEN_STAGEINFO_H
#define PD_CODEGEN_STAGEINFO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "pd/Support/ArenaRules.h"

#include <string>
#include <vector>

namespace mlir::pd {

struct StageParam {
  std::string name; ///< ONNX initializer name.
  /// The initializer holding the initial value when it is not `name` (an
  /// eval-mode export's deduplicated copy); empty otherwise.
  std::string initFrom;
  std::vector<int64_t> shape;
  int64_t offset = 0, gradOffset = 0, optimizerOffset = 0;
  /// Every stage holding a copy (more than one for tied parameters).
  std::vector<int64_t> owners;
};

/// A pd.state tensor this stage updates (BatchNormalization running
/// statistics): not trained, one copy in the state region.
struct StageState {
  std::string name; ///< ONNX initializer name.
  std::vector<int64_t> shape;
  int64_t offset = 0;
};

struct StageInput {
  int64_t index = 0;
  std::string name, dtype;
  std::vector<int64_t> shape;
  int64_t classes = 0; ///< Label range when the input feeds a loss.
};

struct StageChannel {
  int64_t id = 0, peer = 0, bytes = 0;
  bool send = false, forward = true;
};

/// The GEMM library measured faster for one pdrt_matmul shape (pdc
/// --profile; runtime/cpu/gemm_library.h).
struct GemmChoice {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  bool openBlas = false; ///< Else oneDNN.
};

struct StageInfo {
  int64_t stage = 0;
  StageRegions regions;
  std::vector<StageParam> params;
  std::vector<StageState> state;
  std::vector<StageInput> inputs;
  std::vector<StageChannel> channels;
  bool loss = false;
  /// Its backward reruns its forward from the stashed inputs (pd.recompute).
  bool recompute = false;
  int64_t forwardFlops = 0, backwardFlops = 0;
  /// FLOPs of the dense products that causal GEMMs skip (their
  /// `triangle`), forward and backward: dense work = the sum of all three.
  int64_t skippedFlops = 0;
  /// The manifest's gemm_libraries (all the model's measured shapes).
  std::vector<GemmChoice> gemmLibraries;
};

/// Reads stage `stage` of a module that went through pd-allocate-buffers.
FailureOr<StageInfo> collectStageInfo(ModuleOp module, int64_t stage);

} // namespace mlir::pd

#endif // PD_CODEGEN_STAGEINFO_H
