//===- stage_model_test.cc - The memory model on a small program ----------===//
//
// The stage model (StageModel.h) on the differentiated MLP of
// test/Import/mlp.onnxtext, worked out by hand from the rules of
// pd-outline-stages and pd-allocate-buffers; and the program graph at
// another microbatch size derived from two (ProgramGraph::atMicrobatch)
// against the graph of that size itself.
//
//===----------------------------------------------------------------------===//

#include "mlp_program.h"
#include "pd/Planner/StageModel.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::pd;

using namespace pdtest;

// Cut before the second matmul (chain position 3 of matmul, add, relu,
// matmul, add, cross-entropy), momentum.
TEST(StageModel, TwoStagesOfTheMLPByHand) {
  Program p(mlpAt(4));
  ASSERT_EQ(p.graph.chain.opIds.size(), 6u);
  auto model = modelStages(p.graph, {3}, {}, Optimizer::Momentum);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  const StageRegions &s0 = model->stages[0].regions;
  // w1 (512 bytes) and b1 (64): weights, gradients, one velocity each.
  EXPECT_EQ(s0.weights, 576);
  EXPECT_EQ(s0.grads, 576);
  EXPECT_EQ(s0.optimizer, 576);
  // The backward reads relu's output (256) and x (128): the stash. relu's
  // output is also sent to stage 1, from the stash (no comm).
  EXPECT_EQ(s0.stashSlot, 384);
  EXPECT_EQ(s0.comm, 0);
  // Forward: matmul [2, 4] and add [4, 5] overlap (512); backward: the
  // received gradient, relu_grad and sum_to pack into 512 (the weight
  // gradient matmul accumulates in place).
  EXPECT_EQ(s0.workspace, 512);
  ASSERT_EQ(model->stages[0].recvs.size(), 1u);
  EXPECT_EQ(model->stages[0].recvs[0],
            (StageRecv{/*peer=*/1, /*bytes=*/256, /*forward=*/false}));
  const StageRegions &s1 = model->stages[1].regions;
  // w2 (640) and b2 (40 -> 64).
  EXPECT_EQ(s1.weights, 704);
  // Stage 1 sends relu's gradient (256) from its workspace-free comm.
  EXPECT_EQ(s1.comm, 256);
  EXPECT_TRUE(model->tiedBytes.empty());
}

// The loss computes its gradient with it (a forward value) and the second
// Linear's gradient ops read it: no cut may separate them (before the add
// or the loss), where stage 1's forward would have to receive it from
// stage 2's.
TEST(StageModel, ChainForbidsCutsWhereTheLossGradientFlowsBack) {
  EXPECT_TRUE(Program(mlpAt(4)).graph.chain.flowsBack.empty());
  // The MLP after pd-fuse-cross-entropy-gradient.
  std::string text = mlpAt(4);
  auto replaceLine = [&](const std::string &start, const std::string &with) {
    size_t at = text.find(start);
    ASSERT_NE(at, std::string::npos) << start;
    text.replace(at, text.find('\n', at) + 1 - at, with);
  };
  replaceLine("  %9 = ", "  %9, %11 = pd.softmax_cross_entropy_with_grad %8, "
                         "%arg1 {pd.op_id = 9 : i64} : tensor<4x10xf32>, "
                         "tensor<4xi64> -> tensor<f32>, tensor<4x10xf32>\n");
  replaceLine("  %10 = ", "");
  replaceLine("  %11 = ", "");
  Program fused(text);
  EXPECT_EQ(fused.graph.chain.flowsBack,
            (std::vector<char>{0, 0, 0, 0, 1, 1, 0}));
}

// A gradient that a gradient op of a later position reads (here the
// second Linear's input gradient, retagged to the first Linear, read by
// the relu's gradient): a cut between them would have the later stage's
// backward wait for the earlier one's, which waits for it (a Llama export
// planned at d=3 did). No cut in (producer, reader].
TEST(StageModel, ChainForbidsCutsWhereAGradientFlowsForward) {
  std::string text = mlpAt(4);
  std::string from = "%13 = pd.matmul %11, %5 {pd.grad_of = 7 : i64}";
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(),
               "%13 = pd.matmul %11, %5 {pd.grad_of = 2 : i64}");
  Program retagged(text);
  EXPECT_EQ(retagged.graph.chain.flowsBack,
            (std::vector<char>{0, 1, 1, 0, 0, 0, 0}));
}

