//===- kernels_test.cc - CPU kernels against naive references ----------------===//
//
// pdrt_matmul (all transpose combinations, alpha/beta), pdrt_binary with
// broadcast descriptors (NaN-propagating min/max included) and the min/max
// gradient pdrt_minmax_grad, pdrt_sum_to, the pointwise kernels, and
// softmax cross-entropy with its gradient checked by finite differences.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_numerics.h"

#include "random_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using pdtest::randomVector;

TEST(Matmul, AllTransposeCombinationsWithAlphaBeta) {
  const int64_t m = 5, n = 7, k = 3;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<float> a = randomVector(m * k, 1), b = randomVector(k * n, 2);
      std::vector<float> c = randomVector(m * n, 3), want = c;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p)
            s += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
          want[i * n + j] = 1.5f * (float)s + 0.5f * want[i * n + j];
        }
      pdrt_matmul(nullptr, a.data(), b.data(), c.data(), m, n, k, ta, tb, 1.5f, 0.5f);
      for (int64_t i = 0; i < m * n; ++i)
        EXPECT_NEAR(c[i], want[i], 1e-5) << "ta=" << ta << " tb=" << tb;
    }
  }
}

TEST(Matmul, EmptyInnerDimensionScalesC) {
  std::vector<float> c = {1, 2, 3, 4};
  pdrt_matmul(nullptr, nullptr, nullptr, c.data(), 2, 2, 0, 0, 0, 1.0f, 2.0f);
  EXPECT_EQ(c, (std::vector<float>{2, 4, 6, 8}));
}

TEST(Matmul, BiasEpilogueAddsBiasToEveryRow) {
  // Shapes past one GEMM block in k (the bias must be added once).
  const int64_t m = 37, n = 45, k = 600;
  for (int tb = 0; tb < 2; ++tb) {
    std::vector<float> a = randomVector(m * k, 6), b = randomVector(k * n, 7);
    std::vector<float> bias = randomVector(n, 8), c(m * n, 99.0f);
    pdrt_matmul_bias(nullptr, a.data(), b.data(), bias.data(), c.data(), m, n,
                     k, 0, tb, 0.5f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += (double)a[i * k + p] * (tb ? b[j * k + p] : b[p * n + j]);
        EXPECT_NEAR(c[i * n + j], 0.5 * s + bias[j], 2e-4)
            << "tb=" << tb << " at " << i << "," << j;
      }
  }
  // k == 0: the bias rows alone.
  std::vector<float> bias = {1, 2}, c(4, 7.0f);
  pdrt_matmul_bias(nullptr, nullptr, nullptr, bias.data(), c.data(), 2, 2, 0,
                   0, 0, 1.0f);
  EXPECT_EQ(c, (std::vector<float>{1, 2, 1, 2}));
}

TEST(Matmul, StridedBatchReadsAndWritesHeadsInPlace) {
  // Attention's shapes: Q, K, V stored [B, T, H, D]; S = Q K^T per (b, h)
  // read through strides, then O = S V written back as [B, T, H, D].
  const int64_t B = 2, T = 5, H = 3, D = 4;
  std::vector<float> q = randomVector(B * T * H * D, 9),
                     k = randomVector(B * T * H * D, 10),
                     v = randomVector(B * T * H * D, 11);
  auto at = [&](const std::vector<float> &x, int64_t b, int64_t t, int64_t h,
                int64_t d) { return x[((b * T + t) * H + h) * D + d]; };
  // S [B, H, T, T]: batch strides of Q/K (b: T*H*D, h: D), lda = ldb = H*D.
  std::vector<float> s(B * H * T * T, -1.0f);
  const int64_t sdesc[] = {2,     B, H,     T * H * D, D, T * H * D, D,
                           H * T * T, T * T, T,         T, D,         0,
                           1,     H * D, H * D, T,     PDRT_DENSE};
  pdrt_batch_matmul_strided(nullptr, q.data(), k.data(), s.data(), sdesc);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
          double want = 0;
          for (int64_t d = 0; d < D; ++d)
            want += (double)at(q, b, i, h, d) * at(k, b, j, h, d);
          EXPECT_NEAR(s[((b * H + h) * T + i) * T + j], want, 1e-5);
        }
  // O = S V stored as [B, T, H, D]: C batch strides (T*H*D, D), ldc = H*D.
  std::vector<float> o(B * T * H * D, -1.0f);
  const int64_t odesc[] = {2,     B, H,         H * T * T, T * T, T * H * D,
                           D,     T * H * D, D,         T,     D,     T,
                           0,     0,         T,         H * D, H * D,
                           PDRT_DENSE};
  pdrt_batch_matmul_strided(nullptr, s.data(), v.data(), o.data(), odesc);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t d = 0; d < D; ++d) {
          double want = 0;
          for (int64_t j = 0; j < T; ++j)
            want += (double)s[((b * H + h) * T + i) * T + j] * at(v, b, j, h, d);
          EXPECT_NEAR(at(o, b, i, h, d), want, 1e-5);
        }
}

