//===- Pipeline.cpp - The pass pipelines of pdc -----------------*- C++ -*-===//
//
// Builds the phases of the training compiler from the pd passes, each
// addPass with the reason it is there, and registers the whole sequence as
// `pd-training-pipeline` for pd-opt.
//
//===----------------------------------------------------------------------===//

#include "pd/Pipeline/Pipeline.h"
#include "mlir/Pass/PassRegistry.h"
#include "passes/Passes.h"

using namespace mlir;
using namespace mlir::pd;

void mlir::pd::addAutodiffPhase(OpPassManager &pm,
                                ArrayRef<MatMulRowSplit> splits) {
  // Simplify the imported forward first: fused ops differentiate into
  // fused gradient kernels and stash less.
  pm.addPass(createFuseDecomposedOpsPass());
  // Attention's scale, causal mask and softmax: one kernel each way.
  pm.addPass(createFuseAttentionSoftmaxPass());
  // The rotary position embedding: one kernel each way.
  pm.addPass(createFuseRotaryEmbeddingPass());
  // The heads' transposes moved below the slices and rotations between
  // them and the attention's GEMMs, where they fold into the GEMMs.
  pm.addPass(createSinkTransposesPass());
  // Linear layers' biases into their matmuls' epilogues.
  pm.addPass(createFuseMatMulBiasPass());
  // A fused projection sliced into column blocks (Phi-3's QKV and gate-up
  // projections): one GEMM per block instead of the slices' copies.
  pm.addPass(createSplitSlicedMatMulsPass());
  // Residual adds into the layer norms that read their sums.
  pm.addPass(createFuseResidualLayerNormPass());
  // Those biases into the GELUs and residual norms that read the products,
  // which add them in their pass: the GEMM writes its product once.
  pm.addPass(createFuseBiasIntoConsumersPass());
  // The planner's row splits of the GEMMs at its stage cuts: a cut can
  // then fall inside one (the op ids are those the autodiff gives).
  if (!splits.empty()) {
    std::vector<int64_t> ids, rows;
    for (MatMulRowSplit s : splits) {
      ids.push_back(s.opId);
      rows.push_back(s.rows);
    }
    SplitMatMulRowsPassOptions split;
    split.opIds = ids;
    split.rows = rows;
    pm.addPass(createSplitMatMulRowsPass(split));
  }
  // Forward + backward in one function, gradient ops tagged with the op
  // they differentiate, so partitioning can keep them together.
  pm.addPass(createAutodiffPass());
  // Split's gradient: the slices' gradients concatenated, not zero-padded
  // and summed.
  pm.addPass(createFuseSliceGradientsPass());
  // The objective's cross-entropy gradient computed with the loss: one
  // exponential per logit instead of two.
  pm.addPass(createFuseCrossEntropyGradientPass());
  // Grouped-query attention's shared K and V heads read in place, and
  // their gradients summed by the GEMMs, instead of copied and summed.
  pm.addPass(createFoldBroadcastsIntoMatMulPass());
  // Attention's head transposes, forward and backward, read and written
  // through the batched GEMMs' strides instead of copied.
  pm.addPass(createFoldTransposesIntoMatMulPass());
  // Q, K and V read by those GEMMs in place from the fused QKV projection
  // instead of sliced out of it.
  pm.addPass(createFoldSlicesIntoMatMulPass());
  // Under a causal mask, attention's GEMMs skip the blocks above the
  // diagonal that the mask zeroes or never reads.
  pm.addPass(createMarkCausalGemmsPass());
  // Trees of single-use elementwise ops: one pass over memory each.
  pm.addPass(createFuseElementwiseChainsPass());
  // Bias gradients summed in the pass of the GELU or layer-norm gradient
  // they read, where both differentiate one forward op (which partitioning
  // keeps on one stage): the planner prices, and the profiling stage
  // times, the fused op the stages run.
  FuseBiasGradientsPassOptions oneForwardOp;
  oneForwardOp.sameForwardOp = true;
  pm.addPass(createFuseBiasGradientsPass(oneForwardOp));
}

