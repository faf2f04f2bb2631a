//===- data_manifest_test.cc - .npy reader, data rows, manifest, arguments ---===//
//
// Round-trips .npy files, rejects malformed ones with messages naming the
// file, checks which rows pdrt_load_input serves for (step, replica,
// microbatch), and checks manifest and command-line validation errors.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "exec/data_npy.h"
#include "exec/executor.h"
#include "exec/manifest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace pdrt;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/pdrt_" + name;
}

void writeRaw(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Npy, RoundTripFloatAndInt64) {
  std::vector<float> f = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> l = {7, -100, 3};
  ASSERT_TRUE(writeNpy(tempPath("f.npy"), DType::Float32, {3, 2}, f.data()).isOk());
  ASSERT_TRUE(writeNpy(tempPath("l.npy"), DType::Int64, {3}, l.data()).isOk());
  NpyArray a, b;
  ASSERT_TRUE(readNpy(tempPath("f.npy"), &a).isOk());
  ASSERT_TRUE(readNpy(tempPath("l.npy"), &b).isOk());
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(b.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(b.dtype, DType::Int64);
  EXPECT_EQ(0, memcmp(a.data.data(), f.data(), 24));
  EXPECT_EQ(0, memcmp(b.data.data(), l.data(), 24));
}

TEST(Npy, Version2Header) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  header.resize(128 - 12 - 1, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x02\x00", 8);
  uint32_t len = header.size();
  bytes.append((const char *)&len, 4);
  bytes += header;
  float v[2] = {1.5f, -2.0f};
  bytes.append((const char *)v, 8);
  writeRaw(tempPath("v2.npy"), bytes);
  NpyArray a;
  ASSERT_TRUE(readNpy(tempPath("v2.npy"), &a).isOk());
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(((float *)a.data.data())[1], -2.0f);
}

std::string npyError(const std::string &name, const std::string &header,
                     const std::string &payload) {
  std::string h = header;
  h.resize(128 - 10 - 1, ' ');
  h += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  uint16_t len = h.size();
  bytes.append((const char *)&len, 2);
  writeRaw(tempPath(name), bytes + h + payload);
  NpyArray a;
  Status s = readNpy(tempPath(name), &a);
  EXPECT_FALSE(s.isOk());
  return s.message();
}

TEST(Npy, Errors) {
  EXPECT_NE(npyError("f8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                     std::string(8, '\0')).find("unsupported dtype"), std::string::npos);
  EXPECT_NE(npyError("fo.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
                     std::string(4, '\0')).find("fortran_order"), std::string::npos);
  EXPECT_NE(npyError("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                     std::string(4, '\0')).find("shorter than its shape (4,)"),
            std::string::npos);
  writeRaw(tempPath("magic.npy"), "not numpy at all");
  NpyArray a;
  EXPECT_NE(readNpy(tempPath("magic.npy"), &a).message().find("magic.npy: not a .npy"),
            std::string::npos);
  EXPECT_NE(readNpy(tempPath("absent.npy"), &a).message().find("cannot open data file"),
            std::string::npos);
}

const char *kManifest = R"({
  "format": "pdc-stage-manifest", "version": 1,
  "stage": 0, "stages": 2, "replicas": 2, "schedule": "2bw",
  "microbatch": 2, "microbatches": 3,
  "optimizer": {"name": "adam", "lr": 0.001, "momentum": 0.9, "beta1": 0.9,
                "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0},
  "model": "/abs/path/model.onnx",
  "regions": {"weights": 1024, "weight_versions": 2, "grads": 1024,
              "optimizer": 2048, "stash_slot": 512, "stash_slots": 2,
              "workspace": 4096, "comm": 256},
  "params": [{"name": "fc1.weight", "shape": [16, 8], "offset": 0,
              "grad_offset": 0, "optimizer_offset": 0, "owners": [0, 1]}],
  "inputs": [{"index": 0, "name": "x", "dtype": "float32", "shape": [2, 3],
              "classes": 0},
             {"index": 1, "name": "y", "dtype": "int64", "shape": [2],
              "classes": 5}],
  "channels": [{"id": 0, "peer": 1, "direction": "send", "phase": "forward",
                "bytes": 256}],
  "loss": false,
  "gemm_libraries": [{"m": 16, "n": 8, "k": 4, "trans_a": true,
                      "trans_b": false, "library": "openblas"},
                     {"m": 2, "n": 16, "k": 8, "trans_a": false,
                      "trans_b": true, "library": "onednn"}]
})";

TEST(Manifest, ParsesDocumentedExample) {
  Manifest m;
  Status s = parseManifest(kManifest, &m);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(m.schedule, ScheduleKind::TwoBW);
  EXPECT_EQ(m.optimizer.kind, OptimizerKind::Adam);
  EXPECT_EQ(m.params[0].numel, 128);
  EXPECT_EQ(m.params[0].owners, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(m.inputs[0].rowElems, 3);
  EXPECT_EQ(m.regions.total(), 2048 + 1024 + 2048 + 1024 + 4096 + 256);
  EXPECT_EQ(m.regions.stashOffset(), 2048 + 1024 + 2048);
  EXPECT_TRUE(m.channels[0].isSend && m.channels[0].isForward);
  ASSERT_EQ(m.gemmLibraries.size(), 2u);
  EXPECT_EQ(m.gemmLibraries.at({16, 8, 4, true, false}), GemmLibrary::OpenBLAS);
  EXPECT_EQ(m.gemmLibraries.at({2, 16, 8, false, true}), GemmLibrary::OneDNN);
}

std::string manifestError(const std::string &pointer, const nlohmann::json &value,
                          bool erase = false) {
  nlohmann::json j = nlohmann::json::parse(kManifest);
  if (erase)
    j.erase(pointer.substr(1));
  else
    j[nlohmann::json::json_pointer(pointer)] = value;
  Manifest m;
  Status s = parseManifest(j.dump(), &m);
  EXPECT_FALSE(s.isOk()) << pointer;
  return s.message();
}

TEST(Manifest, Errors) {
  Manifest m;
  EXPECT_EQ(parseManifest("{not json", &m).message(), "manifest: not a valid JSON object");
  EXPECT_EQ(manifestError("/stages", nullptr, true), "manifest: missing key 'stages'");
  EXPECT_EQ(manifestError("/schedule", "pipedream"),
            "manifest: unknown schedule 'pipedream' (expected 2bw, flush or gpipe)");
  EXPECT_EQ(manifestError("/microbatches", 1),
            "manifest: schedule 2bw needs microbatches >= stages (m = 1, d = 2)");
  EXPECT_EQ(manifestError("/regions/grads", 100),
            "manifest: regions.grads = 100 is not a non-negative multiple of 64");
  EXPECT_EQ(manifestError("/regions/weight_versions", 1),
            "manifest: schedule 2bw needs 2 weight version(s), regions.weight_versions is 1");
  EXPECT_EQ(manifestError("/params/0/offset", 768),
            "manifest: param 'fc1.weight' (bytes [768, 1280)) does not fit in the "
            "weights region of 1024 bytes");
  EXPECT_EQ(manifestError("/params/0/owners", nlohmann::json::array({1, 0})),
            "manifest: param 'fc1.weight' owners must be distinct ascending "
            "stages in [0, 2) including stage 0");
  EXPECT_EQ(manifestError("/params/0/owners", nlohmann::json::array({1})),
            "manifest: param 'fc1.weight' owners must be distinct ascending "
            "stages in [0, 2) including stage 0");
  EXPECT_EQ(manifestError("/params/0/owners", nlohmann::json::array({0, 2})),
            "manifest: param 'fc1.weight' owners must be distinct ascending "
            "stages in [0, 2) including stage 0");
  EXPECT_EQ(manifestError("/optimizer/name", "lion"),
            "manifest: unknown optimizer 'lion' (expected sgd, momentum, adam or adamw)");
  EXPECT_EQ(manifestError("/inputs/0/shape", nlohmann::json::array({4, 3})),
            "manifest: input 'x' must have the microbatch (2) as its first dim");
  EXPECT_EQ(manifestError("/microbatch", "two"), "manifest: key 'microbatch' has the wrong type");
  EXPECT_EQ(manifestError("/gemm_libraries/0/library", "mkl"),
            "manifest: gemm_libraries[0].library must be onednn or openblas, "
            "not 'mkl'");
  EXPECT_EQ(manifestError("/gemm_libraries/1/k", nullptr, false),
            "manifest: key 'gemm_libraries[1].k' has the wrong type");
  EXPECT_EQ(manifestError("/gemm_libraries/1/m", 0),
            "manifest: gemm_libraries[1] has a bad shape");
  EXPECT_EQ(manifestError("/gemm_libraries", "all"),
            "manifest: 'gemm_libraries' must be an array");
  EXPECT_EQ(manifestStageHint(kManifest), 0);
}

TEST(Data, RowsOfStepReplicaMicrobatchWrapAround) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kManifest, &m).isOk());
  // x: 10 samples of 3 floats, value = 10 * sample + column.
  std::vector<float> x(30);
  for (int s = 0; s < 10; ++s)
    for (int c = 0; c < 3; ++c)
      x[s * 3 + c] = 10.0f * s + c;
  std::vector<int64_t> y(10);
  for (int s = 0; s < 10; ++s)
    y[s] = s % 5;
  std::string dir = ::testing::TempDir();
  ASSERT_TRUE(writeNpy(dir + "/x.npy", DType::Float32, {10, 3}, x.data()).isOk());
  ASSERT_TRUE(writeNpy(dir + "/y.npy", DType::Int64, {10}, y.data()).isOk());
  DataSource data;
  Status s = data.openDir(m, dir);
  ASSERT_TRUE(s.isOk()) << s.message();
  pdrt_ctx ctx;
  ctx.manifest = &m;
  ctx.data = &data;
  ctx.replica = 1;
  ctx.microbatch = 1 * 3 + 2; // step 1, microbatch 2
  float rows[6];
  pdrt_load_input(&ctx, 0, rows, sizeof(rows));
  ASSERT_FALSE(ctx.failed) << ctx.error;
  // B = 2*3*2 = 12; first = 12 + 1*6 + 2*2 = 22 -> samples 22, 23 mod 10.
  EXPECT_EQ(rows[0], 20.0f);
  EXPECT_EQ(rows[3], 30.0f);
  int64_t labels[2];
  pdrt_load_input(&ctx, 1, labels, sizeof(labels));
  EXPECT_EQ(labels[0], 2);
  EXPECT_EQ(labels[1], 3);
  pdrt_load_input(&ctx, 0, rows, 4);
  EXPECT_TRUE(ctx.failed);
  EXPECT_NE(ctx.error.find("called with 4"), std::string::npos);
}

TEST(Data, ShapeMismatchNamesFileAndExpectedShape) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kManifest, &m).isOk());
  std::string dir = ::testing::TempDir() + "/pdrt_bad";
  std::remove((dir + "/x.npy").c_str());
  ASSERT_EQ(0, system(("mkdir -p " + dir).c_str()));
  std::vector<float> x(8);
  ASSERT_TRUE(writeNpy(dir + "/x.npy", DType::Float32, {2, 4}, x.data()).isOk());
  DataSource data;
  Status s = data.openDir(m, dir);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), dir + "/x.npy: has dtype float32 and shape (2, 4); input 'x' "
                               "needs dtype float32 and shape (N, 3) with N >= 1");
}