// A view of a parameter read (pd-split-sliced-matmuls' row blocks of one
// weight; here b2 read as the leading rows of b1's read) is a source in
// the weights, priced at nothing; and the read is one value on one stage:
// no cut between its readers, the first layer's add and the second's.
TEST(StageModel, ChainForbidsCutsBetweenReadersOfOneParameterRead) {
  std::string text = mlpAt(4);
  std::string from = "%6 = pd.param_ref @b2 {pd.op_id = 6 : i64} : "
                     "tensor<10xf32>";
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(),
               "%6 = pd.slice %1 {pd.op_id = 6 : i64, starts = array<i64: 0>, "
               "steps = array<i64: 1>} : tensor<16xf32> -> tensor<10xf32>");
  Program viewed(text);
  const ProgramGraph &g = viewed.graph;
  int views = 0;
  for (const ProgramGraph::Op &op : g.ops)
    if (op.weightView) {
      ++views;
      EXPECT_TRUE(op.isSource());
      EXPECT_EQ(op.seconds, 0);
    }
  EXPECT_EQ(views, 1);
  ASSERT_FALSE(g.chain.flowsBack.empty());
  // Positions: matmul, add, relu, the view, matmul, add, cross-entropy.
  // b1's read feeds the add at position 1, the view at 3 and through it
  // the add at 5: no cut at 2 to 5.
  EXPECT_EQ(g.chain.flowsBack, (std::vector<char>{0, 0, 1, 1, 1, 1, 0, 0}));
}

// Recomputing stage 0 stashes only x; its backward reruns the forward.
TEST(StageModel, RecomputationStashesTheInputs) {
  Program p(mlpAt(4));
  auto none = modelStages(p.graph, {3}, {}, Optimizer::SGD);
  auto full = modelStages(p.graph, {3}, {0}, Optimizer::SGD);
  ASSERT_TRUE(bool(none) && bool(full));
  EXPECT_EQ(full->stages[0].regions.stashSlot, 128);
  EXPECT_TRUE(full->stages[0].recompute);
  EXPECT_GT(full->stages[0].backwardSeconds, none->stages[0].backwardSeconds);
  EXPECT_DOUBLE_EQ(full->stages[0].backwardSeconds,
                   none->stages[0].backwardSeconds +
                       none->stages[0].forwardSeconds);
}

// Schedules: 2BW keeps two weight versions and d - k stash slots, GPipe m.
TEST(StageModel, ScheduleSetsVersionsAndSlots) {
  Program p(mlpAt(4));
  auto model = modelStages(p.graph, {3}, {}, Optimizer::SGD);
  ASSERT_TRUE(bool(model));
  PipelineSummary twoBW = *model, gpipe = *model;
  twoBW.applySchedule(Schedule::TwoBW, 4);
  gpipe.applySchedule(Schedule::GPipe, 4);
  EXPECT_EQ(twoBW.stages[0].regions.weightVersions, 2);
  EXPECT_EQ(twoBW.stages[0].regions.stashSlots, 2);
  EXPECT_EQ(twoBW.stages[1].regions.stashSlots, 1);
  EXPECT_EQ(gpipe.stages[1].regions.stashSlots, 4);
  EXPECT_EQ(gpipe.stages[0].regions.weightVersions, 1);
}

// The graph at b = 2 derived from b = 4 and b = 8 equals the graph of the
// model at b = 2.
TEST(StageModel, DerivedMicrobatchSizeEqualsTheReal) {
  Program at4(mlpAt(4)), at8(mlpAt(8)), at2(mlpAt(2));
  std::optional<ProgramGraph> derived =
      ProgramGraph::atMicrobatch(at4.graph, 4, at8.graph, 8, 2);
  ASSERT_TRUE(derived.has_value());
  ASSERT_EQ(derived->values.size(), at2.graph.values.size());
  for (size_t v = 0; v < derived->values.size(); ++v)
    EXPECT_EQ(derived->values[v].bytes, at2.graph.values[v].bytes) << v;
  for (size_t i = 0; i < derived->ops.size(); ++i) {
    EXPECT_DOUBLE_EQ(derived->ops[i].flops, at2.graph.ops[i].flops) << i;
    EXPECT_DOUBLE_EQ(derived->ops[i].bytes, at2.graph.ops[i].bytes) << i;
  }
}
