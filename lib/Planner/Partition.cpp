//===- Partition.cpp - Where the pipeline is cut --------------------------===//
//
// f[k][j] = min over i < j of max(f[k-1][i], cost_k(i, j)), where
// cost_k(i, j) is the time of compute ops [i, j) on stage k (their prices
// times the stage's time scale) plus the transfers at cuts i and j.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/Partition.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pd;
using llvm::ArrayRef;

namespace {

/// The chain's prefix costs and boundary transfers, and the stage cost.
struct ChainCosts {
  const OpChain &chain;
  const DeviceSpec &spec;
  int64_t replicas;
  ArrayRef<double> timeScale;
  std::vector<double> prefix;

  ChainCosts(const OpChain &chain, const DeviceSpec &spec, int64_t replicas,
             ArrayRef<double> timeScale)
      : chain(chain), spec(spec), replicas(replicas), timeScale(timeScale),
        prefix(chain.opIds.size() + 1, 0) {
    for (size_t i = 0; i < chain.seconds.size(); ++i)
      prefix[i + 1] = prefix[i] + chain.seconds[i];
  }
  int64_t size() const { return chain.opIds.size(); }
  /// Sending the activations crossing a cut before position p and
  /// receiving their gradients (none at the ends); infinite where a
  /// forward value would flow back (OpChain::flowsBack).
  double comm(int64_t p) const {
    if (p <= 0 || p >= size())
      return 0;
    if (!chain.flowsBack.empty() && chain.flowsBack[p])
      return std::numeric_limits<double>::infinity();
    return 2 * spec.transferSeconds(chain.crossingBytes[p], 0, replicas);
  }
  /// Stage k's multiplier of its ops' prices.
  double scale(int64_t k) const {
    return timeScale.empty() ? 1.0 : timeScale[k];
  }
  /// Stage k of positions [i, j).
  double stage(int64_t k, int64_t i, int64_t j) const {
    return scale(k) * (prefix[j] - prefix[i]) + comm(i) + comm(j);
  }
};

/// Candidate cut positions: all of them, or one per window of `step`
/// positions for long chains, the one with the fewest crossing bytes.
std::vector<int64_t> candidates(const ChainCosts &c, int64_t maxCandidates,
                                int64_t &step) {
  int64_t n = c.size();
  step = std::max<int64_t>(1, (n + maxCandidates - 1) / maxCandidates);
  std::vector<int64_t> cand = {0};
  for (int64_t w = step; w < n; w += step) {
    int64_t best = w;
    for (int64_t p = w; p < std::min(n, w + step); ++p)
      if (c.chain.crossingBytes[p] < c.chain.crossingBytes[best])
        best = p;
    cand.push_back(best);
  }
  cand.push_back(n);
  return cand;
}

/// f[k][j] = min over i < j of max(f[k-1][i], stage(i, j)) over the
/// candidates; returns the candidate indices starting stages 2..d.
std::vector<int64_t> splitCandidates(const ChainCosts &c,
                                     const std::vector<int64_t> &cand,
                                     int64_t stages) {
  int64_t m = cand.size();
  std::vector<double> at(m), comm(m);
  for (int64_t i = 0; i < m; ++i) {
    at[i] = c.prefix[cand[i]];
    comm[i] = c.comm(cand[i]);
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> f(stages + 1, std::vector<double>(m, inf));
  std::vector<std::vector<int64_t>> from(stages + 1,
                                         std::vector<int64_t>(m, -1));
  for (int64_t j = 1; j < m; ++j)
    f[1][j] = c.scale(0) * (at[j] - at[0]) + comm[0] + comm[j];
  // Four independent minima keep the inner loop fast; the first i reaching
  // the minimum is the one kept.
  for (int64_t k = 2; k <= stages; ++k) {
    const double *prev = f[k - 1].data();
    double scale = c.scale(k - 1);
    for (int64_t j = k - 1; j < m; ++j) {
      double pj = at[j], cj = comm[j];
      auto value = [&](int64_t i) {
        return std::max(prev[i], scale * (pj - at[i]) + comm[i] + cj);
      };
      int64_t lo = k - 2, i = lo;
      double b[4] = {inf, inf, inf, inf};
      for (; i + 4 <= j; i += 4)
        for (int l = 0; l < 4; ++l)
          b[l] = std::min(b[l], value(i + l));
      for (; i < j; ++i)
        b[0] = std::min(b[0], value(i));
      double best = std::min(std::min(b[0], b[1]), std::min(b[2], b[3]));
      f[k][j] = best;
      for (i = lo; i < j; ++i)
        if (value(i) == best) {
          from[k][j] = i;
          break;
        }
    }
  }
  std::vector<int64_t> cuts;
  for (int64_t k = stages, j = m - 1; k > 1; --k) {
    j = from[k][j];
    cuts.push_back(j);
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

/// The exact split with each cut within `radius` positions of the coarse
/// one: the same dynamic programming over those bands of the full chain.
void refine(const ChainCosts &c, std::vector<int64_t> &cuts, int64_t radius) {
  int64_t d = cuts.size() + 1, n = c.size();
  // band[k]: the positions stage k may start at (band[d] = {n}).
  std::vector<std::vector<int64_t>> band(d + 1);
  band[0] = {0};
  for (int64_t k = 1; k < d; ++k)
    for (int64_t p = std::max<int64_t>(1, cuts[k - 1] - radius);
         p <= std::min<int64_t>(n - 1, cuts[k - 1] + radius); ++p)
      band[k].push_back(p);
  band[d] = {n};
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> f(d + 1);
  std::vector<std::vector<int64_t>> from(d + 1);
  f[0] = {0};
  for (int64_t k = 1; k <= d; ++k) {
    f[k].assign(band[k].size(), inf);
    from[k].assign(band[k].size(), -1);
    for (size_t j = 0; j < band[k].size(); ++j)
      for (size_t i = 0; i < band[k - 1].size(); ++i) {
        if (band[k - 1][i] >= band[k][j] || f[k - 1][i] == inf)
          continue;
        double v =
            std::max(f[k - 1][i], c.stage(k - 1, band[k - 1][i], band[k][j]));
        if (v < f[k][j]) {
          f[k][j] = v;
          from[k][j] = i;
        }
      }
  }
  if (f[d][0] == inf)
    return;
  for (int64_t k = d, j = 0; k > 1; --k) {
    j = from[k][j];
    cuts[k - 2] = band[k - 1][j];
  }
}

} // namespace

std::vector<int64_t> mlir::pd::splitOpChain(const OpChain &chain,
                                            int64_t stages,
                                            const DeviceSpec &spec,
                                            int64_t replicas,
                                            ArrayRef<double> timeScale) {
  int64_t n = chain.opIds.size();
  if (stages <= 1 || n < stages)
    return {};
  if ((int64_t)timeScale.size() != stages)
    timeScale = {};
  ChainCosts costs(chain, spec, replicas, timeScale);
  // The DP is quadratic in the candidates and linear in the stages: about
  // 64M steps at most, then the cuts are refined on the full chain.
  int64_t maxCandidates = std::clamp<int64_t>(
      (int64_t)std::sqrt(64e6 / double(stages)), 256, 2048);
  int64_t step = 1;
  std::vector<int64_t> cand = candidates(costs, maxCandidates, step);
  if ((int64_t)cand.size() - 1 < stages) {
    step = 1;
    cand.resize(n + 1);
    for (int64_t p = 0; p <= n; ++p)
      cand[p] = p;
  }
  std::vector<int64_t> cuts;
  for (int64_t j : splitCandidates(costs, cand, stages))
    cuts.push_back(cand[j]);
  if (step > 1)
    refine(costs, cuts, step);
  std::vector<int64_t> ids;
  for (int64_t p : cuts)
    ids.push_back(chain.opIds[p]);
  return ids;
}