TEST(Binary, BroadcastDescriptorsAllOps) {
  // a: [2, 1, 4], b: [3, 1] -> out [2, 3, 4].
  std::vector<float> a = randomVector(8, 4), b = randomVector(3, 5);
  for (float &x : b)
    x += 3.0f; // keep division well away from zero
  const int64_t desc[] = {3, 2, 3, 4, 4, 0, 1, 0, 1, 0};
  for (int op = PDRT_ADD; op <= PDRT_DIV; ++op) {
    std::vector<float> out(24);
    pdrt_binary(nullptr, op, a.data(), b.data(), out.data(), desc);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 4; ++l) {
          float x = a[i * 4 + l], y = b[j];
          float want = op == PDRT_ADD ? x + y : op == PDRT_SUB ? x - y
                     : op == PDRT_MUL ? x * y : x / y;
          EXPECT_FLOAT_EQ(out[(i * 3 + j) * 4 + l], want) << "op " << op;
        }
  }
}

TEST(Binary, TransposedStridesAndScalarRank) {
  // out[i, j] = a[j, i] * b[i, j] with a read through strides (1, 3).
  std::vector<float> a = randomVector(6, 6), b = randomVector(6, 7), out(6);
  const int64_t desc[] = {2, 2, 3, 1, 2, 3, 1};
  pdrt_binary(nullptr, PDRT_MUL, a.data(), b.data(), out.data(), desc);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_FLOAT_EQ(out[i * 3 + j], a[j * 2 + i] * b[i * 3 + j]);
  const int64_t scalar[] = {0};
  float x = 3, y = 4, z = 0;
  pdrt_binary(nullptr, PDRT_SUB, &x, &y, &z, scalar);
  EXPECT_EQ(z, -1.0f);
}

TEST(Binary, MinMaxBroadcastAndPropagateNaN) {
  // a [2, 3], b [3] broadcast over rows -> out [2, 3].
  const float nan = NAN;
  std::vector<float> a = {1, 5, nan, -2, 0, 3}, b = {2, 0, 1}, out(6);
  const int64_t desc[] = {2, 2, 3, 3, 1, 0, 1};
  pdrt_binary(nullptr, PDRT_BINARY_MIN, a.data(), b.data(), out.data(), desc);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], -2.0f);
  EXPECT_EQ(out[4], 0.0f);
  EXPECT_EQ(out[5], 1.0f);
  pdrt_binary(nullptr, PDRT_BINARY_MAX, a.data(), b.data(), out.data(), desc);
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], 5.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 2.0f);
  EXPECT_EQ(out[4], 0.0f);
  EXPECT_EQ(out[5], 3.0f);
  // A NaN in the second operand (a scalar broadcast to [3]) wins as well.
  std::vector<float> c = {-1, 0, 7}, r(3);
  const int64_t scalarB[] = {1, 3, 1, 0};
  for (int op : {PDRT_BINARY_MIN, PDRT_BINARY_MAX}) {
    pdrt_binary(nullptr, op, c.data(), &nan, r.data(), scalarB);
    for (float v : r)
      EXPECT_TRUE(std::isnan(v)) << "op " << op;
  }
  // And with the first operand the broadcast one (the sa == 0 loop).
  const int64_t scalarA[] = {1, 3, 0, 1};
  float two = 2;
  pdrt_binary(nullptr, PDRT_BINARY_MAX, &two, c.data(), r.data(), scalarA);
  EXPECT_EQ(r, (std::vector<float>{2, 2, 7}));
}

