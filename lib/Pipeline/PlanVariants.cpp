//===- PlanVariants.cpp - The model at each microbatch size ---------------===//

#include "PlanVariants.h"
#include "Phases.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::pd;

void mlir::pd::priceGraph(ProgramGraph &graph, const DeviceSpec &spec) {
  graph.price([&](const ProgramGraph::Op &op) {
    if (!op.costed)
      return 0.0;
    return op.measured >= 0 ? op.measured
                            : rooflineSeconds(op.flops, op.bytes, spec);
  });
}

/// The model at microbatch size b: the given differentiated module at its
/// own size, else imported again and differentiated. Errors are captured.
Variant Variants::load(int64_t b) {
  TimingScope load = timing.nest("import and differentiate");
  Variant v;
  std::string error;
  ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && error.empty())
      error = d.str();
    return success();
  });
  if (b == o.microbatch) {
    v.module = module;
  } else {
    FailureOr<OwningOpRef<ModuleOp>> m = reimport(b);
    if (failed(m) || failed(runAutodiff(**m, /*commandLine=*/false))) {
      v.error = "microbatch " + std::to_string(b) + ": " + error;
      return v;
    }
    v.owned = std::move(*m);
    v.module = *v.owned;
  }
  auto main = v.module.lookupSymbol<func::FuncOp>("main");
  if (!main) {
    v.error = "the model has no @main";
    return v;
  }
  if (failed(profiler.annotate(v.module, timing))) {
    v.error = "microbatch " + std::to_string(b) + ": " + error;
    return v;
  }
  FailureOr<ProgramGraph> graph = ProgramGraph::build(main);
  if (failed(graph)) {
    v.error = error;
    return v;
  }
  priceGraph(*graph, spec);
  v.graph = std::move(*graph);
  return v;
}

const Variant &Variants::at(int64_t b) {
  auto it = variants.find(b);
  if (it != variants.end())
    return it->second;
  if (b != o.microbatch && reference && reference != b) {
    const Variant &base = at(o.microbatch), &ref = at(reference);
    if (base.graph && ref.graph) {
      TimingScope derive = timing.nest("derive other microbatch sizes");
      std::optional<ProgramGraph> g = ProgramGraph::atMicrobatch(
          *base.graph, o.microbatch, *ref.graph, reference, b);
      if (g) {
        priceGraph(*g, spec);
        Variant v;
        v.graph = std::move(*g);
        return variants.emplace(b, std::move(v)).first->second;
      }
    }
  }
  if (b != o.microbatch && !reference)
    reference = b;
  return variants.emplace(b, load(b)).first->second;
}

Variant &Variants::imported(int64_t b) {
  Variant &v = variants[b];
  if (v.derived())
    v = load(b);
  return v;
}
