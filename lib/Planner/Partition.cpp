//===- Partition.cpp - Where the pipeline is cut --------------------------===//
//
// f[k][j] = min over i < j of max(f[k-1][i], cost(i, j)), where cost(i, j)
// is the time of compute ops [i, j) plus the transfers at cuts i and j.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/Partition.h"
#include "dialects/PD/IR/PDOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::pd;

/// The forward op an op is or differentiates (-1 if neither).
static int64_t forwardIdOf(Operation *op) {
  if (auto id = getContractInt<PDDialect::OpIdAttrHelper>(op))
    return *id;
  if (auto id = getContractInt<PDDialect::GradOfAttrHelper>(op))
    return *id;
  return -1;
}

OpChain mlir::pd::buildOpChain(func::FuncOp fn, const DeviceSpec &spec) {
  OpChain chain;
  Block &body = fn.getBody().front();
  DenseMap<int64_t, int64_t> index; // forward op id -> chain position
  for (Operation &op : body.without_terminator()) {
    auto id = getContractInt<PDDialect::OpIdAttrHelper>(&op);
    if (!id || op.getNumOperands() == 0)
      continue;
    index[*id] = chain.opIds.size();
    chain.opIds.push_back(*id);
    chain.seconds.push_back(0);
  }
  int64_t n = chain.opIds.size();
  // A source (parameter read, constant) runs with its users; a forward
  // source op has no chain position and its cost is negligible.
  auto positionOf = [&](Operation *op) -> int64_t {
    auto it = index.find(forwardIdOf(op));
    return it == index.end() ? -1 : it->second;
  };
  for (Operation &op : body.without_terminator())
    if (int64_t p = positionOf(&op); p >= 0)
      chain.seconds[p] += opSeconds(&op, spec);
  // A value defined at position a and last used at position u crosses
  // every cut in (a, u].
  std::vector<int64_t> delta(n + 2, 0);
  for (Operation &op : body.without_terminator()) {
    int64_t a = getContractInt<PDDialect::OpIdAttrHelper>(&op)
                    ? positionOf(&op)
                    : -1;
    if (a < 0)
      continue;
    for (Value v : op.getResults()) {
      int64_t last = a;
      for (Operation *user : v.getUsers())
        last = std::max(last, positionOf(user));
      if (last > a) {
        delta[a + 1] += getTensorBytes(v.getType());
        delta[last + 1] -= getTensorBytes(v.getType());
      }
    }
  }
  chain.crossingBytes.assign(n + 1, 0);
  for (int64_t c = 1, sum = 0; c < n; ++c)
    chain.crossingBytes[c] = sum += delta[c];
  return chain;
}

std::vector<int64_t> mlir::pd::splitOpChain(const OpChain &chain,
                                            int64_t stages,
                                            const DeviceSpec &spec,
                                            int64_t replicas) {
  int64_t n = chain.opIds.size();
  if (stages <= 1 || n < stages)
    return {};
  // Candidate cut positions: all of them, or evenly spaced ones for long
  // chains (the DP is quadratic in their number).
  constexpr int64_t kMaxCandidates = 2048;
  std::vector<int64_t> cand;
  int64_t step = std::max<int64_t>(1, n / kMaxCandidates);
  for (int64_t c = 0; c < n; c += step)
    cand.push_back(c);
  cand.push_back(n);
  int64_t m = cand.size();
  std::vector<double> prefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + chain.seconds[i];
  // Sending a boundary's activations and receiving their gradients.
  std::vector<double> comm(m, 0);
  for (int64_t c = 1; c + 1 < m; ++c)
    comm[c] = 2 * spec.transferSeconds(chain.crossingBytes[cand[c]], 0,
                                       replicas);
  auto cost = [&](int64_t i, int64_t j) {
    return prefix[cand[j]] - prefix[cand[i]] + comm[i] + comm[j];
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> f(stages + 1, std::vector<double>(m, inf));
  std::vector<std::vector<int64_t>> from(stages + 1,
                                         std::vector<int64_t>(m, -1));
  for (int64_t j = 1; j < m; ++j)
    f[1][j] = cost(0, j);
  for (int64_t k = 2; k <= stages; ++k)
    for (int64_t j = k - 1; j < m; ++j)
      for (int64_t i = k - 2; i < j; ++i) {
        double v = std::max(f[k - 1][i], cost(i, j));
        if (v < f[k][j]) {
          f[k][j] = v;
          from[k][j] = i;
        }
      }
  std::vector<int64_t> cuts;
  for (int64_t k = stages, j = m - 1; k > 1; --k) {
    j = from[k][j];
    cuts.push_back(chain.opIds[cand[j]]);
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}