TEST(Binary, UnknownOpIsAContextError) {
  pdrt_ctx ctx;
  const int64_t scalar[] = {0};
  float x = 1, y = 2, z = -1;
  pdrt_binary(&ctx, PDRT_BINARY_MAX + 1, &x, &y, &z, scalar);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_binary: bad op 7 or rank 0");
  EXPECT_EQ(z, -1.0f);
}

TEST(MinMaxGrad, WinnerGetsDyTiesSplitBroadcastOperand) {
  // a [2, 3], b [3] broadcast over rows; d has the output's shape [2, 3].
  std::vector<float> a = {1, 3, 2, 4, 0, 2}, b = {2, 3, 1};
  std::vector<float> dy = {10, 20, 30, 40, 50, 60}, d(6, -1.0f);
  const int64_t desc[] = {2, 2, 3, 3, 1, 0, 1};
  auto grad = [&](int op, int which) {
    pdrt_minmax_grad(nullptr, op, dy.data(), a.data(), b.data(), d.data(), desc,
                     which);
    return d;
  };
  // max: a wins at (0,2), (1,0), (1,2); ties at (0,1); b wins at (0,0), (1,1).
  EXPECT_EQ(grad(PDRT_BINARY_MAX, 0), (std::vector<float>{0, 10, 30, 40, 0, 60}));
  EXPECT_EQ(grad(PDRT_BINARY_MAX, 1), (std::vector<float>{10, 10, 0, 0, 50, 0}));
  // min: the other way round, ties still split.
  EXPECT_EQ(grad(PDRT_BINARY_MIN, 0), (std::vector<float>{10, 10, 0, 0, 50, 0}));
  EXPECT_EQ(grad(PDRT_BINARY_MIN, 1), (std::vector<float>{0, 10, 30, 40, 0, 60}));
}

TEST(MinMaxGrad, StridedOperandsAndNaNAsTorch) {
  // out[i, j] = max(a[j, i], b) with a read transposed and b a scalar; a
  // NaN pair passes dy to both operands (torch's derivative formula).
  std::vector<float> a = {1, NAN, 5, 0}, dy = {1, 2, 3, 4}, da(4), db(4);
  float b = 1;
  const int64_t desc[] = {2, 2, 2, 1, 2, 0, 0};
  pdrt_minmax_grad(nullptr, PDRT_BINARY_MAX, dy.data(), a.data(), &b, da.data(),
                   desc, 0);
  pdrt_minmax_grad(nullptr, PDRT_BINARY_MAX, dy.data(), a.data(), &b, db.data(),
                   desc, 1);
  // Elements in output order: a = 1 (tie), 5, NaN, 0.
  EXPECT_EQ(da, (std::vector<float>{0.5f, 2, 3, 0}));
  EXPECT_EQ(db, (std::vector<float>{0.5f, 0, 3, 4}));
}

TEST(MinMaxGrad, BadOpOrOperandIsAContextError) {
  const int64_t scalar[] = {0};
  float dy = 1, a = 1, b = 2, d = -1;
  pdrt_ctx ctx;
  pdrt_minmax_grad(&ctx, PDRT_ADD, &dy, &a, &b, &d, scalar, 0);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error,
            "pdrt_minmax_grad: op 0 is not PDRT_BINARY_MIN or PDRT_BINARY_MAX");
  pdrt_ctx ctx2;
  pdrt_minmax_grad(&ctx2, PDRT_BINARY_MIN, &dy, &a, &b, &d, scalar, 2);
  ASSERT_TRUE(ctx2.failed);
  EXPECT_EQ(ctx2.error, "pdrt_minmax_grad: operand 2 is not 0 or 1");
  pdrt_ctx ctx3;
  const int64_t deep[] = {9};
  pdrt_minmax_grad(&ctx3, PDRT_BINARY_MIN, &dy, &a, &b, &d, deep, 0);
  ASSERT_TRUE(ctx3.failed);
  EXPECT_EQ(ctx3.error, "pdrt_minmax_grad: bad rank 9");
  EXPECT_EQ(d, -1.0f);
}

