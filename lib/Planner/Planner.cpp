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
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pd;

llvm::Expected<DeviceSpec> mlir::pd::loadDeviceSpec(const CompilerOptions &o) {
  llvm::Expected<DeviceSpec> spec = loadDeviceSpec(o.deviceSpec);
  if (spec && o.devicesPerNode > 0)
    spec->devicesPerNode = o.devicesPerNode;
  return spec;
}

/// Roofline seconds of the ops of `fn`.
static double functionSeconds(func::FuncOp fn, const DeviceSpec &spec) {
  double seconds = 0;
  fn.walk([&](Operation *op) { seconds += opSeconds(op, spec); });
  return seconds;
}

static int64_t regionBytes(DictionaryAttr dict, StringRef key) {
  auto v = dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
  return v ? v.getInt() : 0;
}

static StageRegions readRegions(func::FuncOp fwd) {
  auto dict = fwd->getAttrOfType<DictionaryAttr>(
      PDDialect::RegionsAttrHelper::getNameStr());
  StageRegions r;
  r.weights = regionBytes(dict, "weights");
  r.weightVersions = regionBytes(dict, "weight_versions");
  r.grads = regionBytes(dict, "grads");
  r.optimizer = regionBytes(dict, "optimizer");
  r.state = regionBytes(dict, "state");
  r.stashSlot = regionBytes(dict, "stash_slot");
  r.stashSlots = regionBytes(dict, "stash_slots");
  r.workspace = regionBytes(dict, "workspace");
  r.comm = regionBytes(dict, "comm");
  r.tieGrads = regionBytes(dict, "tie_grads");
  return r;
}

static void addRecvs(func::FuncOp fn, bool forward, StageSummary &stage) {
  fn.walk([&](RecvOp recv) {
    stage.recvs.push_back(
        {(int64_t)recv.getPeer(), getTensorBytes(recv.getType()), forward});
  });
}

FailureOr<PipelineSummary> mlir::pd::summarizeModule(ModuleOp module,
                                                     int64_t stages,
                                                     const DeviceSpec &spec) {
  PipelineSummary pipeline;
  for (int64_t s = 0; s < stages; ++s) {
    func::FuncOp fwd = lookupStageFunction(module, s, Phase::Forward);
    func::FuncOp bwd = lookupStageFunction(module, s, Phase::Backward);
    if (!fwd || !bwd)
      return module.emitError("no functions for stage ") << s;
    StageSummary stage;
    stage.regions = readRegions(fwd);
    stage.forwardSeconds = functionSeconds(fwd, spec);
    stage.backwardSeconds = functionSeconds(bwd, spec);
    stage.recompute =
        PDDialect::RecomputeAttrHelper(module.getContext()).isAttrPresent(bwd);
    addRecvs(fwd, /*forward=*/true, stage);
    addRecvs(bwd, /*forward=*/false, stage);
    pipeline.stages.push_back(std::move(stage));
  }
  PDDialect::OwnersAttrHelper owners(module.getContext());
  module.walk([&](ParamOp param) {
    DenseI64ArrayAttr attr = owners.getAttr(param);
    if (attr && attr.size() > 1)
      pipeline.tiedBytes[std::vector<int64_t>(attr.asArrayRef())] +=
          getTensorBytes(param.getType());
  });
  return pipeline;
}

SimInput mlir::pd::buildSimInput(const PipelineSummary &pipeline,
                                 const CompilerOptions &o,
                                 const DeviceSpec &spec) {
  SimInput in;
  in.schedule = o.schedule == Schedule::TwoBW   ? SimSchedule::TwoBW
                : o.schedule == Schedule::Flush ? SimSchedule::Flush
                                                : SimSchedule::GPipe;
  in.microbatches = o.microbatches;
  int64_t w = o.replicas;
  // pdc --calibrate: the stages' measured speeds at this depth.
  bool calibrated = o.stageTimeScale.size() == pipeline.stages.size();
  for (auto [s, stage] : llvm::enumerate(pipeline.stages)) {
    const StageRegions &r = stage.regions;
    SimStage sim;
    double scale = calibrated ? o.stageTimeScale[s] : 1.0;
    sim.forward = scale * stage.forwardSeconds;
    sim.backward = scale * stage.backwardSeconds;
    sim.update = 2.0 * (r.weights + r.grads + r.optimizer) /
                 spec.memoryBandwidth;
    sim.allreduce = spec.allreduceSeconds(r.grads, s * w, w, 1);
    in.stages.push_back(sim);
    in.stashSlots.push_back(std::max<int64_t>(r.stashSlots, 1));
    for (const StageRecv &recv : stage.recvs)
      in.transfers.push_back(
          {(int)recv.peer, (int)s, recv.forward,
           spec.transferSeconds(recv.bytes, recv.peer * w, s * w),
           recv.bytes <= spec.eagerLimit});
  }
  // One tie per set of owners: all-reducing their shared bytes.
  for (auto &[stages, bytes] : pipeline.tiedBytes) {
    SimTie tie;
    tie.stages.assign(stages.begin(), stages.end());
    int64_t stride = (stages.back() - stages.front()) * w;
    tie.seconds = spec.allreduceSeconds(bytes, stages.front() * w,
                                        (int64_t)stages.size(),
                                        std::max<int64_t>(stride, 1));
    in.ties.push_back(tie);
  }
  return in;
}

static llvm::Error planError(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

llvm::Expected<PlanPrediction>
mlir::pd::simulatePlan(const PipelineSummary &pipeline,
                       const CompilerOptions &o, const DeviceSpec &spec,
                       int64_t steps) {
  SimInput input = buildSimInput(pipeline, o, spec);
  input.steps = steps;
  PlanPrediction p{spec, input, simulatePipeline(input), 0};
  if (!p.result.deadlock.empty())
    return planError("the schedule would deadlock: " + p.result.deadlock);
  if (!p.result.stashOverflow.empty())
    return planError("the schedule needs more stash slots: " +
                     p.result.stashOverflow);
  if (p.result.stepSeconds > 0)
    p.samplesPerSecond =
        o.microbatch * o.microbatches * o.replicas / p.result.stepSeconds;
  return p;
}

FailureOr<PlanPrediction> mlir::pd::predictPlan(ModuleOp module,
                                                const CompilerOptions &o,
                                                int64_t steps) {
  llvm::Expected<DeviceSpec> spec = loadDeviceSpec(o);
  if (!spec)
    return module.emitError(llvm::toString(spec.takeError()));
  FailureOr<PipelineSummary> pipeline = summarizeModule(module, o.stages, *spec);
  if (failed(pipeline))
    return failure();
  llvm::Expected<PlanPrediction> p = simulatePlan(*pipeline, o, *spec, steps);
  if (!p)
    return module.emitError(llvm::toString(p.takeError()));
  return *p;
}
