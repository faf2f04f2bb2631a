//===- DeviceSpec.cpp - Built-in device specs and JSON specs --------------===//
//
// cpu: one core of this machine class with OpenBLAS (sgemm 1024^3 on one
// thread: 80-89 GFLOP/s; single-thread triad: 42 GB/s; Open MPI shared
// memory between ranks). v100/a100/h100: the paper's p3.16xlarge server
// (8 V100-16GB, NVLink, 25 Gbit/s between servers; about 45 TFLOP/s
// achieved on a GPT in mixed precision) and its A100/H100 successors.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/DeviceSpec.h"
#include "dialects/PD/IR/PDOps.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unistd.h>

using namespace mlir;
using namespace mlir::pd;

/// One core's share of this machine's memory.
static int64_t cpuCoreMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  long cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  return pages > 0 && size > 0 ? (int64_t)pages * size / cores : 0;
}

static std::optional<DeviceSpec> builtinSpec(llvm::StringRef name) {
  constexpr double G = 1e9, T = 1e12;
  constexpr int64_t GiB = int64_t(1) << 30;
  if (name == "cpu")
    // Open MPI's shared-memory transport sends messages under 4 KiB
    // (header included) eagerly; 4096-byte payloads already wait for the
    // receiver (a plan that relied on it hung in test).
    return DeviceSpec{"cpu", 80 * G, 40 * G, cpuCoreMemory(), 64,
                      5 * G, 1e-6, 1.25 * G, 30e-6, 2e-6, 2048};
  if (name == "v100")
    return DeviceSpec{"v100", 45 * T, 900 * G, 16 * GiB, 8,
                      150 * G, 5e-6, 3.125 * G, 20e-6, 8e-6};
  if (name == "a100")
    return DeviceSpec{"a100", 120 * T, 2039 * G, 80 * GiB, 8,
                      300 * G, 5e-6, 25 * G, 10e-6, 6e-6};
  if (name == "h100")
    return DeviceSpec{"h100", 300 * T, 3350 * G, 80 * GiB, 8,
                      450 * G, 4e-6, 50 * G, 8e-6, 5e-6};
  return std::nullopt;
}

static llvm::Error specError(llvm::StringRef path, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--device-spec '" + path + "': " + what);
}

/// A JSON spec: every key of DeviceSpec (docs/planner.md); numbers > 0.
static llvm::Expected<DeviceSpec> parseSpecFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return specError(path, "not a built-in spec (cpu, v100, a100, h100) "
                           "and not a readable file: " +
                               buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return specError(path, llvm::toString(json.takeError()));
  const llvm::json::Object *obj = json->getAsObject();
  if (!obj)
    return specError(path, "expected a JSON object");
  DeviceSpec spec;
  spec.name = obj->getString("name").value_or(path).str();
  struct Field {
    const char *key;
    double *value;
  } fields[] = {{"flops", &spec.flops},
                {"memory_bandwidth", &spec.memoryBandwidth},
                {"intra_node_bandwidth", &spec.intraNodeBandwidth},
                {"intra_node_latency", &spec.intraNodeLatency},
                {"inter_node_bandwidth", &spec.interNodeBandwidth},
                {"inter_node_latency", &spec.interNodeLatency},
                {"op_overhead", &spec.opOverhead}};
  for (Field f : fields) {
    std::optional<double> v = obj->getNumber(f.key);
    if (!v || *v < 0 || !std::isfinite(*v))
      return specError(path, llvm::Twine("'") + f.key +
                                 "' must be a number >= 0");
    *f.value = *v;
  }
  std::optional<int64_t> memory = obj->getInteger("memory_bytes");
  std::optional<int64_t> perNode = obj->getInteger("devices_per_node");
  if (!memory || *memory <= 0)
    return specError(path, "'memory_bytes' must be an integer > 0");
  if (!perNode || *perNode <= 0)
    return specError(path, "'devices_per_node' must be an integer > 0");
  spec.memoryBytes = *memory;
  spec.eagerLimit = obj->getInteger("eager_limit").value_or(0);
  if (spec.eagerLimit < 0)
    return specError(path, "'eager_limit' must be an integer >= 0");
  spec.devicesPerNode = *perNode;
  if (spec.flops <= 0 || spec.memoryBandwidth <= 0 ||
      spec.intraNodeBandwidth <= 0 || spec.interNodeBandwidth <= 0)
    return specError(path, "'flops' and the bandwidths must be > 0");
  return spec;
}

double mlir::pd::rooflineSeconds(double flops, double bytes,
                                 const DeviceSpec &spec) {
  return std::max(flops / spec.flops, bytes / spec.memoryBandwidth) +
         spec.opOverhead;
}

double mlir::pd::opSeconds(Operation *op, const DeviceSpec &spec) {
  auto cost = dyn_cast<CostOpInterface>(op);
  // A concat whose inputs were written in place (pd-concat-in-place) and
  // a slice that is a view (pd-allocate-buffers) run no kernel.
  MLIRContext *ctx = op->getContext();
  if (!cost || PDDialect::InPlacePartsAttrHelper(ctx).isAttrPresent(op) ||
      PDDialect::ViewAttrHelper(ctx).isAttrPresent(op))
    return 0;
  if (FloatAttr s = PDDialect::SecondsAttrHelper(op->getContext()).getAttr(op))
    return s.getValueAsDouble();
  return rooflineSeconds(cost.getFlops(), cost.getBytes(), spec);
}

llvm::Expected<DeviceSpec> mlir::pd::loadDeviceSpec(llvm::StringRef name) {
  if (std::optional<DeviceSpec> spec = builtinSpec(name))
    return *spec;
  return parseSpecFile(name);
}

double DeviceSpec::transferSeconds(int64_t bytes, int64_t rankA,
                                   int64_t rankB) const {
  bool sameNode = rankA / devicesPerNode == rankB / devicesPerNode;
  return sameNode ? intraNodeLatency + bytes / intraNodeBandwidth
                  : interNodeLatency + bytes / interNodeBandwidth;
}

double DeviceSpec::allreduceSeconds(int64_t bytes, int64_t first,
                                    int64_t ranks, int64_t stride) const {
  if (ranks <= 1)
    return 0;
  int64_t last = first + (ranks - 1) * stride;
  bool sameNode = first / devicesPerNode == last / devicesPerNode;
  double bw = sameNode ? intraNodeBandwidth : interNodeBandwidth;
  double latency = sameNode ? intraNodeLatency : interNodeLatency;
  // Ring: 2 (n - 1) steps, each moving bytes / n.
  return 2.0 * (ranks - 1) * (latency + double(bytes) / ranks / bw);
}
