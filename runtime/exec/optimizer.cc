//===- optimizer.cc - Optimizer update rules ----------------------------------===//
//
// sgd: w -= lr*g. momentum: v = mu*v + g; w -= lr*v. adam: moments, bias
// correction with the 1-based step, w -= lr*mhat/(sqrt(vhat)+eps), with L2
// weight decay folded into g; adamw scales w by (1 - lr*wd) first. Weight decay
// for sgd/momentum follows PyTorch SGD (g += wd*w); every decay term is
// skipped when wd is 0, as PyTorch does.
//
//===----------------------------------------------------------------------===//

#include "optimizer.h"

#include <cmath>

namespace pdrt {

namespace {

void sgdStep(const OptimizerConfig &c, const float *wIn, float *wOut,
             const float *g, float *v, int64_t n, bool momentum) {
  const float lr = (float)c.lr, wd = (float)c.weightDecay, mu = (float)c.momentum;
  for (int64_t i = 0; i < n; ++i) {
    float w = wIn[i], gi = g[i];
    if (wd != 0.0f) // PyTorch skips the term at 0 (0*inf would be NaN).
      gi += wd * w;
    if (momentum) {
      v[i] = mu * v[i] + gi;
      gi = v[i];
    }
    wOut[i] = w - lr * gi;
  }
}

void adamStep(const OptimizerConfig &c, const float *wIn, float *wOut,
              const float *g, float *m1, float *m2, int64_t n, int64_t step,
              bool decoupled) {
  // Scalars are formed in double and rounded once, as PyTorch does.
  const float b1 = (float)c.beta1, b2 = (float)c.beta2, eps = (float)c.eps;
  const float oneMinusB1 = (float)(1.0 - c.beta1), oneMinusB2 = (float)(1.0 - c.beta2);
  const float wd = (float)c.weightDecay;
  const double bc1 = 1.0 - std::pow(c.beta1, (double)step);
  const double bc2 = 1.0 - std::pow(c.beta2, (double)step);
  const float sqrtBc2 = (float)std::sqrt(bc2), stepSize = (float)(c.lr / bc1);
  const float keep = (float)(1.0 - c.lr * c.weightDecay); // AdamW: w *= keep
  const bool decay = c.weightDecay != 0.0;
  for (int64_t i = 0; i < n; ++i) {
    float w = wIn[i], gi = g[i];
    if (decoupled && decay)
      w *= keep;
    else if (decay)
      gi += wd * w;
    m1[i] = b1 * m1[i] + oneMinusB1 * gi;
    m2[i] = b2 * m2[i] + oneMinusB2 * gi * gi;
    float denom = std::sqrt(m2[i]) / sqrtBc2 + eps;
    wOut[i] = w - stepSize * m1[i] / denom;
  }
}

} // namespace

void optimizerStep(const OptimizerConfig &cfg, const float *wIn, float *wOut,
                   const float *g, float *s1, float *s2, int64_t n,
                   int64_t step) {
  switch (cfg.kind) {
  case OptimizerKind::SGD:
    return sgdStep(cfg, wIn, wOut, g, nullptr, n, false);
  case OptimizerKind::Momentum:
    return sgdStep(cfg, wIn, wOut, g, s1, n, true);
  case OptimizerKind::Adam:
    return adamStep(cfg, wIn, wOut, g, s1, s2, n, step, false);
  case OptimizerKind::AdamW:
    return adamStep(cfg, wIn, wOut, g, s1, s2, n, step, true);
  }
}

void applyOptimizer(const Manifest &m, const OptimizerConfig &cfg,
                    const char *wIn, char *wOut, const char *grads, char *opt,
                    int64_t step) {
  for (const ParamInfo &p : m.params) {
    float *s1 = reinterpret_cast<float *>(opt + p.optimizerOffset);
    optimizerStep(cfg, reinterpret_cast<const float *>(wIn + p.offset),
                  reinterpret_cast<float *>(wOut + p.offset),
                  reinterpret_cast<const float *>(grads + p.gradOffset), s1,
                  s1 + p.numel, p.numel, step);
  }
}

} // namespace pdrt
