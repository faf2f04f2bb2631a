//===- Calibration.cpp - Stage speeds measured in a real run --------------===//

#include "pd/Planner/Calibration.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>

using namespace mlir;
using namespace mlir::pd;

namespace {

llvm::Error fileError(llvm::StringRef path, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path + "': " + what);
}

llvm::Expected<llvm::json::Value> readJson(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fileError(path, "cannot read it (" + buffer.getError().message() +
                               ")");
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fileError(path, "not JSON (" + llvm::toString(json.takeError()) +
                               ")");
  return std::move(*json);
}

/// An op of ops.json with a price.
struct PricedOp {
  int64_t stage;
  double predicted;
};

/// ops.json's priced ops by id.
llvm::Expected<llvm::DenseMap<int64_t, PricedOp>>
readPricedOps(llvm::StringRef path) {
  if (!llvm::sys::fs::exists(path))
    return fileError(path, "no such file: the run's plan, compiled with "
                           "--instrument-ops, lists its ops there");
  llvm::Expected<llvm::json::Value> json = readJson(path);
  if (!json)
    return json.takeError();
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *ops = root ? root->getArray("ops") : nullptr;
  if (!ops)
    return fileError(path, "no \"ops\" list (the ops.json of a plan "
                           "compiled with --instrument-ops)");
  llvm::DenseMap<int64_t, PricedOp> priced;
  for (const llvm::json::Value &v : *ops) {
    const llvm::json::Object *op = v.getAsObject();
    std::optional<int64_t> id = op ? op->getInteger("id") : std::nullopt;
    std::optional<int64_t> stage = op ? op->getInteger("stage") : std::nullopt;
    if (!id || !stage || *stage < 0)
      return fileError(path, "an op without an integer \"id\" and \"stage\"");
    std::optional<double> predicted = op->getNumber("predicted_seconds");
    if (predicted && *predicted > 0)
      priced[*id] = {*stage, *predicted};
  }
  return priced;
}

} // namespace

llvm::Expected<std::vector<double>>
mlir::pd::readStageTimeScale(llvm::StringRef opsPath,
                             llvm::StringRef timesPath) {
  llvm::Expected<llvm::json::Value> json = readJson(timesPath);
  if (!json)
    return json.takeError();
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *ranks = root ? root->getArray("ranks") : nullptr;
  if (!ranks || ranks->empty())
    return fileError(timesPath, "no \"ranks\" list (the file of run "
                                "--profile-ops)");
  llvm::Expected<llvm::DenseMap<int64_t, PricedOp>> priced =
      readPricedOps(opsPath);
  if (!priced)
    return priced.takeError();
  // Per stage: the sum of its replicas' ratios and their count.
  std::map<int64_t, std::pair<double, int64_t>> ratios;
  for (const llvm::json::Value &v : *ranks) {
    const llvm::json::Object *rank = v.getAsObject();
    std::optional<int64_t> stage =
        rank ? rank->getInteger("stage") : std::nullopt;
    const llvm::json::Array *ops = rank ? rank->getArray("ops") : nullptr;
    if (!stage || !ops)
      return fileError(timesPath, "a rank without \"stage\" and \"ops\"");
    double measured = 0, predicted = 0;
    for (const llvm::json::Value &t : *ops) {
      const llvm::json::Object *op = t.getAsObject();
      std::optional<int64_t> id = op ? op->getInteger("id") : std::nullopt;
      std::optional<double> seconds =
          op ? op->getNumber("seconds") : std::nullopt;
      std::optional<int64_t> calls =
          op ? op->getInteger("calls") : std::nullopt;
      if (!id || !seconds || !calls)
        return fileError(timesPath,
                         "an op without \"id\", \"seconds\" and \"calls\"");
      auto it = priced->find(*id);
      if (it == priced->end() || *calls <= 0)
        continue;
      if (it->second.stage != *stage)
        return fileError(timesPath,
                         llvm::formatv("op {0} ran on stage {1}, but '{2}' "
                                       "puts it on stage {3}: the times are "
                                       "of another plan",
                                       *id, *stage, opsPath, it->second.stage)
                             .str());
      measured += *seconds / *calls;
      predicted += it->second.predicted;
    }
    if (predicted <= 0)
      return fileError(timesPath, llvm::formatv("stage {0} ran none of the "
                                                "priced ops of '{1}'",
                                                *stage, opsPath)
                                      .str());
    auto &[sum, count] = ratios[*stage];
    sum += measured / predicted;
    ++count;
  }
  int64_t stages = ratios.rbegin()->first + 1;
  if ((int64_t)ratios.size() != stages)
    return fileError(timesPath, llvm::formatv("it times {0} of stages "
                                              "0..{1}: a stage is missing",
                                              ratios.size(), stages - 1)
                                    .str());
  std::vector<double> scale;
  double mean = 0;
  for (auto &[stage, sumCount] : ratios) {
    scale.push_back(sumCount.first / sumCount.second);
    mean += scale.back() / stages;
  }
  for (double &s : scale)
    s /= mean;
  return scale;
}
