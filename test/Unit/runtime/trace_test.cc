//===- trace_test.cc - The runtime timeline's recorder and JSON writer ------===//
//
// Events land on the right thread (compute on tid 0, transfers packed onto
// comm tids 1, 2, ... so that slices of one tid never overlap), times are
// microseconds, unset arguments are left out, and the merged file of
// several ranks is one valid Chrome trace document.
//
//===----------------------------------------------------------------------===//

#include "exec/trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

using namespace pdrt;
using json = nlohmann::json;

namespace {

TraceEvent event(const char *name, int64_t beginNs, int64_t endNs,
                 int64_t step = -1, int64_t microbatch = -1) {
  TraceEvent e;
  e.name = name;
  e.category = "comm";
  e.beginNs = beginNs;
  e.endNs = endNs;
  e.step = step;
  e.microbatch = microbatch;
  return e;
}

json parseFragment(const std::string &fragment) {
  return json::parse("[" + fragment + "]");
}

/// The complete ("X") events of `events` by name.
std::map<std::string, std::vector<json>> slices(const json &events) {
  std::map<std::string, std::vector<json>> out;
  for (const json &e : events)
    if (e["ph"] == "X")
      out[e["name"].get<std::string>()].push_back(e);
  return out;
}

TEST(Trace, RecorderIsOffUntilStarted) {
  TraceRecorder t;
  EXPECT_FALSE(t.on());
  t.start();
  EXPECT_TRUE(t.on());
  int64_t a = t.now(), b = t.now();
  EXPECT_GE(a, 0);
  EXPECT_LE(a, b);
  t.record(TraceThread::Compute, event("forward", 1, 2));
  t.record(TraceThread::Comm, event("send", 1, 3));
  EXPECT_EQ(t.compute().size(), 1u);
  EXPECT_EQ(t.comm().size(), 1u);
  t.start(); // A new start forgets earlier events.
  EXPECT_TRUE(t.compute().empty() && t.comm().empty());
}

TEST(Trace, ComputeEventsOnTidZeroInMicroseconds) {
  TraceEvent f = event("forward", 1500, 4250, 2, 3);
  f.category = "compute";
  json events = parseFragment(traceEventsJson(5, "stage 1 replica 0", {f}, {}));
  auto byName = slices(events);
  ASSERT_EQ(byName["forward"].size(), 1u);
  const json &e = byName["forward"][0];
  EXPECT_EQ(e["pid"], 5);
  EXPECT_EQ(e["tid"], 0);
  EXPECT_EQ(e["cat"], "compute");
  EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.75);
  EXPECT_EQ(e["args"], json({{"step", 2}, {"microbatch", 3}}));
  int names = 0;
  for (const json &m : events)
    if (m["ph"] == "M" && m["name"] == "process_name") {
      EXPECT_EQ(m["args"]["name"], "stage 1 replica 0");
      ++names;
    }
  EXPECT_EQ(names, 1);
}

TEST(Trace, TransfersArePackedOntoCommThreads) {
  TraceEvent send = event("send", 0, 10);
  send.channel = 4;
  send.peer = 1;
  send.bytes = 1 << 20;
  std::vector<TraceEvent> comm = {send, event("recv", 5, 15),
                                  event("recv", 10, 20), event("send", 12, 13)};
  json events = parseFragment(traceEventsJson(0, "stage 0", {}, comm));
  std::map<int, std::vector<std::pair<double, double>>> byTid;
  std::map<int, std::string> threadNames;
  for (const json &e : events) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threadNames[e["tid"]] = e["args"]["name"];
    if (e["ph"] != "X")
      continue;
    double ts = e["ts"], dur = e["dur"];
    byTid[e["tid"]].push_back({ts, ts + dur});
    if (ts == 0.0) {
      EXPECT_EQ(e["tid"], 1);
      EXPECT_EQ(e["args"], json({{"channel", 4}, {"peer", 1}, {"bytes", 1 << 20}}));
    }
  }
  // [0,10] and [10,20] share comm; [5,15] takes comm 2; [12,13] comm 3.
  EXPECT_EQ(byTid[1].size(), 2u);
  EXPECT_EQ(byTid[2].size(), 1u);
  EXPECT_EQ(byTid[3].size(), 1u);
  for (auto &[tid, spans] : byTid)
    for (size_t i = 1; i < spans.size(); ++i)
      EXPECT_LE(spans[i - 1].second, spans[i].first) << "tid " << tid;
  EXPECT_EQ(threadNames[0], "compute");
  EXPECT_EQ(threadNames[1], "comm");
  EXPECT_EQ(threadNames[2], "comm 2");
  EXPECT_EQ(threadNames[3], "comm 3");
}

TEST(Trace, NamesAreEscaped) {
  json events = parseFragment(traceEventsJson(0, "a \"quoted\"\\name\n", {}, {}));
  EXPECT_EQ(events[0]["args"]["name"], "a \"quoted\"\\name\n");
}

TEST(Trace, FileMergesRanks) {
  std::string path = ::testing::TempDir() + "pdrt_trace_test.json";
  std::vector<std::string> fragments = {
      traceEventsJson(0, "stage 0", {event("forward", 0, 5)}, {event("send", 4, 9)}),
      "", // A rank with nothing (not written).
      traceEventsJson(1, "stage 1", {event("backward", 1, 2)}, {})};
  ASSERT_TRUE(writeTraceFile(path, fragments).isOk());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str());
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  std::map<int, int> perPid;
  for (const json &e : doc["traceEvents"])
    if (e["ph"] == "X")
      ++perPid[e["pid"]];
  EXPECT_EQ(perPid[0], 2);
  EXPECT_EQ(perPid[1], 1);
  std::remove(path.c_str());

  Status bad = writeTraceFile("/nonexistent-dir/t.json", fragments);
  EXPECT_EQ(bad.message(), "cannot write --trace file '/nonexistent-dir/t.json'");
}

} // namespace
