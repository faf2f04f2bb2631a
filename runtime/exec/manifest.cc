//===- manifest.cc - Parse and validate the stage manifest -------------------===//
//
// Reads the JSON manifest of docs/stage-manifest.md with nlohmann/json into
// pdrt::Manifest and checks its invariants (regions multiple of 64, params
// inside their regions, m >= d under 2bw), so that the executor can trust it.
//
//===----------------------------------------------------------------------===//

#include "manifest.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include <cstdarg>
#include <cstdio>

namespace pdrt {

using json = nlohmann::json;

std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char small[512];
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(small, sizeof(small), fmt, copy);
  va_end(copy);
  std::string out;
  if (n < (int)sizeof(small)) {
    out.assign(small, n < 0 ? 0 : n);
  } else {
    out.resize(n + 1);
    vsnprintf(&out[0], n + 1, fmt, args);
    out.resize(n);
  }
  va_end(args);
  return out;
}

const char *scheduleName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::TwoBW: return "2bw";
  case ScheduleKind::Flush: return "flush";
  case ScheduleKind::GPipe: return "gpipe";
  }
  return "?";
}

const ChannelInfo *Manifest::findChannel(int64_t id) const {
  for (const ChannelInfo &c : channels)
    if (c.id == id)
      return &c;
  return nullptr;
}

const InputInfo *Manifest::findInput(int64_t index) const {
  for (const InputInfo &in : inputs)
    if (in.index == index)
      return &in;
  return nullptr;
}

