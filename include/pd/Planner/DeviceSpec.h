//===- DeviceSpec.h - The hardware a plan is made for -----------*- C++ -*-===//
//
// A device and the links between devices as data: built in for this CPU
// target and the paper's GPUs (cpu, v100, a100, h100), or read from a JSON
// file with the same keys (--device-spec FILE.json, docs/planner.md).
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_DEVICESPEC_H
#define PD_PLANNER_DEVICESPEC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::pd {

struct DeviceSpec {
  std::string name;
  double flops = 0;           ///< Sustained fp32 FLOP/s of one device.
  double memoryBandwidth = 0; ///< Bytes/s between a device and its memory.
  int64_t memoryBytes = 0;    ///< Capacity of one device.
  int64_t devicesPerNode = 1;
  double intraNodeBandwidth = 0, intraNodeLatency = 0; ///< Bytes/s, s.
  double interNodeBandwidth = 0, interNodeLatency = 0; ///< Bytes/s, s.
  double opOverhead = 0; ///< Seconds per kernel call (dispatch, launch).
  /// Largest message a send completes without the receiver (the MPI
  /// transport's eager limit); larger ones wait for the matching receive.
  int64_t eagerLimit = 0;

  /// Seconds to move `bytes` between devices (ranks) a and b.
  double transferSeconds(int64_t bytes, int64_t rankA, int64_t rankB) const;
  /// Seconds of a ring all-reduce of `bytes` over `ranks` consecutive ranks
  /// starting at `first`, `stride` apart.
  double allreduceSeconds(int64_t bytes, int64_t first, int64_t ranks,
                          int64_t stride) const;
};

/// Seconds of one op on `spec`: its measured time (pd.seconds, pdc
/// --profile) if it has one, else its roofline, max(FLOPs / flops, bytes /
/// memory bandwidth) plus the per-call overhead; 0 for an op without a
/// cost (PD_CostOpInterface).
double opSeconds(mlir::Operation *op, const DeviceSpec &spec);

/// The roofline of an op of `flops` FLOPs moving `bytes` bytes on `spec`.
double rooflineSeconds(double flops, double bytes, const DeviceSpec &spec);

/// The built-in spec `name`, or the JSON file at `name`.
llvm::Expected<DeviceSpec> loadDeviceSpec(llvm::StringRef name);

} // namespace mlir::pd

#endif // PD_PLANNER_DEVICESPEC_H
