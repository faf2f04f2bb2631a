//===- data_npy.h - Training data: .npy files or synthetic ---------*- C++ -*-===//
//
// A numpy .npy reader (v1/v2/v3, little-endian <f4 and <i8, C order) and the
// DataSource that serves rows of each graph input: one NAME.npy per input
// of the stage, or deterministic pseudo-random data keyed by the seed.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_DATA_NPY_H
#define PDRT_EXEC_DATA_NPY_H

#include "manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pdrt {

struct NpyArray {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<char> data; ///< Row-major, little-endian payload.
};

/// Reads a whole .npy file; errors name the file and the problem.
Status readNpy(const std::string &path, NpyArray *out);

/// Writes a .npy v1 file (used by tests and tools).
Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data);

/// Serves the rows of the stage's graph inputs.
class DataSource {
public:
  /// Loads DIR/NAME.npy for every input of `m` and checks dtype and the
  /// per-sample shape against the manifest.
  Status openDir(const Manifest &m, const std::string &dir);
  /// Synthetic data: floats ~ N(0,1), int64 labels uniform in [0, classes).
  void openSynthetic(const Manifest &m, uint64_t seed);

  /// Copies `rows` samples starting at global sample `first` (taken modulo
  /// the number of samples) of input `in` into dst.
  void read(const InputInfo &in, int64_t first, int64_t rows, void *dst) const;

private:
  const Manifest *manifest_ = nullptr;
  bool synthetic_ = false;
  uint64_t seed_ = 0;
  std::vector<NpyArray> arrays_; ///< Parallel to manifest_->inputs.
};

} // namespace pdrt

#endif // PDRT_EXEC_DATA_NPY_H
