//===- onnx_weights.cc - ONNX initializers in and out ------------------------===//
//
// Reads the ModelProto with onnx_proto, finds each param's initializer by
// name and decodes it (FLOAT or DOUBLE; raw_data, float_data/double_data or
// EXTERNAL data relative to the model's directory), and likewise each state
// tensor (BatchNormalization running statistics). Saving serialises the
// params and state of each stage into a blob, gathers the blobs on rank 0 and
// rewrites the matching initializers as raw float32.
//
//===----------------------------------------------------------------------===//

#include "onnx_weights.h"

#include "comm/comm_mpi.h"

#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstring>
#include <fstream>

namespace pdrt {

namespace {

Status readModel(const std::string &path, onnx::ModelProto *model) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return Status::error(format("cannot open ONNX model %s", path.c_str()));
  if (!model->ParseFromIstream(&f))
    return Status::error(format("%s: not a valid ONNX model (protobuf parse "
                                "failed)", path.c_str()));
  return Status::ok();
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// Reads the external data bytes of `t` (location/offset/length keys).
Status readExternal(const onnx::TensorProto &t, const std::string &modelDir,
                    int64_t wantBytes, std::string *bytes) {
  std::string location;
  int64_t offset = 0, length = wantBytes;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = std::stoll(kv.value());
    else if (kv.key() == "length") length = std::stoll(kv.value());
  }
  std::string path = modelDir + "/" + location;
  std::ifstream f(path, std::ios::binary);
  if (location.empty() || !f)
    return Status::error(format("initializer '%s': cannot open external data "
                                "file '%s'", t.name().c_str(), path.c_str()));
  if (length != wantBytes)
    return Status::error(format("initializer '%s': external length %lld, "
                                "expected %lld bytes", t.name().c_str(),
                                (long long)length, (long long)wantBytes));
  bytes->resize(length);
  f.seekg(offset);
  if (!f.read(&(*bytes)[0], length))
    return Status::error(format("initializer '%s': external data file '%s' "
                                "ends before offset %lld + %lld", t.name().c_str(),
                                path.c_str(), (long long)offset, (long long)length));
  return Status::ok();
}

/// Decodes initializer `t` (numel elements) into float32 `out`.
Status decodeTensor(const onnx::TensorProto &t, const std::string &modelDir,
                    int64_t numel, float *out) {
  bool isDouble = t.data_type() == onnx::TensorProto::DOUBLE;
  if (t.data_type() != onnx::TensorProto::FLOAT && !isDouble)
    return Status::error(format("initializer '%s' has data_type %d; only "
                                "FLOAT and DOUBLE params are supported",
                                t.name().c_str(), (int)t.data_type()));
  int64_t elem = isDouble ? 8 : 4;
  std::string bytes;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    PDRT_RETURN_IF_ERROR(readExternal(t, modelDir, numel * elem, &bytes));
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else if (!isDouble && t.float_data_size() == numel) {
    std::memcpy(out, t.float_data().data(), numel * 4);
    return Status::ok();
  } else if (isDouble && t.double_data_size() == numel) {
    for (int64_t i = 0; i < numel; ++i)
      out[i] = (float)t.double_data((int)i);
    return Status::ok();
  }
  if ((int64_t)bytes.size() != numel * elem)
    return Status::error(format("initializer '%s' holds %zu bytes of data, "
                                "expected %lld", t.name().c_str(), bytes.size(),
                                (long long)(numel * elem)));
  if (!isDouble) {
    std::memcpy(out, bytes.data(), numel * 4);
  } else {
    for (int64_t i = 0; i < numel; ++i) {
      double v;
      std::memcpy(&v, bytes.data() + i * 8, 8);
      out[i] = (float)v;
    }
  }
  return Status::ok();
}

Status checkDims(const onnx::TensorProto &t, const std::string &name,
                 const std::vector<int64_t> &shape) {
  bool same = t.dims_size() == (int)shape.size();
  for (int i = 0; same && i < t.dims_size(); ++i)
    same = t.dims(i) == shape[i];
  if (same)
    return Status::ok();
  std::string have, want;
  for (int i = 0; i < t.dims_size(); ++i)
    have += format("%s%lld", i ? "x" : "", (long long)t.dims(i));
  for (size_t i = 0; i < shape.size(); ++i)
    want += format("%s%lld", i ? "x" : "", (long long)shape[i]);
  return Status::error(format("initializer '%s' has shape [%s], the manifest "
                              "expects [%s]", name.c_str(), have.c_str(),
                              want.c_str()));
}

/// The initializers of one model by name, and where its external data is.
struct Initializers {
  onnx::ModelProto model;
  std::map<std::string, const onnx::TensorProto *> byName;
  std::string path, dir;

