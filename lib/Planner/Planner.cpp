//===- Planner.cpp - Cost model and the simulation of a plan --------------===//
//
// Per op: max(FLOPs / device FLOP/s, bytes / memory bandwidth) plus the
// device's per-call overhead (a roofline). Per stage and batch: the
// optimizer streams weights, gradients and optimizer state once
// (read + write); replicas all-reduce the gradients in a ring over
// consecutive ranks; owners of a tied parameter sum its gradient. Ranks are
// laid out as the launcher does: rank = stage * replicas + replica.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/Planner.h"
#include "dialects/PD/IR/PDOps.h"

#include <map>

using namespace mlir;
using namespace mlir::pd;

/// Roofline seconds of the ops of `fn`.
static double functionSeconds(func::FuncOp fn, const DeviceSpec &spec) {
  double seconds = 0;
  fn.walk([&](Operation *op) { seconds += opSeconds(op, spec); });
  return seconds;
}

static int64_t regionBytes(func::FuncOp fwd, StringRef key) {
  auto dict = fwd->getAttrOfType<DictionaryAttr>(
      PDDialect::RegionsAttrHelper::getNameStr());
  auto v = dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
  return v ? v.getInt() : 0;
}

/// Each pd.recv of `fn` on stage `stage` as a transfer.
static void addTransfers(func::FuncOp fn, int64_t stage, bool forward,
                         const CompilerOptions &o, const DeviceSpec &spec,
                         SimInput &in) {
  fn.walk([&](RecvOp recv) {
    int64_t peer = recv.getPeer();
    int64_t bytes = getTensorBytes(recv.getType());
    double seconds =
        spec.transferSeconds(bytes, peer * o.replicas, stage * o.replicas);
    in.transfers.push_back(
        {(int)peer, (int)stage, forward, seconds, bytes <= spec.eagerLimit});
  });
}

/// Owners of tied parameters sum each one's gradient; one tie per set of
/// owners, its time that of all-reducing their bytes.
static void addTies(ModuleOp module, const CompilerOptions &o,
                    const DeviceSpec &spec, SimInput &in) {
  std::map<std::vector<int64_t>, int64_t> bytesByOwners;
  PDDialect::OwnersAttrHelper owners(module.getContext());
  module.walk([&](ParamOp param) {
    DenseI64ArrayAttr attr = owners.getAttr(param);
    if (attr && attr.size() > 1)
      bytesByOwners[std::vector<int64_t>(attr.asArrayRef())] +=
          getTensorBytes(param.getType());
  });
  for (auto &[stages, bytes] : bytesByOwners) {
    SimTie tie;
    tie.stages.assign(stages.begin(), stages.end());
    int64_t stride = (stages.back() - stages.front()) * o.replicas;
    tie.seconds = spec.allreduceSeconds(bytes, stages.front() * o.replicas,
                                        (int64_t)stages.size(),
                                        std::max<int64_t>(stride, 1));
    in.ties.push_back(tie);
  }
}

FailureOr<SimInput> mlir::pd::buildSimInput(ModuleOp module,
                                            const CompilerOptions &o,
                                            const DeviceSpec &spec) {
  SimInput in;
  in.schedule = o.schedule == Schedule::TwoBW   ? SimSchedule::TwoBW
                : o.schedule == Schedule::Flush ? SimSchedule::Flush
                                                : SimSchedule::GPipe;
  in.microbatches = o.microbatches;
  for (int64_t s = 0; s < o.stages; ++s) {
    func::FuncOp fwd = lookupStageFunction(module, s, Phase::Forward);
    func::FuncOp bwd = lookupStageFunction(module, s, Phase::Backward);
    if (!fwd || !bwd)
      return module.emitError("no functions for stage ") << s;
    SimStage stage;
    stage.forward = functionSeconds(fwd, spec);
    stage.backward = functionSeconds(bwd, spec);
    int64_t streamed = regionBytes(fwd, "weights") + regionBytes(fwd, "grads") +
                       regionBytes(fwd, "optimizer");
    stage.update = 2.0 * streamed / spec.memoryBandwidth;
    stage.allreduce = spec.allreduceSeconds(regionBytes(fwd, "grads"),
                                            s * o.replicas, o.replicas, 1);
    in.stages.push_back(stage);
    in.stashSlots.push_back(std::max<int64_t>(regionBytes(fwd, "stash_slots"), 1));
    addTransfers(fwd, s, /*forward=*/true, o, spec, in);
    addTransfers(bwd, s, /*forward=*/false, o, spec, in);
  }
  addTies(module, o, spec, in);
  return in;
}

FailureOr<PlanPrediction> mlir::pd::predictPlan(ModuleOp module,
                                                const CompilerOptions &o,
                                                int64_t steps) {
  llvm::Expected<DeviceSpec> spec = loadDeviceSpec(o.deviceSpec);
  if (!spec)
    return module.emitError(llvm::toString(spec.takeError()));
  FailureOr<SimInput> input = buildSimInput(module, o, *spec);
  if (failed(input))
    return failure();
  input->steps = steps;
  PlanPrediction p{*spec, *input, simulatePipeline(*input), 0};
  if (!p.result.deadlock.empty())
    return module.emitError("the schedule would deadlock: ")
           << p.result.deadlock;
  if (!p.result.stashOverflow.empty())
    return module.emitError("the schedule needs more stash slots: ")
           << p.result.stashOverflow;
  if (p.result.stepSeconds > 0)
    p.samplesPerSecond =
        o.microbatch * o.microbatches * o.replicas / p.result.stepSeconds;
  return p;
}
