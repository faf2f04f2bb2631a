//===- manifest.h - The stage manifest, parsed --------------------*- C++ -*-===//
//
// The JSON document each generated stage embeds (docs/stage-manifest.md),
// parsed and validated into plain structs, plus the arena layout derived
// from its region sizes.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_MANIFEST_H
#define PDRT_EXEC_MANIFEST_H

#include "status.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace pdrt {

enum class ScheduleKind { TwoBW, Flush, GPipe };
enum class OptimizerKind { SGD, Momentum, Adam, AdamW };
enum class DType { Float32, Int64 };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::SGD;
  double lr = 0.01, momentum = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0.0;
};

struct ParamInfo {
  std::string name;
  /// The initializer holding the initial value when it is not `name`: an
  /// eval-mode export's deduplicated copy, `name = Identity(initFrom)`.
  std::string initFrom;
  std::vector<int64_t> shape;
  int64_t numel = 0, offset = 0, gradOffset = 0, optimizerOffset = 0;
  /// Stages holding a copy; more than one for a tied parameter, whose
  /// gradients are summed across the copies before every update.
  std::vector<int64_t> owners;
};

/// A state tensor of this stage (BatchNormalization running statistics): its
/// initial value is initializer `name`, the forward updates it in place at
/// `offset` in the state region, and --save-onnx writes it back.
struct StateInfo {
  std::string name;
  std::vector<int64_t> shape;
  int64_t numel = 0, offset = 0;
};

struct InputInfo {
  int64_t index = 0;
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape; ///< One microbatch; shape[0] is the sample axis.
  int64_t classes = 0;
  int64_t rowElems = 1; ///< Elements of one sample (product of shape[1:]).
  int64_t elemBytes() const { return dtype == DType::Int64 ? 8 : 4; }
  int64_t rowBytes() const { return rowElems * elemBytes(); }
};

struct ChannelInfo {
  int64_t id = 0, peer = 0, bytes = 0;
  bool isSend = false, isForward = false;
};

/// The library that runs a pdrt_matmul (runtime/cpu/gemm_library.h).
enum class GemmLibrary { OneDNN, OpenBLAS };

/// A pdrt_matmul's shape: C is m x n, the inner dimension k, A and B
/// transposed or not.
struct GemmShape2D {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  bool operator<(const GemmShape2D &o) const {
    return std::tie(m, n, k, transA, transB) <
           std::tie(o.m, o.n, o.k, o.transA, o.transB);
  }
};

/// Region sizes in bytes and the arena offsets they imply: [weights x
/// versions][grads][optimizer][state][stash_slot x slots][workspace][comm].
struct Regions {
  int64_t weights = 0, weightVersions = 1, grads = 0, optimizer = 0, state = 0;
  int64_t stashSlot = 0, stashSlots = 1, workspace = 0, comm = 0;
  /// Under 2bw, a copy of the tied parameters' gradients while their sum
  /// over the owner stages is in flight.
  int64_t tieGrads = 0;
  int64_t gradsOffset() const { return weights * weightVersions; }
  int64_t optimizerOffset() const { return gradsOffset() + grads; }
  int64_t stateOffset() const { return optimizerOffset() + optimizer; }
  int64_t stashOffset() const { return stateOffset() + state; }
  int64_t workspaceOffset() const { return stashOffset() + stashSlot * stashSlots; }
  int64_t commOffset() const { return workspaceOffset() + workspace; }
  int64_t tieGradsOffset() const { return commOffset() + comm; }
  int64_t total() const { return tieGradsOffset() + tieGrads; }
};

struct Manifest {
  int stage = 0, stages = 1, replicas = 1;
  ScheduleKind schedule = ScheduleKind::TwoBW;
  int64_t microbatch = 1, microbatches = 1;
  OptimizerConfig optimizer;
  std::string model;
  Regions regions;
  std::vector<ParamInfo> params;
  std::vector<StateInfo> state;
  std::vector<InputInfo> inputs;
  std::vector<ChannelInfo> channels;
  bool loss = false;
  /// The GEMM library pdc --profile measured fastest for each pdrt_matmul
  /// shape of the plan on the compiling machine ("gemm_libraries").
  std::map<GemmShape2D, GemmLibrary> gemmLibraries;

  const ChannelInfo *findChannel(int64_t id) const;
  const InputInfo *findInput(int64_t index) const;
};

/// Parses and validates a manifest document; errors name the offending key.
Status parseManifest(const std::string &text, Manifest *out);

/// Best-effort stage number of a (possibly invalid) manifest, -1 if none.
int manifestStageHint(const std::string &text);

const char *scheduleName(ScheduleKind kind);

} // namespace pdrt

#endif // PDRT_EXEC_MANIFEST_H