  Status open(const std::string &modelPath) {
    PDRT_RETURN_IF_ERROR(readModel(modelPath, &model));
    for (const onnx::TensorProto &t : model.graph().initializer())
      byName[t.name()] = &t;
    path = modelPath;
    dir = directoryOf(modelPath);
    return Status::ok();
  }

  /// Decodes initializer `source` (of `what`'s shape) into dst.
  Status load(const std::string &source, const std::string &what,
              const std::vector<int64_t> &shape, int64_t numel, float *dst) {
    auto it = byName.find(source);
    if (it == byName.end())
      return Status::error(format("%s: no initializer named '%s' (%s of this "
                                  "stage)", path.c_str(), source.c_str(),
                                  what.c_str()));
    PDRT_RETURN_IF_ERROR(checkDims(*it->second, source, shape));
    return decodeTensor(*it->second, dir, numel, dst);
  }
};

} // namespace

Status loadInitialWeights(const Manifest &m, const std::string &modelPath,
                          char *weights, int64_t versionBytes, int versions) {
  Initializers inits;
  PDRT_RETURN_IF_ERROR(inits.open(modelPath));
  for (const ParamInfo &p : m.params) {
    const std::string &source = p.initFrom.empty() ? p.name : p.initFrom;
    float *dst = reinterpret_cast<float *>(weights + p.offset);
    PDRT_RETURN_IF_ERROR(inits.load(source, "param '" + p.name + "'", p.shape,
                                    p.numel, dst));
    for (int v = 1; v < versions; ++v)
      std::memcpy(weights + v * versionBytes + p.offset, dst, p.numel * 4);
  }
  return Status::ok();
}

Status loadInitialState(const Manifest &m, const std::string &modelPath,
                        char *state) {
  if (m.state.empty())
    return Status::ok();
  Initializers inits;
  PDRT_RETURN_IF_ERROR(inits.open(modelPath));
  for (const StateInfo &s : m.state)
    PDRT_RETURN_IF_ERROR(inits.load(
        s.name, "state '" + s.name + "'", s.shape, s.numel,
        reinterpret_cast<float *>(state + s.offset)));
  return Status::ok();
}

namespace {

void setFloatData(onnx::TensorProto &t, const std::vector<float> &data) {
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.clear_float_data();
  t.clear_double_data();
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  t.set_raw_data(data.data(), data.size() * sizeof(float));
}

/// Turns the copy `name = Identity(initializer)` of an eval-mode export into
/// an initializer of its own holding `data`: the Identity node is removed
/// (and, below IR 4, the new initializer is also declared a graph input).
Status materialiseCopy(onnx::ModelProto &model, const std::string &name,
                       const std::vector<float> &data) {
  onnx::GraphProto &graph = *model.mutable_graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    if (node.op_type() != "Identity" || node.output_size() != 1 ||
        node.output(0) != name || node.input_size() != 1)
      continue;
    const onnx::TensorProto *source = nullptr;
    for (const onnx::TensorProto &t : graph.initializer())
      if (t.name() == node.input(0))
        source = &t;
    if (!source)
      break;
    onnx::TensorProto copy;
    copy.set_name(name);
    copy.mutable_dims()->CopyFrom(source->dims());
    setFloatData(copy, data);
    *graph.add_initializer() = std::move(copy);
    if (model.ir_version() < 4)
      for (const onnx::ValueInfoProto &in : graph.input())
        if (in.name() == source->name()) {
          onnx::ValueInfoProto declared = in;
          declared.set_name(name);
          *graph.add_input() = std::move(declared);
          break;
        }
    graph.mutable_node()->DeleteSubrange(i, 1);
    return Status::ok();
  }
  return Status::error(format("trained param '%s' is neither an initializer "
                              "nor an Identity copy of one in the model",
                              name.c_str()));
}

} // namespace