TEST(Numerics, MinMaxScalarRules) {
  EXPECT_EQ(pdrt_binary_apply(PDRT_BINARY_MIN, -1.0f, 2.0f), -1.0f);
  EXPECT_EQ(pdrt_binary_apply(PDRT_BINARY_MAX, -1.0f, 2.0f), 2.0f);
  EXPECT_TRUE(std::isnan(pdrt_min_nan(NAN, 1.0f)));
  EXPECT_TRUE(std::isnan(pdrt_min_nan(1.0f, NAN)));
  EXPECT_TRUE(std::isnan(pdrt_max_nan(NAN, 1.0f)));
  EXPECT_TRUE(std::isnan(pdrt_max_nan(1.0f, NAN)));
  EXPECT_EQ(pdrt_minmax_grad_share(1, 3.0f, 2.0f), 1.0f);
  EXPECT_EQ(pdrt_minmax_grad_share(1, 2.0f, 3.0f), 0.0f);
  EXPECT_EQ(pdrt_minmax_grad_share(0, 2.0f, 3.0f), 1.0f);
  EXPECT_EQ(pdrt_minmax_grad_share(0, 2.0f, 2.0f), 0.5f);
}

TEST(Numerics, DescriptorOffsets) {
  const int64_t desc[] = {3, 2, 3, 4, 4, 0, 1, 0, 1, 0};
  int64_t oa, ob;
  pdrt_desc_offsets(desc, (1 * 3 + 2) * 4 + 3, &oa, &ob);
  EXPECT_EQ(oa, 1 * 4 + 3);
  EXPECT_EQ(ob, 2);
  EXPECT_EQ(pdrt_desc_numel(desc), 24);
}

TEST(SumTo, ReducesBroadcastDimensions) {
  std::vector<float> x = randomVector(24, 8); // [2, 3, 4]
  std::vector<float> rows(3, -1.0f), cols(4, -1.0f);
  const int64_t toRows[] = {3, 2, 3, 4, 0, 1, 0}; // -> [3, 1]
  const int64_t toCols[] = {3, 2, 3, 4, 0, 0, 1}; // -> [1, 4]
  pdrt_sum_to(nullptr, x.data(), rows.data(), 3, toRows);
  pdrt_sum_to(nullptr, x.data(), cols.data(), 4, toCols);
  for (int j = 0; j < 3; ++j) {
    double s = 0;
    for (int i = 0; i < 2; ++i)
      for (int l = 0; l < 4; ++l)
        s += x[(i * 3 + j) * 4 + l];
    EXPECT_NEAR(rows[j], s, 1e-5);
  }
  for (int l = 0; l < 4; ++l) {
    double s = 0;
    for (int i = 0; i < 6; ++i)
      s += x[i * 4 + l];
    EXPECT_NEAR(cols[l], s, 1e-5);
  }
}

TEST(Pointwise, ReluScaleAccumulateCopy) {
  std::vector<float> x = {-1, 0, 2, -3}, y(4), dx(4), dy = {1, 2, 3, 4};
  pdrt_relu(nullptr, x.data(), y.data(), 4);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 2, 0}));
  pdrt_relu_grad(nullptr, dy.data(), y.data(), dx.data(), 4);
  EXPECT_EQ(dx, (std::vector<float>{0, 0, 3, 0}));
  pdrt_scale(nullptr, dy.data(), y.data(), 4, -2.0f);
  EXPECT_EQ(y, (std::vector<float>{-2, -4, -6, -8}));
  pdrt_accumulate(nullptr, dy.data(), y.data(), 4);
  EXPECT_EQ(y, (std::vector<float>{-1, -2, -3, -4}));
  pdrt_copy(nullptr, dy.data(), y.data(), 4 * sizeof(float));
  EXPECT_EQ(y, dy);
}

