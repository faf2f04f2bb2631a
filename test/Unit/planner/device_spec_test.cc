//===- device_spec_test.cc - Built-in and JSON device specs ---------------===//

#include "pd/Planner/DeviceSpec.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir::pd;

namespace {

/// Writes `text` to a temporary .json file; returns its path.
std::string writeTemp(const std::string &text) {
  llvm::SmallString<128> path;
  int fd;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("spec", "json", fd, path));
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << text;
  return path.str().str();
}

std::string errorOf(llvm::StringRef name) {
  llvm::Expected<DeviceSpec> spec = loadDeviceSpec(name);
  EXPECT_FALSE(bool(spec));
  return spec ? "" : llvm::toString(spec.takeError());
}

} // namespace

TEST(DeviceSpec, BuiltIns) {
  for (const char *name : {"cpu", "v100", "a100", "h100"}) {
    llvm::Expected<DeviceSpec> spec = loadDeviceSpec(name);
    ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
    EXPECT_EQ(spec->name, name);
    EXPECT_GT(spec->flops, 0);
    EXPECT_GT(spec->memoryBytes, 0);
  }
  EXPECT_EQ(loadDeviceSpec("v100")->memoryBytes, int64_t(16) << 30);
  EXPECT_EQ(loadDeviceSpec("v100")->devicesPerNode, 8);
}

TEST(DeviceSpec, JsonFile) {
  std::string path = writeTemp(R"({"name": "mine", "flops": 1e12,
    "memory_bandwidth": 1e11, "memory_bytes": 1073741824,
    "devices_per_node": 4, "intra_node_bandwidth": 1e10,
    "intra_node_latency": 1e-6, "inter_node_bandwidth": 1e9,
    "inter_node_latency": 1e-5, "op_overhead": 0})");
  llvm::Expected<DeviceSpec> spec = loadDeviceSpec(path);
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  EXPECT_EQ(spec->name, "mine");
  EXPECT_EQ(spec->devicesPerNode, 4);
  // Ranks 3 and 4 are on different nodes; 0 and 3 on one.
  EXPECT_DOUBLE_EQ(spec->transferSeconds(1000000000, 3, 4), 1e-5 + 1.0);
  EXPECT_DOUBLE_EQ(spec->transferSeconds(1000000000, 0, 3), 1e-6 + 0.1);
  // Ring all-reduce of 4 ranks in one node: 6 steps of a quarter each.
  EXPECT_DOUBLE_EQ(spec->allreduceSeconds(4000000000, 0, 4, 1),
                   6 * (1e-6 + 0.1));
  EXPECT_DOUBLE_EQ(spec->allreduceSeconds(1000, 0, 1, 1), 0);
  llvm::sys::fs::remove(path);
}

TEST(DeviceSpec, Errors) {
  EXPECT_NE(errorOf("/nonexistent/spec.json")
                .find("not a built-in spec (cpu, v100, a100, h100)"),
            std::string::npos);
  std::string path = writeTemp(R"({"flops": 1e12})");
  EXPECT_NE(errorOf(path).find("'memory_bandwidth' must be a number >= 0"),
            std::string::npos);
  llvm::sys::fs::remove(path);
  path = writeTemp("{");
  EXPECT_NE(errorOf(path).find("--device-spec '"), std::string::npos);
  llvm::sys::fs::remove(path);
}