Status writeTrainedModel(const std::string &modelPath, const ParamValues &values,
                         const std::string &outPath) {
  onnx::ModelProto model;
  PDRT_RETURN_IF_ERROR(readModel(modelPath, &model));
  std::map<std::string, bool> written;
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer()) {
    auto it = values.find(t.name());
    if (it == values.end())
      continue;
    setFloatData(t, it->second);
    written[t.name()] = true;
  }
  for (const auto &[name, data] : values)
    if (!written.count(name))
      PDRT_RETURN_IF_ERROR(materialiseCopy(model, name, data));
  std::string tmp = outPath + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !model.SerializeToOstream(&f) || !f.flush())
      return Status::error(format("cannot write trained model %s", tmp.c_str()));
  }
  if (std::rename(tmp.c_str(), outPath.c_str()) != 0)
    return Status::error(format("cannot rename %s to %s", tmp.c_str(), outPath.c_str()));
  return Status::ok();
}

namespace {

/// Serialises params and state as repeated
/// [u64 name length][name][u64 numel][floats].
std::string packParams(const Manifest &m, const char *weights,
                       const char *state) {
  std::string blob;
  auto put = [&](const void *p, size_t n) { blob.append((const char *)p, n); };
  auto tensor = [&](const std::string &name, int64_t n, const char *data) {
    uint64_t len = name.size(), numel = n;
    put(&len, 8);
    put(name.data(), len);
    put(&numel, 8);
    put(data, numel * 4);
  };
  for (const ParamInfo &p : m.params) {
    // A tied parameter is written once, by its first owner (the copies are
    // identical: their gradients are summed before every update).
    if (!p.owners.empty() && p.owners.front() != m.stage)
      continue;
    tensor(p.name, p.numel, weights + p.offset);
  }
  for (const StateInfo &s : m.state)
    tensor(s.name, s.numel, state + s.offset);
  return blob;
}

Status unpackParams(const std::string &blob, ParamValues *values) {
  size_t pos = 0;
  while (pos < blob.size()) {
    uint64_t len, numel;
    if (pos + 8 > blob.size())
      return Status::error("gathered parameter blob is truncated");
    std::memcpy(&len, &blob[pos], 8);
    std::string name(&blob[pos + 8], len);
    pos += 8 + len;
    std::memcpy(&numel, &blob[pos], 8);
    pos += 8;
    if (pos + numel * 4 > blob.size())
      return Status::error("gathered parameter blob is truncated");
    std::vector<float> &v = (*values)[name];
    v.resize(numel);
    std::memcpy(v.data(), &blob[pos], numel * 4);
    pos += numel * 4;
  }
  return Status::ok();
}

} // namespace

Status saveTrainedModel(const Manifest &m, int rank, const char *weights,
                        const char *state, const std::string &modelPath,
                        const std::string &outPath) {
  int replica = rank % m.replicas;
  if (replica != 0)
    return Status::ok();
  std::string blob = packParams(m, weights, state);
  if (rank != 0)
    return sendBlob(blob.data(), blob.size(), 0, kTagGatherSize,
                    kTagGatherData);
  ParamValues values;
  PDRT_RETURN_IF_ERROR(unpackParams(blob, &values));
  for (int k = 1; k < m.stages; ++k) {
    std::string other;
    PDRT_RETURN_IF_ERROR(
        recvBlob(&other, k * m.replicas, kTagGatherSize, kTagGatherData));
    ParamValues theirs;
    PDRT_RETURN_IF_ERROR(unpackParams(other, &theirs));
    values.insert(theirs.begin(), theirs.end());
  }
  return writeTrainedModel(modelPath, values, outPath);
}

} // namespace pdrt
