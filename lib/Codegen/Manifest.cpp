//===- Manifest.cpp - Stage manifest and plan.json documents ----*- C++ -*-===//
//
// Writes the JSON a stage executable embeds (docs/stage-manifest.md) and the
// plan directory's plan.json, including the predicted step time from the
// stages' FLOPs and the device's compute rate.
//
//===----------------------------------------------------------------------===//

#include "pd/Codegen/Codegen.h"

#include <map>

using namespace mlir;
using namespace mlir::pd;
namespace json = llvm::json;

static json::Array toArray(const std::vector<int64_t> &values) {
  json::Array array;
  for (int64_t v : values)
    array.push_back(v);
  return array;
}

static json::Object optimizerJson(const CompilerOptions &o) {
  return json::Object{{"name", stringifyOptimizer(o.optimizer)},   {"lr", o.lr},
                      {"momentum", o.momentum}, {"beta1", o.beta1},
                      {"beta2", o.beta2},       {"eps", o.eps},
                      {"weight_decay", o.weightDecay}};
}

static json::Object regionsJson(const StageRegions &r) {
  return json::Object{{"weights", r.weights},
                      {"weight_versions", r.weightVersions},
                      {"grads", r.grads},
                      {"optimizer", r.optimizer},
                      {"state", r.state},
                      {"stash_slot", r.stashSlot},
                      {"stash_slots", r.stashSlots},
                      {"workspace", r.workspace},
                      {"comm", r.comm},
                      {"tie_grads", r.tieGrads}};
}

std::string mlir::pd::buildStageManifest(const StageInfo &info,
                                         const CompilerOptions &o) {
  json::Array params, state, inputs, channels;
  for (const StageParam &p : info.params) {
    json::Object param{{"name", p.name},
                       {"shape", toArray(p.shape)},
                       {"offset", p.offset},
                       {"grad_offset", p.gradOffset},
                       {"optimizer_offset", p.optimizerOffset},
                       {"owners", toArray(p.owners)}};
    if (!p.initFrom.empty())
      param["init_from"] = p.initFrom;
    params.push_back(std::move(param));
  }
  for (const StageState &s : info.state)
    state.push_back(json::Object{
        {"name", s.name}, {"shape", toArray(s.shape)}, {"offset", s.offset}});
  for (const StageInput &in : info.inputs)
    inputs.push_back(json::Object{{"index", in.index},
                                  {"name", in.name},
                                  {"dtype", in.dtype},
                                  {"shape", toArray(in.shape)},
                                  {"classes", in.classes}});
  for (const StageChannel &c : info.channels)
    channels.push_back(
        json::Object{{"id", c.id},
                     {"peer", c.peer},
                     {"direction", c.send ? "send" : "recv"},
                     {"phase", c.forward ? "forward" : "backward"},
                     {"bytes", c.bytes}});
  json::Object manifest{{"format", "pdc-stage-manifest"},
                        {"version", 1},
                        {"stage", info.stage},
                        {"stages", o.stages},
                        {"replicas", o.replicas},
                        {"schedule", stringifySchedule(o.schedule)},
                        {"microbatch", o.microbatch},
                        {"microbatches", o.microbatches},
                        {"optimizer", optimizerJson(o)},
                        {"model", o.modelPath},
                        {"regions", regionsJson(info.regions)},
                        {"params", std::move(params)},
                        {"state", std::move(state)},
                        {"inputs", std::move(inputs)},
                        {"channels", std::move(channels)},
                        {"loss", info.loss}};
  if (!info.gemmLibraries.empty()) {
    json::Array gemms;
    for (const GemmChoice &g : info.gemmLibraries)
      gemms.push_back(json::Object{{"m", g.m},
                                   {"n", g.n},
                                   {"k", g.k},
                                   {"trans_a", g.transA},
                                   {"trans_b", g.transB},
                                   {"library", g.openBlas ? "openblas"
                                                          : "onednn"}});
    manifest["gemm_libraries"] = std::move(gemms);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(manifest));
  return text;
}

/// The planner's prediction: the simulated steady-state step and, per
/// stage, the cost model's times and the simulated busy fraction.
static json::Object predictionJson(const PlanPrediction &p) {
  json::Array stages;
  for (auto [k, s] : llvm::enumerate(p.input.stages))
    stages.push_back(json::Object{{"stage", (int64_t)k},
                                  {"forward_seconds", s.forward},
                                  {"backward_seconds", s.backward},
                                  {"update_seconds", s.update + s.allreduce},
                                  {"busy", p.result.busyFraction[k]},
                                  {"stashed_microbatches",
                                   p.result.peakInFlight[k]}});
  return json::Object{{"device", p.spec.name},
                      {"step_seconds", p.result.stepSeconds},
                      {"samples_per_second", p.samplesPerSecond},
                      {"bubble_fraction", p.result.bubbleFraction},
                      {"stages", std::move(stages)}};
}

json::Value mlir::pd::buildPlanJson(ArrayRef<StageInfo> stages,
                                    const CompilerOptions &o,
                                    const PlanPrediction &prediction) {
  json::Array memory, recompute, stageOps;
  for (const StageInfo &s : stages) {
    const StageRegions &r = s.regions;
    memory.push_back(json::Object{
        {"stage", s.stage},
        {"total", r.total()},
        {"weights", r.weights * r.weightVersions},
        {"grads", r.grads},
        {"optimizer", r.optimizer},
        {"state", r.state},
        {"stash", r.stashSlot * r.stashSlots},
        {"workspace", r.workspace},
        {"comm", r.comm},
        {"tie_grads", r.tieGrads}});
    recompute.push_back(s.recompute ? "full" : "none");
    json::Array names;
    for (const StageParam &p : s.params)
      names.push_back(p.name);
    stageOps.push_back(json::Object{{"stage", s.stage},
                                    {"params", std::move(names)},
                                    {"forward_flops", s.forwardFlops},
                                    {"backward_flops", s.backwardFlops},
                                    {"skipped_flops", s.skippedFlops}});
  }
  int64_t batch = o.microbatch * o.microbatches * o.replicas;
  // Tied parameters (a copy on each owner stage), once each, by name.
  std::map<std::string, std::vector<int64_t>> tiedOwners;
  for (const StageInfo &s : stages)
    for (const StageParam &p : s.params)
      if (p.owners.size() > 1)
        tiedOwners[p.name] = p.owners;
  json::Array tied;
  for (auto &[name, owners] : tiedOwners)
    tied.push_back(json::Object{{"name", name}, {"owners", toArray(owners)}});
  return json::Object{
      {"format", "pdc-plan"},
      {"version", 1},
      {"model", o.modelPath},
      {"target", stringifyTarget(o.target)},
      {"stages", o.stages},
      {"replicas", o.replicas},
      {"microbatch", o.microbatch},
      {"microbatches", o.microbatches},
      {"global_batch", batch},
      {"schedule", stringifySchedule(o.schedule)},
      {"optimizer", optimizerJson(o)},
      {"recompute", std::move(recompute)},
      {"stage_ops", std::move(stageOps)},
      {"tied", std::move(tied)},
      {"predicted", predictionJson(prediction)},
      {"memory_bytes", std::move(memory)}};
}