void mlir::pd::addStagesPhase(OpPassManager &pm,
                              const TrainingPipelineOptions &options) {
  // Decide: balance forward+backward FLOPs over contiguous stages.
  PartitionStagesPassOptions partition;
  partition.numStages = options.stages;
  partition.cuts = options.stageCuts;
  pm.addPass(createPartitionStagesPass(partition));
  // Rewrite: per-stage forward/backward functions with explicit stash and
  // send/recv, the form every later phase works on.
  pm.addPass(createOutlineStagesPass());
  // Rewrite: listed stages stash only their inputs and rerun their forward.
  if (!options.recomputeStages.empty()) {
    RecomputeForwardPassOptions recompute;
    recompute.stages = options.recomputeStages;
    pm.addPass(createRecomputeForwardPass(recompute));
  }
  // Measure: a profiling stage times each of its ops.
  if (options.profileMarks)
    pm.addPass(createInsertProfileMarksPass());
}

void mlir::pd::addBuffersPhase(OpPassManager &pm,
                               const TrainingPipelineOptions &options) {
  // The other bias gradients summed in the pass of the gradient they read
  // (they differentiate another forward op than it: on the stage
  // functions, both are known to share a stage). Not in the profiling
  // stage, which times the ops the planner prices.
  if (!options.profileMarks)
    pm.addPass(createFuseBiasGradientsPass());
  // Batched GEMMs write the results a concat joins into its result
  // (attention's dQ, dK, dV): its copies go. Not in the profiling stage
  // either.
  if (!options.profileMarks)
    pm.addPass(createConcatInPlacePass());
  // Weight gradients of matmuls add straight into their accumulators.
  pm.addPass(createAccumulateInPlacePass());
  // Give every tensor its region and offset; this sets each stage's exact
  // memory, which plan.json reports and the runtime allocates.
  AllocateBuffersPassOptions buffers;
  buffers.schedule = options.schedule;
  buffers.microbatches = options.microbatches;
  buffers.optimizer = options.optimizer;
  pm.addPass(createAllocateBuffersPass(buffers));
  // Attention's batched kernels run entry by entry, each (batch, head)'s
  // scores in cache from kernel to kernel (on the allocated functions,
  // where views are known). In the profiling stage too: the planner then
  // prices them as the stages run them.
  pm.addPass(createInterleaveBatchedOpsPass());
}

namespace {
/// pd-opt's view of TrainingPipelineOptions.
struct TrainingPipelineCLOptions
    : public PassPipelineOptions<TrainingPipelineCLOptions> {
  Option<int64_t> stages{*this, "num-stages",
                         llvm::cl::desc("Pipeline stages"), llvm::cl::init(1)};
  Option<int64_t> microbatches{
      *this, "microbatches",
      llvm::cl::desc("Microbatches per batch (0: the number of stages)"),
      llvm::cl::init(0)};
  Option<Schedule> schedule{*this, "schedule",
                            llvm::cl::desc("2bw, flush or gpipe"),
                            llvm::cl::init(Schedule::TwoBW), scheduleChoices()};
  Option<Optimizer> optimizer{*this, "optimizer",
                              llvm::cl::desc("sgd, momentum, adam, adamw"),
                              llvm::cl::init(Optimizer::SGD),
                              optimizerChoices()};
  ListOption<int64_t> recomputeStages{
      *this, "recompute-stages",
      llvm::cl::desc("Stages whose backward recomputes their forward")};
};
} // namespace

void mlir::pd::registerTrainingPipeline() {
  PassPipelineRegistration<TrainingPipelineCLOptions>(
      "pd-training-pipeline",
      "Autodiff, stage partitioning and outlining, and buffer allocation",
      [](OpPassManager &pm, const TrainingPipelineCLOptions &cl) {
        TrainingPipelineOptions options;
        options.stages = cl.stages;
        options.microbatches = cl.microbatches;
        options.schedule = cl.schedule;
        options.optimizer = cl.optimizer;
        options.recomputeStages.assign(cl.recomputeStages.begin(),
                                       cl.recomputeStages.end());
        addAutodiffPhase(pm);
        addStagesPhase(pm, options);
        addBuffersPhase(pm, options);
      });
}
