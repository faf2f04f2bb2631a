//===- data_npy.cc - .npy reader and data sources -----------------------------===//
//
// Parses the .npy header dict ('descr', 'fortran_order', 'shape') by hand,
// validates it against the manifest and serves microbatch rows with sample
// indices taken modulo the file's length. Synthetic data is counter-based
// (splitmix64 of seed, input, sample, element), so every rank agrees.
//
//===----------------------------------------------------------------------===//

#include "data_npy.h"

#include <cmath>
#include <cstring>
#include <fstream>

namespace pdrt {

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += format("%s%lld", i ? ", " : "", (long long)shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// Returns the text after 'key': in the header dict, or "" if absent.
std::string dictValue(const std::string &header, const std::string &key) {
  size_t pos = header.find("'" + key + "'");
  if (pos == std::string::npos)
    return "";
  pos = header.find(':', pos);
  return pos == std::string::npos ? "" : header.substr(pos + 1);
}

Status parseHeader(const std::string &path, const std::string &header,
                   NpyArray *out) {
  std::string descr = dictValue(header, "descr");
  if (descr.find("'<f4'") != std::string::npos && descr.find("'<f4'") < 4)
    out->dtype = DType::Float32;
  else if (descr.find("'<i8'") != std::string::npos && descr.find("'<i8'") < 4)
    out->dtype = DType::Int64;
  else
    return Status::error(format("%s: unsupported dtype in header %s (expected "
                                "'<f4' or '<i8')", path.c_str(), header.c_str()));
  std::string fortran = dictValue(header, "fortran_order");
  if (fortran.compare(0, 6, " False") != 0 && fortran.compare(0, 5, "False") != 0)
    return Status::error(format("%s: fortran_order arrays are not supported",
                                path.c_str()));
  std::string shape = dictValue(header, "shape");
  size_t open = shape.find('('), close = shape.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return Status::error(format("%s: cannot parse the shape in header %s",
                                path.c_str(), header.c_str()));
  std::string dims = shape.substr(open + 1, close - open - 1);
  out->shape.clear();
  for (size_t i = 0; i < dims.size();) {
    char *end = nullptr;
    long long v = strtoll(dims.c_str() + i, &end, 10);
    size_t used = end - (dims.c_str() + i);
    if (used == 0) {
      ++i;
      continue;
    }
    out->shape.push_back(v);
    i += used;
  }
  return Status::ok();
}

} // namespace

Status readNpy(const std::string &path, NpyArray *out) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return Status::error(format("cannot open data file %s", path.c_str()));
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return Status::error(format("%s: not a .npy file (bad magic)", path.c_str()));
  uint32_t headerLen = 0;
  unsigned char lenBytes[4] = {0, 0, 0, 0};
  int lenSize = magic[6] == 1 ? 2 : 4;
  if (magic[6] < 1 || magic[6] > 3 || !f.read((char *)lenBytes, lenSize))
    return Status::error(format("%s: unsupported .npy version %d", path.c_str(),
                                (int)magic[6]));
  for (int i = lenSize - 1; i >= 0; --i)
    headerLen = headerLen * 256 + lenBytes[i];
  std::string header(headerLen, '\0');
  if (!f.read(&header[0], headerLen))
    return Status::error(format("%s: truncated header", path.c_str()));
  PDRT_RETURN_IF_ERROR(parseHeader(path, header, out));
  int64_t numel = 1;
  for (int64_t d : out->shape)
    numel *= d;
  int64_t bytes = numel * (out->dtype == DType::Int64 ? 8 : 4);
  out->data.resize(bytes);
  if (bytes && !f.read(out->data.data(), bytes))
    return Status::error(format("%s: file is shorter than its shape %s needs",
                                path.c_str(), shapeString(out->shape).c_str()));
  return Status::ok();
}

Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data) {
  std::string header = format("{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                              dtype == DType::Int64 ? "<i8" : "<f4",
                              shapeString(shape).c_str());
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  uint16_t len = (uint16_t)header.size();
  f.write("\x93NUMPY\x01\x00", 8);
  f.write((const char *)&len, 2);
  f.write(header.data(), header.size());
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  f.write((const char *)data, numel * (dtype == DType::Int64 ? 8 : 4));
  if (!f)
    return Status::error(format("cannot write %s", path.c_str()));
  return Status::ok();
}

Status DataSource::openDir(const Manifest &m, const std::string &dir) {
  manifest_ = &m;
  synthetic_ = false;
  arrays_.clear();
  for (const InputInfo &in : m.inputs) {
    std::string path = dir + "/" + in.name + ".npy";
    NpyArray a;
    PDRT_RETURN_IF_ERROR(readNpy(path, &a));
    std::vector<int64_t> want(in.shape);
    want[0] = -1;
    bool ok = a.shape.size() == want.size() && a.dtype == in.dtype &&
              !a.shape.empty() && a.shape[0] > 0;
    for (size_t d = 1; ok && d < want.size(); ++d)
      ok = a.shape[d] == want[d];
    if (!ok) {
      std::string expect = shapeString(want);
      expect.replace(1, 2, "N");
      return Status::error(format("%s: has dtype %s and shape %s; input '%s' "
                                  "needs dtype %s and shape %s with N >= 1",
                                  path.c_str(), a.dtype == DType::Int64 ? "int64" : "float32",
                                  shapeString(a.shape).c_str(), in.name.c_str(),
                                  in.dtype == DType::Int64 ? "int64" : "float32",
                                  expect.c_str()));
    }
    arrays_.push_back(std::move(a));
  }
  return Status::ok();
}

void DataSource::openSynthetic(const Manifest &m, uint64_t seed) {
  manifest_ = &m;
  synthetic_ = true;
  seed_ = seed;
  arrays_.clear();
}

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform double in (0, 1) from a 64-bit key.
double uniform01(uint64_t key) {
  return ((splitmix64(key) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

void synthesizeRow(const InputInfo &in, uint64_t seed, int64_t sample, char *dst) {
  uint64_t base = splitmix64(splitmix64(seed) ^ ((uint64_t)in.index << 48)) ^
                  splitmix64((uint64_t)sample);
  for (int64_t e = 0; e < in.rowElems; ++e) {
    uint64_t key = splitmix64(base + 2 * (uint64_t)e);
    if (in.dtype == DType::Int64) {
      int64_t classes = in.classes > 0 ? in.classes : 1;
      ((int64_t *)dst)[e] = (int64_t)(splitmix64(key) % (uint64_t)classes);
    } else {
      double u1 = uniform01(key), u2 = uniform01(key + 1);
      ((float *)dst)[e] = (float)(std::sqrt(-2.0 * std::log(u1)) *
                                  std::cos(6.283185307179586 * u2));
    }
  }
}

} // namespace

void DataSource::read(const InputInfo &in, int64_t first, int64_t rows,
                      void *dst) const {
  char *out = static_cast<char *>(dst);
  int64_t rowBytes = in.rowBytes();
  size_t which = &in - manifest_->inputs.data();
  for (int64_t r = 0; r < rows; ++r, out += rowBytes) {
    if (synthetic_) {
      synthesizeRow(in, seed_, first + r, out);
      continue;
    }
    if (which >= arrays_.size())
      return; // Not an input of this manifest (callers pass manifest inputs).
    const NpyArray &a = arrays_[which];
    int64_t sample = (first + r) % a.shape[0];
    std::memcpy(out, a.data.data() + sample * rowBytes, rowBytes);
  }
}

} // namespace pdrt
