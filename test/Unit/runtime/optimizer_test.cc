//===- optimizer_test.cc - Optimizer updates against closed forms ------------===//
//
// Three steps of sgd, momentum, adam (with and without L2 weight decay) and
// adamw, in place and out of place, compared with closed-form results.
//
//===----------------------------------------------------------------------===//

#include "exec/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace pdrt;

namespace {

OptimizerConfig config(OptimizerKind kind, double lr, double wd = 0.0) {
  OptimizerConfig c;
  c.kind = kind;
  c.lr = lr;
  c.weightDecay = wd;
  return c;
}

const float kW0[] = {1.0f, -2.0f, 0.5f};
const float kG[3][3] = {{0.1f, 0.2f, -0.3f}, {0.4f, -0.1f, 0.2f}, {-0.2f, 0.3f, 0.1f}};

/// Runs three steps with gradients kG (in place); returns the weights.
std::vector<float> threeSteps(const OptimizerConfig &c, const float grads[3][3]) {
  std::vector<float> w(kW0, kW0 + 3), s1(3, 0.0f), s2(3, 0.0f);
  for (int s = 0; s < 3; ++s)
    optimizerStep(c, w.data(), w.data(), grads[s], s1.data(), s2.data(), 3, s + 1);
  return w;
}

TEST(Optimizer, SGD) {
  std::vector<float> w = threeSteps(config(OptimizerKind::SGD, 0.1), kG);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(w[i], kW0[i] - 0.1 * (kG[0][i] + kG[1][i] + kG[2][i]), 1e-6);
}

TEST(Optimizer, MomentumStartsWithVelocityEqualToGradient) {
  std::vector<float> w = threeSteps(config(OptimizerKind::Momentum, 0.1), kG);
  const double mu = 0.9;
  for (int i = 0; i < 3; ++i) {
    double v1 = kG[0][i], v2 = mu * v1 + kG[1][i], v3 = mu * v2 + kG[2][i];
    EXPECT_NEAR(w[i], kW0[i] - 0.1 * (v1 + v2 + v3), 1e-6);
  }
}

TEST(Optimizer, AdamWithConstantGradientStepsByLrTimesSign) {
  // With a constant g, bias correction gives mhat = g and vhat = g^2, so
  // every step moves by lr * g / (|g| + eps).
  const float g[3][3] = {{0.5f, -0.25f, 2.0f}, {0.5f, -0.25f, 2.0f}, {0.5f, -0.25f, 2.0f}};
  std::vector<float> w = threeSteps(config(OptimizerKind::Adam, 0.01), g);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(w[i], kW0[i] - 3 * 0.01 * g[0][i] / (std::fabs(g[0][i]) + 1e-8), 1e-6);
}

/// Double-precision PyTorch Adam/AdamW for three steps of kG.
std::vector<double> adamReference(bool decoupled, double lr, double wd) {
  std::vector<double> out;
  for (int i = 0; i < 3; ++i) {
    double w = kW0[i], m1 = 0, m2 = 0;
    for (int s = 1; s <= 3; ++s) {
      double g = kG[s - 1][i];
      if (decoupled)
        w -= lr * wd * w;
      else
        g += wd * w;
      m1 = 0.9 * m1 + 0.1 * g;
      m2 = 0.999 * m2 + 0.001 * g * g;
      double mhat = m1 / (1 - std::pow(0.9, s)), vhat = m2 / (1 - std::pow(0.999, s));
      w -= lr * mhat / (std::sqrt(vhat) + 1e-8);
    }
    out.push_back(w);
  }
  return out;
}

TEST(Optimizer, AdamWithL2AndAdamWDecoupled) {
  std::vector<float> adam = threeSteps(config(OptimizerKind::Adam, 0.01, 0.05), kG);
  std::vector<float> adamw = threeSteps(config(OptimizerKind::AdamW, 0.01, 0.05), kG);
  std::vector<double> wantAdam = adamReference(false, 0.01, 0.05);
  std::vector<double> wantAdamW = adamReference(true, 0.01, 0.05);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(adam[i], wantAdam[i], 1e-6);
    EXPECT_NEAR(adamw[i], wantAdamW[i], 1e-6);
  }
  EXPECT_NE(adam[0], adamw[0]);
}

TEST(Optimizer, OutOfPlaceLeavesSourceVersion) {
  OptimizerConfig c = config(OptimizerKind::Momentum, 0.5);
  std::vector<float> w0(kW0, kW0 + 3), w1(3, 0.0f), v(3, 0.0f);
  optimizerStep(c, w0.data(), w1.data(), kG[0], v.data(), nullptr, 3, 1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(w0[i], kW0[i]);
    EXPECT_NEAR(w1[i], kW0[i] - 0.5 * kG[0][i], 1e-6);
  }
}

TEST(Optimizer, ApplyUsesManifestOffsets) {
  Manifest m;
  m.optimizer = config(OptimizerKind::Adam, 0.01);
  ParamInfo p;
  p.name = "p";
  p.shape = {3};
  p.numel = 3;
  p.offset = 16;
  p.gradOffset = 4;
  p.optimizerOffset = 8;
  m.params.push_back(p);
  std::vector<float> w(8, 0.0f), g(4, 0.0f), opt(8, 0.0f);
  for (int i = 0; i < 3; ++i) {
    w[4 + i] = kW0[i];
    g[1 + i] = 0.5f;
  }
  applyOptimizer(m, m.optimizer, (const char *)w.data(), (char *)w.data(),
                 (const char *)g.data(), (char *)opt.data(), 1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(w[4 + i], kW0[i] - 0.01, 1e-6);
    EXPECT_NEAR(opt[2 + i], 0.05f, 1e-7);         // first moment
    EXPECT_NEAR(opt[5 + i], 0.001f * 0.25f, 1e-9); // second moment after it
  }
}

} // namespace
