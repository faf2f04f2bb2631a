//===- calibration_test.cc - Stage speeds from a run (pdc --calibrate) ----===//

#include "pd/Planner/Calibration.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir::pd;

namespace {

/// A file holding `text`, removed with the fixture.
class CalibrationTest : public ::testing::Test {
protected:
  std::string write(llvm::StringRef name, llvm::StringRef text) {
    llvm::SmallString<128> path;
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile(name, "json", path));
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << text;
    paths.push_back(path.str().str());
    return paths.back();
  }
  void TearDown() override {
    for (const std::string &p : paths)
      llvm::sys::fs::remove(p);
  }
  std::vector<std::string> paths;
};

// Two ops per stage, priced 1 ms and 3 ms (an unpriced receive besides):
// stage 0 ran them in 4 ms per call in all, as priced (ratio 1), stage 1
// in 12 ms (ratio 3, averaged over two replicas that took 10 and 14);
// normalised to mean 1: 0.5 and 1.5. The receive and an op never called
// do not count.
constexpr const char *kOps = R"({"format": 1, "ops": [
  {"id": 0, "stage": 0, "predicted_seconds": 0.001},
  {"id": 1, "stage": 0, "predicted_seconds": 0.003},
  {"id": 2, "stage": 0, "predicted_seconds": null},
  {"id": 3, "stage": 1, "predicted_seconds": 0.001},
  {"id": 4, "stage": 1, "predicted_seconds": 0.003},
  {"id": 5, "stage": 1, "predicted_seconds": 0.002}]})";

TEST_F(CalibrationTest, NormalisedRatioPerStage) {
  std::string ops = write("ops", kOps);
  std::string times = write("times", R"({"ranks": [
    {"rank": 0, "stage": 0, "replica": 0, "ops": [
      {"id": 0, "seconds": 0.004, "calls": 4},
      {"id": 1, "seconds": 0.012, "calls": 4},
      {"id": 2, "seconds": 9.0, "calls": 4}]},
    {"rank": 1, "stage": 1, "replica": 0, "ops": [
      {"id": 3, "seconds": 0.010, "calls": 4},
      {"id": 4, "seconds": 0.030, "calls": 4},
      {"id": 5, "seconds": 0.0, "calls": 0}]},
    {"rank": 2, "stage": 1, "replica": 1, "ops": [
      {"id": 3, "seconds": 0.014, "calls": 4},
      {"id": 4, "seconds": 0.042, "calls": 4}]}]})");
  llvm::Expected<std::vector<double>> scale = readStageTimeScale(ops, times);
  ASSERT_TRUE((bool)scale) << llvm::toString(scale.takeError());
  ASSERT_EQ(scale->size(), 2u);
  EXPECT_NEAR((*scale)[0], 0.5, 1e-12);
  EXPECT_NEAR((*scale)[1], 1.5, 1e-12);
}

// Each bad input is one error naming the file and what is wrong.
TEST_F(CalibrationTest, BadInputs) {
  std::string ops = write("ops", kOps);
  struct Case {
    const char *times, *error;
  } cases[] = {
      {"{\"ranks\": [", "not JSON"},
      {"{}", "no \"ranks\" list"},
      {R"({"ranks": [{"stage": 0}]})", "a rank without \"stage\" and \"ops\""},
      {R"({"ranks": [{"stage": 1, "ops": [
         {"id": 0, "seconds": 0.004, "calls": 4}]}]})",
       "op 0 ran on stage 1"},
      {R"({"ranks": [{"stage": 0, "ops": [
         {"id": 2, "seconds": 0.004, "calls": 4}]}]})",
       "stage 0 ran none of the priced ops"},
      {R"({"ranks": [{"stage": 1, "ops": [
         {"id": 3, "seconds": 0.004, "calls": 4}]}]})",
       "a stage is missing"},
  };
  for (const Case &c : cases) {
    std::string times = write("times", c.times);
    llvm::Expected<std::vector<double>> scale = readStageTimeScale(ops, times);
    ASSERT_FALSE((bool)scale) << c.times;
    std::string message = llvm::toString(scale.takeError());
    EXPECT_NE(message.find("'" + times + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(c.error), std::string::npos) << message;
  }
  // Times whose plan's ops.json is not where it is looked for.
  std::string times = write("times", R"({"ranks": [{"stage": 0, "ops": []}]})");
  llvm::Expected<std::vector<double>> missing =
      readStageTimeScale(ops + ".gone", times);
  ASSERT_FALSE((bool)missing);
  EXPECT_NE(llvm::toString(missing.takeError()).find("no such file"),
            std::string::npos);
}

} // namespace
