//===- trace.cc - Trace recording and the Chrome trace JSON writer ------------===//
//
// Complete events ("ph": "X") with microsecond "ts" and "dur"; metadata
// events name each process (stage, replica) and thread (compute, comm).
//
//===----------------------------------------------------------------------===//

#include "trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace pdrt {

void TraceRecorder::start() {
  on_ = true;
  start_ = std::chrono::steady_clock::now();
  compute_.clear();
  comm_.clear();
}

namespace {

/// `s` as a JSON string literal.
std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if ((unsigned char)c < 0x20) {
      out += format("\\u%04x", (unsigned)c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string metadata(int pid, int tid, const char *what, const std::string &name) {
  return format("{\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, "
                "\"args\": {\"name\": %s}}", what, pid, tid, quote(name).c_str());
}

std::string complete(int pid, int tid, const TraceEvent &e) {
  std::string args;
  auto arg = [&](const char *key, int64_t v) {
    if (v < 0)
      return;
    args += format("%s\"%s\": %" PRId64, args.empty() ? "" : ", ", key, v);
  };
  arg("step", e.step);
  arg("microbatch", e.microbatch);
  arg("channel", e.channel);
  arg("peer", e.peer);
  arg("bytes", e.bytes);
  int64_t dur = std::max<int64_t>(e.endNs - e.beginNs, 0);
  return format("{\"name\": %s, \"cat\": %s, \"ph\": \"X\", \"pid\": %d, "
                "\"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {%s}}",
                quote(e.name).c_str(), quote(e.category).c_str(), pid, tid,
                (double)e.beginNs * 1e-3, (double)dur * 1e-3, args.c_str());
}

/// Lane (0-based) of each event of `events`, sorted by begin: the lowest
/// lane whose last event ended by its begin.
std::vector<std::pair<const TraceEvent *, int>>
packLanes(const std::vector<TraceEvent> &events) {
  std::vector<const TraceEvent *> order;
  for (const TraceEvent &e : events)
    order.push_back(&e);
  std::stable_sort(order.begin(), order.end(),
                   [](const TraceEvent *a, const TraceEvent *b) {
                     return a->beginNs < b->beginNs;
                   });
  std::vector<int64_t> laneEnd;
  std::vector<std::pair<const TraceEvent *, int>> out;
  for (const TraceEvent *e : order) {
    size_t lane = 0;
    while (lane < laneEnd.size() && laneEnd[lane] > e->beginNs)
      ++lane;
    if (lane == laneEnd.size())
      laneEnd.push_back(0);
    laneEnd[lane] = std::max(e->endNs, e->beginNs);
    out.emplace_back(e, (int)lane);
  }
  return out;
}

} // namespace

std::string traceEventsJson(int pid, const std::string &processName,
                            const std::vector<TraceEvent> &compute,
                            const std::vector<TraceEvent> &comm) {
  std::vector<std::string> items;
  items.push_back(metadata(pid, 0, "process_name", processName));
  items.push_back(format("{\"name\": \"process_sort_index\", \"ph\": \"M\", "
                         "\"pid\": %d, \"tid\": 0, \"args\": {\"sort_index\": %d}}",
                         pid, pid));
  items.push_back(metadata(pid, 0, "thread_name", "compute"));
  for (const TraceEvent &e : compute)
    items.push_back(complete(pid, 0, e));
  int lanes = 0;
  for (const auto &[e, lane] : packLanes(comm)) {
    items.push_back(complete(pid, 1 + lane, *e));
    lanes = std::max(lanes, lane + 1);
  }
  for (int lane = 0; lane < std::max(lanes, 1); ++lane)
    items.push_back(metadata(pid, 1 + lane, "thread_name",
                             lane == 0 ? std::string("comm")
                                       : format("comm %d", lane + 1)));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ",\n";
    out += items[i];
  }
  return out;
}

Status writeTraceFile(const std::string &path,
                      const std::vector<std::string> &fragments) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    return Status::error(format("cannot write --trace file '%s'", path.c_str()));
  std::fputs("{\"traceEvents\": [\n", f);
  bool first = true;
  for (const std::string &fragment : fragments) {
    if (fragment.empty())
      continue;
    std::fputs(first ? "" : ",\n", f);
    std::fwrite(fragment.data(), 1, fragment.size(), f);
    first = false;
  }
  std::fputs("\n], \"displayTimeUnit\": \"ms\"}\n", f);
  if (std::fclose(f) != 0)
    return Status::error(format("cannot write --trace file '%s'", path.c_str()));
  return Status::ok();
}

} // namespace pdrt
