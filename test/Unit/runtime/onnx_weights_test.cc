//===- onnx_weights_test.cc - Initial weights in, trained model out ----------===//
//
// Loads params from a small ModelProto written here, including an eval-mode
// copy (`g1 = Identity(g0)`) loaded from its source initializer, and checks
// that writing the trained model turns the copy into an initializer of its
// own and removes its Identity node; loads state (running statistics) into
// the state region; parses a manifest's state entries.
//
//===----------------------------------------------------------------------===//

#include "exec/manifest.h"
#include "exec/onnx_weights.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>

using namespace pdrt;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/pdrt_" + name;
}

void addInitializer(onnx::GraphProto *graph, const std::string &name,
                    const std::vector<float> &values) {
  onnx::TensorProto *t = graph->add_initializer();
  t->set_name(name);
  t->add_dims((int64_t)values.size());
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
}

/// loss-free toy graph: g1 = Identity(g0); y = Mul(x, g0); z = Mul(y, g1).
std::string writeModelWithCopy() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto *graph = model.mutable_graph();
  addInitializer(graph, "g0", {1, 1, 1});
  onnx::NodeProto *copy = graph->add_node();
  copy->set_op_type("Identity");
  copy->add_input("g0");
  copy->add_output("g1");
  for (auto [a, b, out] : {std::tuple{"x", "g0", "y"}, {"y", "g1", "z"}}) {
    onnx::NodeProto *mul = graph->add_node();
    mul->set_op_type("Mul");
    mul->add_input(a);
    mul->add_input(b);
    mul->add_output(out);
  }
  std::string path = tempPath("copy.onnx");
  std::ofstream f(path, std::ios::binary);
  model.SerializeToOstream(&f);
  return path;
}

ParamInfo param(const std::string &name, const std::string &initFrom,
                int64_t offset) {
  ParamInfo p;
  p.name = name;
  p.initFrom = initFrom;
  p.shape = {3};
  p.numel = 3;
  p.offset = offset;
  return p;
}

TEST(OnnxWeights, CopyLoadsFromItsSourceAndIsSavedAsItsOwnInitializer) {
  std::string path = writeModelWithCopy();
  Manifest m;
  m.params = {param("g0", "", 0), param("g1", "g0", 64)};
  std::vector<char> weights(128, 0);
  ASSERT_TRUE(loadInitialWeights(m, path, weights.data(), 128, 1).isOk());
  const float *w = reinterpret_cast<const float *>(weights.data());
  EXPECT_EQ(w[0], 1.0f);
  EXPECT_EQ(w[16], 1.0f); // g1 at byte 64, from g0's data

  ParamValues trained = {{"g0", {2, 3, 4}}, {"g1", {5, 6, 7}}};
  std::string out = tempPath("copy-trained.onnx");
  ASSERT_TRUE(writeTrainedModel(path, trained, out).isOk());
  onnx::ModelProto saved;
  std::ifstream f(out, std::ios::binary);
  ASSERT_TRUE(saved.ParseFromIstream(&f));
  ASSERT_EQ(saved.graph().initializer_size(), 2);
  const onnx::TensorProto &g1 = saved.graph().initializer(1);
  EXPECT_EQ(g1.name(), "g1");
  ASSERT_EQ(g1.dims_size(), 1);
  EXPECT_EQ(g1.dims(0), 3);
  float values[3];
  ASSERT_EQ(g1.raw_data().size(), sizeof(values));
  std::memcpy(values, g1.raw_data().data(), sizeof(values));
  EXPECT_EQ(values[0], 5.0f);
  EXPECT_EQ(values[2], 7.0f);
  ASSERT_EQ(saved.graph().node_size(), 2);
  for (const onnx::NodeProto &node : saved.graph().node())
    EXPECT_NE(node.op_type(), "Identity");
}

TEST(OnnxWeights, StateLoadsIntoTheStateRegion) {
  std::string path = writeModelWithCopy();
  Manifest m;
  StateInfo s;
  s.name = "g0";
  s.shape = {3};
  s.numel = 3;
  s.offset = 64;
  m.state = {s};
  std::vector<float> state(32, 0.0f);
  ASSERT_TRUE(loadInitialState(m, path, reinterpret_cast<char *>(state.data()))
                  .isOk());
  EXPECT_EQ(state[16], 1.0f);
  EXPECT_EQ(state[18], 1.0f);
  m.state[0].shape = {4};
  m.state[0].numel = 4;
  Status bad = loadInitialState(m, path, reinterpret_cast<char *>(state.data()));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("'g0' has shape [3]"), std::string::npos);
}

TEST(OnnxWeights, ManifestStateEntriesAndRegion) {
  std::string text = R"({"format": "pdc-stage-manifest", "version": 1,
    "stage": 0, "stages": 1, "replicas": 1, "schedule": "flush",
    "microbatch": 2, "microbatches": 1, "optimizer": {"name": "sgd", "lr": 0.1},
    "regions": {"weights": 64, "weight_versions": 1, "grads": 64,
                "optimizer": 0, "state": 128, "stash_slot": 64,
                "stash_slots": 1, "workspace": 0, "comm": 0},
    "state": [{"name": "bn.running_mean", "shape": [4], "offset": 0},
              {"name": "bn.running_var", "shape": [4], "offset": 64}]})";
  Manifest m;
  Status s = parseManifest(text, &m);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(m.state.size(), 2u);
  EXPECT_EQ(m.state[1].numel, 4);
  EXPECT_EQ(m.regions.stateOffset(), 128);
  EXPECT_EQ(m.regions.stashOffset(), 256);
  std::string outside = text, from = "\"offset\": 64";
  outside.replace(outside.find(from), from.size(), "\"offset\": 120");
  s = parseManifest(outside, &m);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("state 'bn.running_var'"), std::string::npos);
}

TEST(OnnxWeights, UnknownTrainedNameIsAnError) {
  std::string path = writeModelWithCopy();
  Status s = writeTrainedModel(path, {{"nope", {1, 2, 3}}},
                               tempPath("nope.onnx"));
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("'nope'"), std::string::npos);
}

} // namespace