float xentLoss(const std::vector<float> &logits, const std::vector<int64_t> &labels,
               int64_t c) {
  float loss = -1;
  pdrt_softmax_xent(nullptr, logits.data(), labels.data(), &loss,
                    (int64_t)labels.size(), c, -100);
  return loss;
}

TEST(SoftmaxXent, LossMatchesNaiveAndIgnoresRows) {
  std::vector<float> logits = randomVector(12, 9);
  logits[0] = 80.0f; // stability: exp(80) overflows float without max-subtract
  std::vector<int64_t> labels = {0, -100, 3};
  double want = 0;
  for (int r : {0, 2}) {
    double mx = -1e30, s = 0;
    for (int j = 0; j < 4; ++j)
      mx = std::max(mx, (double)logits[r * 4 + j]);
    for (int j = 0; j < 4; ++j)
      s += std::exp(logits[r * 4 + j] - mx);
    want += mx + std::log(s) - logits[r * 4 + labels[r]];
  }
  EXPECT_NEAR(xentLoss(logits, labels, 4), want / 2, 1e-5);
  EXPECT_EQ(xentLoss(logits, {-100, -100, -100}, 4), 0.0f);
}

TEST(SoftmaxXent, GradientMatchesFiniteDifferences) {
  std::vector<float> logits = randomVector(15, 10);
  std::vector<int64_t> labels = {2, -100, 0}; // 3 rows of 5 classes
  std::vector<float> g3(15, 99.0f);
  float dloss = 0.7f;
  pdrt_softmax_xent_grad(nullptr, &dloss, logits.data(), labels.data(), g3.data(),
                         3, 5, -100);
  const float h = 1e-2f;
  for (int i = 0; i < 15; ++i) {
    std::vector<float> p = logits, q = logits;
    p[i] += h;
    q[i] -= h;
    float fd = dloss * (xentLoss(p, labels, 5) - xentLoss(q, labels, 5)) / (2 * h);
    EXPECT_NEAR(g3[i], fd, 2e-3) << "element " << i;
  }
  for (int j = 5; j < 10; ++j)
    EXPECT_EQ(g3[j], 0.0f); // ignored row
}

TEST(SoftmaxXent, PerRowFormsAgreeWithTheMean) {
  // reduction "none": each counted row's loss, 0 for ignored rows; their
  // mean over counted rows is the mean form, and the per-row gradient with
  // dloss[r] = d / K is the mean form's gradient with dloss = d.
  std::vector<float> logits = randomVector(15, 11);
  std::vector<int64_t> labels = {4, -100, 1};
  std::vector<float> rows(3, 9.0f);
  pdrt_softmax_xent_rows(nullptr, logits.data(), labels.data(), rows.data(), 3, 5,
                         -100);
  EXPECT_EQ(rows[1], 0.0f);
  EXPECT_NEAR((rows[0] + rows[2]) / 2, xentLoss(logits, labels, 5), 1e-6);
  float d = 0.6f;
  std::vector<float> dRows = {d / 2, 5.0f, d / 2}, g1(15), g2(15);
  pdrt_softmax_xent_rows_grad(nullptr, dRows.data(), logits.data(), labels.data(),
                              g1.data(), 3, 5, -100);
  pdrt_softmax_xent_grad(nullptr, &d, logits.data(), labels.data(), g2.data(), 3, 5,
                         -100);
  for (int i = 0; i < 15; ++i)
    EXPECT_NEAR(g1[i], g2[i], 1e-7) << "element " << i;
}