namespace {

/// Reads obj[key] as T, or reports "manifest: <where>.<key> ...".
template <typename T>
Status get(const json &obj, const char *key, const std::string &where, T *out) {
  auto it = obj.find(key);
  if (it == obj.end())
    return Status::error(format("manifest: missing key '%s%s'", where.c_str(), key));
  try {
    *out = it->get<T>();
  } catch (const json::exception &) {
    return Status::error(format("manifest: key '%s%s' has the wrong type",
                                where.c_str(), key));
  }
  return Status::ok();
}

/// Like get() but keeps *out when the key is absent.
template <typename T>
Status getOpt(const json &obj, const char *key, const std::string &where, T *out) {
  if (!obj.contains(key))
    return Status::ok();
  return get(obj, key, where, out);
}

Status parseOptimizer(const json &j, OptimizerConfig *opt) {
  if (!j.is_object())
    return Status::error("manifest: 'optimizer' must be an object");
  std::string name;
  PDRT_RETURN_IF_ERROR(get(j, "name", "optimizer.", &name));
  if (name == "sgd") opt->kind = OptimizerKind::SGD;
  else if (name == "momentum") opt->kind = OptimizerKind::Momentum;
  else if (name == "adam") opt->kind = OptimizerKind::Adam;
  else if (name == "adamw") opt->kind = OptimizerKind::AdamW;
  else
    return Status::error(format("manifest: unknown optimizer '%s' (expected "
                                "sgd, momentum, adam or adamw)", name.c_str()));
  PDRT_RETURN_IF_ERROR(get(j, "lr", "optimizer.", &opt->lr));
  PDRT_RETURN_IF_ERROR(getOpt(j, "momentum", "optimizer.", &opt->momentum));
  PDRT_RETURN_IF_ERROR(getOpt(j, "beta1", "optimizer.", &opt->beta1));
  PDRT_RETURN_IF_ERROR(getOpt(j, "beta2", "optimizer.", &opt->beta2));
  PDRT_RETURN_IF_ERROR(getOpt(j, "eps", "optimizer.", &opt->eps));
  PDRT_RETURN_IF_ERROR(getOpt(j, "weight_decay", "optimizer.", &opt->weightDecay));
  return Status::ok();
}

Status parseRegions(const json &j, Regions *r) {
  if (!j.is_object())
    return Status::error("manifest: 'regions' must be an object");
  const std::string w = "regions.";
  PDRT_RETURN_IF_ERROR(get(j, "weights", w, &r->weights));
  PDRT_RETURN_IF_ERROR(get(j, "weight_versions", w, &r->weightVersions));
  PDRT_RETURN_IF_ERROR(get(j, "grads", w, &r->grads));
  PDRT_RETURN_IF_ERROR(get(j, "optimizer", w, &r->optimizer));
  PDRT_RETURN_IF_ERROR(getOpt(j, "state", w, &r->state));
  PDRT_RETURN_IF_ERROR(get(j, "stash_slot", w, &r->stashSlot));
  PDRT_RETURN_IF_ERROR(get(j, "stash_slots", w, &r->stashSlots));
  PDRT_RETURN_IF_ERROR(get(j, "workspace", w, &r->workspace));
  PDRT_RETURN_IF_ERROR(get(j, "comm", w, &r->comm));
  PDRT_RETURN_IF_ERROR(getOpt(j, "tie_grads", w, &r->tieGrads));
  const std::pair<const char *, int64_t> sizes[] = {
      {"weights", r->weights}, {"grads", r->grads}, {"optimizer", r->optimizer},
      {"state", r->state}, {"stash_slot", r->stashSlot}, {"workspace", r->workspace},
      {"comm", r->comm}, {"tie_grads", r->tieGrads}};
  for (const auto &s : sizes)
    if (s.second < 0 || s.second % 64 != 0)
      return Status::error(format("manifest: regions.%s = %lld is not a "
                                  "non-negative multiple of 64",
                                  s.first, (long long)s.second));
  if (r->weightVersions < 1 || r->weightVersions > 2 || r->stashSlots < 1)
    return Status::error("manifest: regions.weight_versions must be 1 or 2 "
                         "and regions.stash_slots at least 1");
  return Status::ok();
}

/// Checks that [offset, offset + bytes) lies inside a region of `size`.
Status checkInside(const std::string &what, int64_t offset, int64_t bytes,
                   const char *region, int64_t size) {
  if (offset < 0 || offset % 4 != 0 || offset + bytes > size)
    return Status::error(format("manifest: %s (bytes [%lld, %lld)) does not "
                                "fit in the %s region of %lld bytes",
                                what.c_str(), (long long)offset,
                                (long long)(offset + bytes), region,
                                (long long)size));
  return Status::ok();
}

/// Owners must be ascending stages of the plan and include this stage (the
/// tie communicator is built from them on every owner).
Status checkOwners(const ParamInfo &p, const Manifest &m) {
  if (p.owners.empty())
    return Status::ok();
  bool ascending = std::is_sorted(p.owners.begin(), p.owners.end()) &&
                   std::adjacent_find(p.owners.begin(), p.owners.end()) ==
                       p.owners.end();
  bool inRange = p.owners.front() >= 0 && p.owners.back() < m.stages;
  bool mine = std::count(p.owners.begin(), p.owners.end(), (int64_t)m.stage) == 1;
  if (!ascending || !inRange || !mine)
    return Status::error(format("manifest: param '%s' owners must be distinct "
                                "ascending stages in [0, %lld) including stage %lld",
                                p.name.c_str(), (long long)m.stages,
                                (long long)m.stage));
  return Status::ok();
}

Status parseParam(const json &j, size_t i, const Manifest &m, ParamInfo *p) {
  std::string w = format("params[%zu].", i);
  PDRT_RETURN_IF_ERROR(get(j, "name", w, &p->name));
  PDRT_RETURN_IF_ERROR(getOpt(j, "init_from", w, &p->initFrom));
  PDRT_RETURN_IF_ERROR(get(j, "shape", w, &p->shape));
  PDRT_RETURN_IF_ERROR(get(j, "offset", w, &p->offset));
  PDRT_RETURN_IF_ERROR(get(j, "grad_offset", w, &p->gradOffset));
  PDRT_RETURN_IF_ERROR(getOpt(j, "optimizer_offset", w, &p->optimizerOffset));
  PDRT_RETURN_IF_ERROR(getOpt(j, "owners", w, &p->owners));
  PDRT_RETURN_IF_ERROR(checkOwners(*p, m));
  p->numel = 1;
  for (int64_t d : p->shape) {
    if (d < 0)
      return Status::error(format("manifest: param '%s' has a negative dim",
                                  p->name.c_str()));
    p->numel *= d;
  }
  int64_t bytes = p->numel * 4;
  std::string what = format("param '%s'", p->name.c_str());
  PDRT_RETURN_IF_ERROR(checkInside(what, p->offset, bytes, "weights", m.regions.weights));
  PDRT_RETURN_IF_ERROR(checkInside(what + " gradient", p->gradOffset, bytes,
                                   "grads", m.regions.grads));
  int64_t states = m.optimizer.kind == OptimizerKind::SGD        ? 0
                   : m.optimizer.kind == OptimizerKind::Momentum ? 1
                                                                 : 2;
  if (states)
    PDRT_RETURN_IF_ERROR(checkInside(what + " optimizer state", p->optimizerOffset,
                                     states * bytes, "optimizer", m.regions.optimizer));
  return Status::ok();
}

Status parseState(const json &j, size_t i, const Manifest &m, StateInfo *s) {
  std::string w = format("state[%zu].", i);
  PDRT_RETURN_IF_ERROR(get(j, "name", w, &s->name));
  PDRT_RETURN_IF_ERROR(get(j, "shape", w, &s->shape));
  PDRT_RETURN_IF_ERROR(get(j, "offset", w, &s->offset));
  s->numel = 1;
  for (int64_t d : s->shape) {
    if (d < 0)
      return Status::error(format("manifest: state '%s' has a negative dim",
                                  s->name.c_str()));
    s->numel *= d;
  }
  return checkInside(format("state '%s'", s->name.c_str()), s->offset,
                     s->numel * 4, "state", m.regions.state);
}

Status parseInput(const json &j, size_t i, const Manifest &m, InputInfo *in) {
  std::string w = format("inputs[%zu].", i), dtype;
  PDRT_RETURN_IF_ERROR(get(j, "index", w, &in->index));
  PDRT_RETURN_IF_ERROR(get(j, "name", w, &in->name));
  PDRT_RETURN_IF_ERROR(get(j, "dtype", w, &dtype));
  PDRT_RETURN_IF_ERROR(get(j, "shape", w, &in->shape));
  PDRT_RETURN_IF_ERROR(getOpt(j, "classes", w, &in->classes));
  if (dtype == "float32") in->dtype = DType::Float32;
  else if (dtype == "int64") in->dtype = DType::Int64;
  else
    return Status::error(format("manifest: input '%s' has unsupported dtype "
                                "'%s' (expected float32 or int64)",
                                in->name.c_str(), dtype.c_str()));
  if (in->shape.empty() || in->shape[0] != m.microbatch)
    return Status::error(format("manifest: input '%s' must have the "
                                "microbatch (%lld) as its first dim",
                                in->name.c_str(), (long long)m.microbatch));
  in->rowElems = 1;
  for (size_t d = 1; d < in->shape.size(); ++d)
    in->rowElems *= in->shape[d];
  return Status::ok();
}

Status parseChannel(const json &j, size_t i, const Manifest &m, ChannelInfo *c) {
  std::string w = format("channels[%zu].", i), dir, phase;
  PDRT_RETURN_IF_ERROR(get(j, "id", w, &c->id));
  PDRT_RETURN_IF_ERROR(get(j, "peer", w, &c->peer));
  PDRT_RETURN_IF_ERROR(get(j, "direction", w, &dir));
  PDRT_RETURN_IF_ERROR(get(j, "phase", w, &phase));
  PDRT_RETURN_IF_ERROR(get(j, "bytes", w, &c->bytes));
  if ((dir != "send" && dir != "recv") || (phase != "forward" && phase != "backward"))
    return Status::error(format("manifest: channel %lld: direction must be "
                                "send|recv and phase forward|backward",
                                (long long)c->id));
  if (c->peer < 0 || c->peer >= m.stages || c->peer == m.stage || c->id < 0 ||
      c->id >= 32000)
    return Status::error(format("manifest: channel %lld has a bad peer %lld "
                                "or id (ids must be in [0, 32000))",
                                (long long)c->id, (long long)c->peer));
  c->isSend = dir == "send";
  c->isForward = phase == "forward";
  return Status::ok();
}

/// A GEMM shape and its library: one element of "gemm_libraries".
using GemmEntry = std::pair<GemmShape2D, GemmLibrary>;

/// {"m", "n", "k", "trans_a", "trans_b", "library": "onednn" | "openblas"}.
Status parseGemm(const json &j, size_t i, const Manifest &, GemmEntry *out) {
  std::string w = format("gemm_libraries[%zu].", i), library;
  GemmShape2D &shape = out->first;
  PDRT_RETURN_IF_ERROR(get(j, "m", w, &shape.m));
  PDRT_RETURN_IF_ERROR(get(j, "n", w, &shape.n));
  PDRT_RETURN_IF_ERROR(get(j, "k", w, &shape.k));
  PDRT_RETURN_IF_ERROR(get(j, "trans_a", w, &shape.transA));
  PDRT_RETURN_IF_ERROR(get(j, "trans_b", w, &shape.transB));
  PDRT_RETURN_IF_ERROR(get(j, "library", w, &library));
  if (library != "onednn" && library != "openblas")
    return Status::error(format("manifest: %slibrary must be onednn or "
                                "openblas, not '%s'", w.c_str(),
                                library.c_str()));
  if (shape.m < 1 || shape.n < 1 || shape.k < 0)
    return Status::error(format("manifest: gemm_libraries[%zu] has a bad "
                                "shape", i));
  out->second =
      library == "openblas" ? GemmLibrary::OpenBLAS : GemmLibrary::OneDNN;
  return Status::ok();
}

Status parseHeader(const json &j, Manifest *m) {
  std::string fmt, sched;
  int version = 0;
  PDRT_RETURN_IF_ERROR(get(j, "format", "", &fmt));
  PDRT_RETURN_IF_ERROR(get(j, "version", "", &version));
  if (fmt != "pdc-stage-manifest" || version != 1)
    return Status::error("manifest: expected format 'pdc-stage-manifest' version 1");
  PDRT_RETURN_IF_ERROR(get(j, "stage", "", &m->stage));
  PDRT_RETURN_IF_ERROR(get(j, "stages", "", &m->stages));
  PDRT_RETURN_IF_ERROR(get(j, "replicas", "", &m->replicas));
  PDRT_RETURN_IF_ERROR(get(j, "schedule", "", &sched));
  PDRT_RETURN_IF_ERROR(get(j, "microbatch", "", &m->microbatch));
  PDRT_RETURN_IF_ERROR(get(j, "microbatches", "", &m->microbatches));
  PDRT_RETURN_IF_ERROR(getOpt(j, "model", "", &m->model));
  PDRT_RETURN_IF_ERROR(getOpt(j, "loss", "", &m->loss));
  if (sched == "2bw") m->schedule = ScheduleKind::TwoBW;
  else if (sched == "flush") m->schedule = ScheduleKind::Flush;
  else if (sched == "gpipe") m->schedule = ScheduleKind::GPipe;
  else
    return Status::error(format("manifest: unknown schedule '%s' (expected "
                                "2bw, flush or gpipe)", sched.c_str()));
  if (m->stages < 1 || m->stage < 0 || m->stage >= m->stages || m->replicas < 1 ||
      m->microbatch < 1 || m->microbatches < 1)
    return Status::error("manifest: stage/stages/replicas/microbatch/"
                         "microbatches out of range");
  if (m->schedule == ScheduleKind::TwoBW && m->microbatches < m->stages)
    return Status::error(format("manifest: schedule 2bw needs microbatches >= "
                                "stages (m = %lld, d = %d)",
                                (long long)m->microbatches, m->stages));
  return Status::ok();
}

/// Parses the array under `key` element by element with `parse`.
template <typename T, typename F>
Status parseArray(const json &j, const char *key, const Manifest &m,
                  std::vector<T> *out, F parse) {
  auto it = j.find(key);
  if (it == j.end())
    return Status::ok();
  if (!it->is_array())
    return Status::error(format("manifest: '%s' must be an array", key));
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_object())
      return Status::error(format("manifest: %s[%zu] must be an object", key, i));
    T item;
    PDRT_RETURN_IF_ERROR(parse((*it)[i], i, m, &item));
    out->push_back(std::move(item));
  }
  return Status::ok();
}

} // namespace

