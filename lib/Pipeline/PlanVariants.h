//===- PlanVariants.h - The model at each microbatch size -------*- C++ -*-===//
//
// The plan search prices candidates at several microbatch sizes b. The
// model exported at one size is imported again at a second; every other
// size's program graph is derived from those two when all its tensors scale
// with the batch (ProgramGraph::atMicrobatch), else imported as well. The
// size finally chosen is imported for real before it is compiled. With
// measured op costs (OpProfiler) every size is imported and measured.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_PLANVARIANTS_H
#define PD_LIB_PIPELINE_PLANVARIANTS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"
#include "OpProfile.h"
#include "pd/Pipeline/Compiler.h"
#include "pd/Planner/DeviceSpec.h"
#include "pd/Planner/ProgramGraph.h"
#include "pd/Support/CompilerOptions.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::pd {

/// The model at one microbatch size: differentiated, and as a program
/// graph; or why it cannot be had. A graph derived from two others has no
/// module.
/// Prices every op of `graph` as the plan search does: its measured
/// seconds (pd.seconds), else its roofline on `spec`.
void priceGraph(ProgramGraph &graph, const DeviceSpec &spec);

struct Variant {
  ModuleOp module;
  OwningOpRef<ModuleOp> owned;
  std::optional<ProgramGraph> graph;
  std::string error;
  bool derived() const { return graph && !module; }
};

/// The model at each microbatch size the search tries: the given module,
/// one more size imported, and the other sizes derived from those two
/// graphs when every tensor scales with the batch (else imported as well).
class Variants {
public:
  Variants(ModuleOp module, const CompilerOptions &o,
           const ModelImporter &reimport, const DeviceSpec &spec,
           OpProfiler &profiler, TimingScope &timing)
      : module(module), o(o), reimport(reimport), spec(spec),
        profiler(profiler), timing(timing) {}

  const Variant &at(int64_t b);
  /// The variant at b with its module, importing it if it was derived.
  Variant &imported(int64_t b);

private:
  Variant load(int64_t b);

  ModuleOp module;
  const CompilerOptions &o;
  const ModelImporter &reimport;
  const DeviceSpec &spec;
  OpProfiler &profiler;
  TimingScope &timing;
  std::map<int64_t, Variant> variants;
  int64_t reference = 0; ///< The other size imported.
};

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_PLANVARIANTS_H
