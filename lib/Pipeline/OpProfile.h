//===- OpProfile.h - Op costs measured on this machine ----------*- C++ -*-===//
//
// pdc --profile: every costed op of the differentiated model is timed on
// this machine by compiling the model as one profiling stage (each op
// between two pd.profile_mark calls), running one copy of it per core at
// once for a few steps on synthetic data and the model's weights, one thread each (one
// device of the cpu spec is one core, and a plan keeps every core busy),
// and reading the per-op times back. Measurements are cached
// per CPU model and model file (their hash), keyed by each op's signature
// (name, operand and result types, attributes): ops of the same shape, in
// this model or at another microbatch size, share an entry. The planner
// prices an op with its measurement when the cache has one (with --profile
// or from an earlier --profile run), else with the roofline; the measured
// seconds travel with the op as pd.seconds, so the stage model and the
// compiled plan price it the same.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_OPPROFILE_H
#define PD_LIB_PIPELINE_OPPROFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "pd/Support/CompilerOptions.h"
#include "pd/Codegen/StageInfo.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace mlir::pd {

/// The signature measurements are shared by: op name, operand and result
/// types, and the attributes other than pdc's pass contract.
std::string opSignature(Operation *op);

class OpProfiler {
public:
  /// Reads the cache of this CPU and o.modelPath (--profile-cache DIR, else
  /// $PDC_PROFILE_CACHE, else ~/.cache/pdc/profiles).
  explicit OpProfiler(const CompilerOptions &o);

  /// Whether measured costs apply: the cpu device spec, and --profile or
  /// an earlier measurement of this model on this CPU.
  bool active() const { return active_; }

  /// Sets pd.seconds on every costed op of @main of the differentiated
  /// `module` whose signature has a measurement, measuring those without
  /// one first under --profile (and saving them to the cache).
  LogicalResult annotate(ModuleOp module, TimingScope &timing);

  /// "N op shapes measured on CPU (cache FILE)", for plan.json and pdc's
  /// summary.
  std::string describe() const;

  /// The faster library of every pdrt_matmul shape measured for this
  /// model (its ops' seconds on both, summed per shape), for the stages'
  /// manifests.
  std::vector<GemmChoice> gemmLibraries() const;

  /// A pdrt_matmul shape: m, n, k, trans_a, trans_b.
  using GemmShape = std::array<int64_t, 5>;
  /// An op that runs GEMMs, timed with each library.
  struct GemmTimes {
    std::vector<GemmShape> shapes;
    double oneDnn = 0, openBlas = 0;
  };
  /// One op of the profiling run: seconds per call over all its calls and
  /// over its calls on each GEMM library (the run alternates them), the
  /// GEMM shapes it ran.
  struct OpTime {
    double seconds = 0, oneDnn = 0, openBlas = 0;
    std::vector<GemmShape> gemms;
  };

private:
  LogicalResult measure(ModuleOp module, TimingScope &timing);
  /// Records the profiling stage's run (ops by id, `sigs` their
  /// signatures, `matmuls` whether each is a pd.matmul).
  void recordTimes(ArrayRef<std::string> sigs, const std::vector<bool> &matmuls,
                   const std::map<int64_t, OpTime> &times);
  LogicalResult save(Location loc);

  const CompilerOptions &o;
  bool active_ = false;
  std::string cpu, cacheFile;
  llvm::StringMap<double> seconds; ///< Signature -> measured seconds.
  /// Signature -> seconds per call on oneDNN and on OpenBLAS, for the ops
  /// that run pdrt_matmul (older caches have none).
  llvm::StringMap<GemmTimes> gemms;
  int64_t measuredNow = 0;
};

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_OPPROFILE_H