TEST(SoftmaxXent, WithGradIsBothKernelsBitForBit) {
  // The fused loss + seeded gradient (pd-fuse-cross-entropy-gradient) gives
  // the bits of pdrt_softmax_xent and of pdrt_softmax_xent_grad fed the
  // stage's seed, over rows longer than a chunk and an ignored row.
  const int64_t n = 5, c = 2500;
  std::vector<float> logits = randomVector(n * c, 12);
  for (float &v : logits)
    v *= 8.0f;
  std::vector<int64_t> labels = {7, -100, 2499, 0, 1024};
  pdrt::Manifest manifest;
  manifest.microbatches = 4;
  manifest.replicas = 2;
  pdrt_ctx ctx;
  ctx.manifest = &manifest;
  float seed = -1, loss = -1, fusedLoss = -2;
  pdrt_grad_seed(&ctx, &seed);
  EXPECT_EQ(seed, 0.125f);
  std::vector<float> grad(n * c, 9.0f), fusedGrad(n * c, 7.0f);
  pdrt_softmax_xent(&ctx, logits.data(), labels.data(), &loss, n, c, -100);
  pdrt_softmax_xent_grad(&ctx, &seed, logits.data(), labels.data(), grad.data(),
                         n, c, -100);
  pdrt_softmax_xent_with_grad(&ctx, logits.data(), labels.data(), &fusedLoss,
                              fusedGrad.data(), n, c, -100);
  ASSERT_FALSE(ctx.failed);
  EXPECT_EQ(fusedLoss, loss);
  for (int64_t i = 0; i < n * c; ++i)
    ASSERT_EQ(fusedGrad[i], grad[i]) << "element " << i;
  for (int64_t j = c; j < 2 * c; ++j)
    EXPECT_EQ(fusedGrad[j], 0.0f); // the ignored row
  // Without a stage (no manifest) the seed is 1.
  pdrt_softmax_xent_with_grad(nullptr, logits.data(), labels.data(), &fusedLoss,
                              fusedGrad.data(), n, c, -100);
  float one = 1.0f;
  pdrt_softmax_xent_grad(nullptr, &one, logits.data(), labels.data(), grad.data(),
                         n, c, -100);
  EXPECT_EQ(fusedLoss, loss);
  EXPECT_EQ(fusedGrad, grad);
  // In place (pd-allocate-buffers homes the logits in the gradient's stash
  // slot): the same loss and gradient bits, written over the logits.
  std::vector<float> inPlace = logits;
  float inPlaceLoss = -3;
  pdrt_softmax_xent_with_grad(nullptr, inPlace.data(), labels.data(),
                              &inPlaceLoss, inPlace.data(), n, c, -100);
  EXPECT_EQ(inPlaceLoss, loss);
  EXPECT_EQ(inPlace, grad);
}

TEST(SoftmaxXent, LossMatchesDoubleReferenceOnLongRows) {
  // The 16-lane double sum: vocabulary-sized rows against a float64 loss.
  const int64_t n = 3, c = 4099;
  std::vector<float> logits = randomVector(n * c, 13);
  for (float &v : logits)
    v *= 6.0f;
  std::vector<int64_t> labels = {4098, 17, 2048};
  double want = 0;
  for (int64_t r = 0; r < n; ++r) {
    double mx = -1e30, s = 0;
    for (int64_t j = 0; j < c; ++j)
      mx = std::max(mx, (double)logits[r * c + j]);
    for (int64_t j = 0; j < c; ++j)
      s += std::exp(logits[r * c + j] - mx);
    want += mx + std::log(s) - logits[r * c + labels[r]];
  }
  EXPECT_NEAR(xentLoss(logits, labels, c), want / n, 2e-6 * std::abs(want / n));
}

TEST(SoftmaxXent, LabelOutOfRangeIsStickyErrorNamingRow) {
  pdrt_ctx ctx;
  std::vector<float> logits(8, 0.0f);
  std::vector<int64_t> labels = {1, 4};
  float loss = -1;
  pdrt_softmax_xent(&ctx, logits.data(), labels.data(), &loss, 2, 4, -100);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "label 4 out of range [0, 4) in row 1 of the microbatch");
  EXPECT_EQ(loss, -1.0f);
  // Later kernels are skipped once the error is set.
  std::vector<float> y = {5};
  float x = -1;
  pdrt_relu(&ctx, &x, y.data(), 1);
  EXPECT_EQ(y[0], 5.0f);
}

} // namespace
