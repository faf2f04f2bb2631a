//===- onnx_weights.h - Initial weights from ONNX, trained ones back -*- C++ -*-===//
//
// Loads each param's and state tensor's initial value from the model's
// initializers (raw_data, float_data or external data) and writes the
// trained model: rank 0 gathers the params and state of every stage's
// replica 0 and rewrites their initializers.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_ONNX_WEIGHTS_H
#define PDRT_EXEC_ONNX_WEIGHTS_H

#include "manifest.h"

#include <map>
#include <string>
#include <vector>

namespace pdrt {

/// Copies every param's initializer of `modelPath` into each of the
/// `versions` weight buffers starting at `weights` (`versionBytes` apart).
Status loadInitialWeights(const Manifest &m, const std::string &modelPath,
                          char *weights, int64_t versionBytes, int versions);

/// Copies every state tensor's initializer of `modelPath` into the state
/// region `state` (at each tensor's offset).
Status loadInitialState(const Manifest &m, const std::string &modelPath,
                        char *state);

/// Trained values by initializer name.
using ParamValues = std::map<std::string, std::vector<float>>;

/// Writes `modelPath` with the initializers named in `values` replaced by
/// raw float32 data to `outPath` (through outPath.tmp and a rename).
Status writeTrainedModel(const std::string &modelPath, const ParamValues &values,
                         const std::string &outPath);

/// Collective over MPI_COMM_WORLD: replica 0 of every stage sends its params
/// (read from the weight buffer `weights`) and its state (from the state
/// region `state`; each replica updates its own from its own microbatches,
/// replica 0's is saved) to rank 0, which writes the model.
Status saveTrainedModel(const Manifest &m, int rank, const char *weights,
                        const char *state, const std::string &modelPath,
                        const std::string &outPath);

} // namespace pdrt

#endif // PDRT_EXEC_ONNX_WEIGHTS_H