TEST(Data, SyntheticIsDeterministicAndLabelsInRange) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kManifest, &m).isOk());
  DataSource a, b, c;
  a.openSynthetic(m, 1);
  b.openSynthetic(m, 1);
  c.openSynthetic(m, 2);
  std::vector<float> xa(300), xb(300), xc(300);
  a.read(m.inputs[0], 5, 100, xa.data());
  b.read(m.inputs[0], 5, 100, xb.data());
  c.read(m.inputs[0], 5, 100, xc.data());
  EXPECT_EQ(xa, xb);
  EXPECT_NE(xa, xc);
  double mean = 0, var = 0;
  for (float v : xa) mean += v / 300;
  for (float v : xa) var += (v - mean) * (v - mean) / 300;
  EXPECT_NEAR(mean, 0.0, 0.2);
  EXPECT_NEAR(var, 1.0, 0.3);
  std::vector<int64_t> y(200);
  a.read(m.inputs[1], 0, 200, y.data());
  for (int64_t v : y)
    EXPECT_TRUE(v >= 0 && v < 5);
}

TEST(Args, ParsesAndRejects) {
  RunOptions o;
  ASSERT_TRUE(parseArgs({"--model", "m.onnx", "--steps=3", "--lr", "0.5", "--data",
                         "d", "--print-memory", "--log-every", "2"}, &o).isOk());
  EXPECT_EQ(o.model, "m.onnx");
  EXPECT_EQ(o.steps, 3);
  EXPECT_TRUE(o.hasLr && o.lr == 0.5 && o.printMemory && !o.synthetic);
  EXPECT_EQ(o.logEvery, 2);
  ASSERT_TRUE(parseArgs({}, &o).isOk());
  EXPECT_TRUE(o.synthetic);
  EXPECT_EQ(o.steps, 10);
  EXPECT_EQ(parseArgs({"--steps", "x"}, &o).message(),
            "argument --steps: expected an integer >= 0, got 'x'");
  EXPECT_EQ(parseArgs({"--frobnicate"}, &o).message(), "unknown argument '--frobnicate'");
  EXPECT_EQ(parseArgs({"--model"}, &o).message(), "argument '--model' needs a value");
  EXPECT_FALSE(parseArgs({"--data", "d", "--synthetic"}, &o).isOk());
}

TEST(Args, TraceAndCommMode) {
  RunOptions o;
  ASSERT_TRUE(parseArgs({}, &o).isOk());
  EXPECT_TRUE(o.trace.empty());
  EXPECT_EQ(o.comm, CommMode::Thread);
  ASSERT_TRUE(parseArgs({"--trace", "t.json", "--comm=sync"}, &o).isOk());
  EXPECT_EQ(o.trace, "t.json");
  EXPECT_EQ(o.comm, CommMode::Sync);
  ASSERT_TRUE(parseArgs({"--comm", "thread"}, &o).isOk());
  EXPECT_EQ(o.comm, CommMode::Thread);
  EXPECT_EQ(parseArgs({"--comm", "async"}, &o).message(),
            "argument --comm: expected thread or sync, got 'async'");
  EXPECT_EQ(parseArgs({"--trace="}, &o).message(),
            "argument --trace: expected a file name");
  EXPECT_EQ(parseArgs({"--trace"}, &o).message(), "argument '--trace' needs a value");
}

} // namespace
