//===- Passes.td - pdc compiler passes ---------------------*- tablegen -*-===//
//
// Every phase of pdc between import and codegen. Each pass has one .cpp in
// this folder and one test in test/Passes/<flag without pd->.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES
#define PD_PASSES

include "mlir/Pass/PassBase.td"

// Before pd-autodiff: fusions and rewrites of the imported model.
include "PassesModel.td"
// pd-autodiff and the passes that fold ops into the differentiated
// function's GEMMs and kernels.
include "PassesGradient.td"
// Partitioning, outlining, buffer allocation and lowering to the runtime.
include "PassesStages.td"

#endif // PD_PASSES
