//===- args.cc - The stage executable's command line --------------------------===//
//
// --model PATH --steps N --lr X --seed S --log-every K --data DIR |
// --synthetic --synthetic-weights[-if-missing] --save-onnx OUT --print-memory
// --check-ties --dump-grads DIR --profile-ops FILE --trace FILE
// --comm thread|sync. Every stage receives the same arguments; anything
// unknown or malformed is an error naming it.
//
//===----------------------------------------------------------------------===//

#include "executor.h"

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <cstdlib>

namespace pdrt {

namespace {

Status parseInt(const std::string &flag, const std::string &text, int64_t min,
                int64_t *out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < min)
    return Status::error(format("argument %s: expected an integer >= %lld, "
                                "got '%s'", flag.c_str(), (long long)min,
                                text.c_str()));
  *out = v;
  return Status::ok();
}

Status parseFlag(const std::string &flag, const std::string &value,
                 RunOptions *o) {
  int64_t n = 0;
  if (flag == "--model") {
    o->model = value;
  } else if (flag == "--steps") {
    PDRT_RETURN_IF_ERROR(parseInt(flag, value, 0, &o->steps));
  } else if (flag == "--log-every") {
    PDRT_RETURN_IF_ERROR(parseInt(flag, value, 1, &o->logEvery));
  } else if (flag == "--seed") {
    PDRT_RETURN_IF_ERROR(parseInt(flag, value, 0, &n));
    o->seed = (uint64_t)n;
  } else if (flag == "--lr") {
    char *end = nullptr;
    o->lr = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !(o->lr >= 0.0))
      return Status::error(format("argument --lr: expected a non-negative "
                                  "number, got '%s'", value.c_str()));
    o->hasLr = true;
  } else if (flag == "--data") {
    o->dataDir = value;
  } else if (flag == "--save-onnx") {
    o->saveOnnx = value;
  } else if (flag == "--dump-grads") {
    o->dumpGrads = value;
  } else if (flag == "--profile-ops") {
    o->profileOps = value;
  } else if (flag == "--trace") {
    if (value.empty())
      return Status::error("argument --trace: expected a file name");
    o->trace = value;
  } else if (flag == "--comm") {
    if (value == "thread")
      o->comm = CommMode::Thread;
    else if (value == "sync")
      o->comm = CommMode::Sync;
    else
      return Status::error(format("argument --comm: expected thread or sync, "
                                  "got '%s'", value.c_str()));
  } else {
    return Status::error(format("unknown argument '%s'", flag.c_str()));
  }
  return Status::ok();
}

} // namespace

Status parseArgs(const std::vector<std::string> &args, RunOptions *out) {
  RunOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    bool hasValue = false;
    size_t eq = flag.find('=');
    if (flag.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      hasValue = true;
    }
    if (flag == "--synthetic" && !hasValue) {
      o.synthetic = true;
      continue;
    }
    if (flag == "--print-memory" && !hasValue) {
      o.printMemory = true;
      continue;
    }
    if (flag == "--check-ties" && !hasValue) {
      o.checkTies = true;
      continue;
    }
    if (flag == "--synthetic-weights" && !hasValue) {
      o.syntheticWeights = true;
      continue;
    }
    if (flag == "--synthetic-weights-if-missing" && !hasValue) {
      o.syntheticWeightsIfMissing = true;
      continue;
    }
    static const char *const kValued[] = {"--model", "--steps", "--lr", "--seed",
                                          "--log-every", "--data", "--save-onnx",
                                          "--dump-grads", "--profile-ops",
                                          "--trace", "--comm"};
    if (std::find(std::begin(kValued), std::end(kValued), flag) == std::end(kValued))
      return Status::error(format("unknown argument '%s'", flag.c_str()));
    if (!hasValue) {
      if (i + 1 >= args.size())
        return Status::error(format("argument '%s' needs a value", flag.c_str()));
      value = args[++i];
    }
    PDRT_RETURN_IF_ERROR(parseFlag(flag, value, &o));
  }
  if (o.synthetic && !o.dataDir.empty())
    return Status::error("--data and --synthetic are mutually exclusive");
  if (o.dataDir.empty())
    o.synthetic = true;
  *out = o;
  return Status::ok();
}

} // namespace pdrt