Status parseManifest(const std::string &text, Manifest *m) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Status::error("manifest: not a valid JSON object");
  *m = Manifest();
  PDRT_RETURN_IF_ERROR(parseHeader(j, m));
  if (!j.contains("optimizer") || !j.contains("regions"))
    return Status::error("manifest: missing key 'optimizer' or 'regions'");
  PDRT_RETURN_IF_ERROR(parseOptimizer(j["optimizer"], &m->optimizer));
  PDRT_RETURN_IF_ERROR(parseRegions(j["regions"], &m->regions));
  int64_t needVersions = m->schedule == ScheduleKind::TwoBW ? 2 : 1;
  if (m->regions.weightVersions != needVersions)
    return Status::error(format("manifest: schedule %s needs %lld weight "
                                "version(s), regions.weight_versions is %lld",
                                scheduleName(m->schedule), (long long)needVersions,
                                (long long)m->regions.weightVersions));
  PDRT_RETURN_IF_ERROR(parseArray(j, "params", *m, &m->params, parseParam));
  PDRT_RETURN_IF_ERROR(parseArray(j, "state", *m, &m->state, parseState));
  PDRT_RETURN_IF_ERROR(parseArray(j, "inputs", *m, &m->inputs, parseInput));
  PDRT_RETURN_IF_ERROR(parseArray(j, "channels", *m, &m->channels, parseChannel));
  std::vector<GemmEntry> gemms;
  PDRT_RETURN_IF_ERROR(parseArray(j, "gemm_libraries", *m, &gemms, parseGemm));
  m->gemmLibraries.insert(gemms.begin(), gemms.end());
  for (size_t a = 0; a < m->channels.size(); ++a)
    for (size_t b = a + 1; b < m->channels.size(); ++b)
      if (m->channels[a].id == m->channels[b].id)
        return Status::error(format("manifest: channel id %lld appears twice",
                                    (long long)m->channels[a].id));
  return Status::ok();
}

int manifestStageHint(const std::string &text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("stage") && j["stage"].is_number_integer())
    return j["stage"].get<int>();
  return -1;
}

} // namespace pdrt
