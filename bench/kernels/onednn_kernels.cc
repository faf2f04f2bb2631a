// Micro-benchmark: pdrt's own kernels against oneDNN's primitives for the
// ops the performance issue names besides the GEMM and GELU (their
// benchmarks are sgemm_libs, matmul_bias, gelu_epilogue and gelu_kernels):
// convolution (forward, input gradient, filter gradient), batch norm,
// max pooling, layer norm and softmax, single thread, warm caches, best of
// N calls, milliseconds per call.
//
// pdrt keeps every tensor in its plain row-major layout (NCHW, OIHW), so a
// oneDNN primitive can replace a pdrt kernel only through that layout.
// Convolutions: `im2col` is pdrt's own kernel (im2col + sgemm), `pdrt` what
// pdrt_conv2d runs (oneDNN's blocked primitive where conv_onednn.cc's
// preferOneDnn chose it from this benchmark, else im2col). Two oneDNN rows:
//   plain    the primitive created on the plain layouts (what a drop-in
//            replacement would run);
//   blocked  the primitive created with format `any` (oneDNN picks its
//            blocked layouts), timed with the reorders from and to the
//            plain layouts that pdrt's buffers would need around it.
// The primitive's implementation (impl_info_str) is printed beside it.
// Shapes: the examples/cnn model at bench/cnn_vs_torch.py's defaults
// (microbatch 32, channels 32, 64, 16 x 16 images, depthwise variant), a
// ResNet-18's convolutions at batch 8, the small and large benchmark GPTs'
// layer norms ([tokens, n_embd]) and attention softmaxes ([B H T, T]).
//
// Build and run: bench/kernels/run.sh onednn_kernels [conv|bn|pool|ln|softmax]
#include <dnnl.hpp>

#include "bench_timing.h"
#include "cpu/conv_onednn.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_conv_numerics.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace dnnl;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;
constexpr int kReps = 10;

AlignedVector randomVector(size_t n, unsigned seed) {
  AlignedVector v(n);
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float &x : v)
    x = normal(gen);
  return v;
}

double ms(const std::function<void()> &f, stream &s) {
  return 1e3 * seconds([&] {
    f();
    s.wait();
  }, kReps);
}

struct Runtime {
  engine eng{engine::kind::cpu, 0};
  stream st{eng};
};

/// A oneDNN memory in `want`'s layout fed from (or written back to) a plain
/// buffer: the reorder is empty when the layouts agree.
struct Staged {
  memory plain, inner;
  bool reorders = false;
  Staged(Runtime &rt, const memory::desc &plainDesc, const memory::desc &want,
         float *data)
      : plain(plainDesc, rt.eng, data) {
    reorders = want != plainDesc;
    inner = reorders ? memory(want, rt.eng) : plain;
  }
  void in(Runtime &rt) {
    if (reorders)
      reorder(plain, inner).execute(rt.st, plain, inner);
  }
  void out(Runtime &rt) {
    if (reorders)
      reorder(inner, plain).execute(rt.st, inner, plain);
  }
};

//===-- Convolution --------------------------------------------------------===//

struct ConvShape {
  const char *name;
  int64_t n, c, h, w, m, k, s, p, g;
  int64_t oh() const { return (h + 2 * p - k) / s + 1; }
  int64_t ow() const { return (w + 2 * p - k) / s + 1; }
};

struct ConvTimes {
  double fwd, bwdData, bwdWeights;
  std::string impl;
};

ConvTimes pdrtConv(const ConvShape &c, AlignedVector &x, AlignedVector &wt,
                   AlignedVector &b, AlignedVector &y,
                   AlignedVector &dy, AlignedVector &dx,
                   AlignedVector &dw, stream &st) {
  int64_t desc[PDRT_CONV_DESC_WORDS] = {c.n, c.c, c.h, c.w, c.m, c.k, c.k,
                                        c.oh(), c.ow(), c.s, c.s, c.p, c.p, c.p,
                                        c.p, 1, 1, c.g, 0};
  ConvTimes t;
  t.fwd = ms([&] { pdrt_conv2d(nullptr, x.data(), wt.data(), b.data(), y.data(), desc); }, st);
  t.bwdData = ms([&] {
    pdrt_conv2d_grad_input(nullptr, dy.data(), wt.data(), dx.data(), desc);
  }, st);
  t.bwdWeights = ms([&] {
    pdrt_conv2d_grad_filter(nullptr, dy.data(), x.data(), dw.data(), desc);
  }, st);
  return t;
}

ConvTimes onednnConv(Runtime &rt, const ConvShape &c, bool blocked,
                     AlignedVector &x, AlignedVector &wt,
                     AlignedVector &b, AlignedVector &y,
                     AlignedVector &dy, AlignedVector &dx,
                     AlignedVector &dw, AlignedVector &db) {
  memory::dims src{c.n, c.c, c.h, c.w}, dst{c.n, c.m, c.oh(), c.ow()};
  memory::dims wei = c.g > 1 ? memory::dims{c.g, c.m / c.g, c.c / c.g, c.k, c.k}
                             : memory::dims{c.m, c.c, c.k, c.k};
  memory::desc srcP(src, f32, tag::nchw), dstP(dst, f32, tag::nchw),
      weiP(wei, f32, c.g > 1 ? tag::goihw : tag::oihw), biasP({c.m}, f32, tag::a);
  memory::desc srcA = blocked ? memory::desc(src, f32, tag::any) : srcP;
  memory::desc dstA = blocked ? memory::desc(dst, f32, tag::any) : dstP;
  memory::desc weiA = blocked ? memory::desc(wei, f32, tag::any) : weiP;
  memory::dims strides{c.s, c.s}, dil{0, 0}, pad{c.p, c.p};
  auto fpd = convolution_forward::primitive_desc(
      convolution_forward::desc(prop_kind::forward_training,
                                algorithm::convolution_direct, srcA, weiA, biasP,
                                dstA, strides, dil, pad, pad),
      rt.eng);
  auto dpd = convolution_backward_data::primitive_desc(
      convolution_backward_data::desc(algorithm::convolution_direct, srcA, weiA,
                                      dstA, strides, dil, pad, pad),
      rt.eng, fpd);
  auto wpd = convolution_backward_weights::primitive_desc(
      convolution_backward_weights::desc(algorithm::convolution_direct, srcA,
                                         weiA, biasP, dstA, strides, dil, pad, pad),
      rt.eng, fpd);
  Staged sx(rt, srcP, fpd.src_desc(), x.data()), sw(rt, weiP, fpd.weights_desc(), wt.data()),
      sy(rt, dstP, fpd.dst_desc(), y.data());
  memory mb(biasP, rt.eng, b.data()), mdb(biasP, rt.eng, db.data());
  Staged sdy(rt, dstP, dpd.diff_dst_desc(), dy.data()),
      sdx(rt, srcP, dpd.diff_src_desc(), dx.data()),
      sdw(rt, weiP, wpd.diff_weights_desc(), dw.data()),
      sdyW(rt, dstP, wpd.diff_dst_desc(), dy.data()),
      sxW(rt, srcP, wpd.src_desc(), x.data()),
      swD(rt, weiP, dpd.weights_desc(), wt.data());
  convolution_forward fwd(fpd);
  convolution_backward_data bwdData(dpd);
  convolution_backward_weights bwdWeights(wpd);
  ConvTimes t;
  t.fwd = ms([&] {
    sx.in(rt);
    sw.in(rt);
    fwd.execute(rt.st, {{DNNL_ARG_SRC, sx.inner}, {DNNL_ARG_WEIGHTS, sw.inner},
                        {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, sy.inner}});
    sy.out(rt);
  }, rt.st);
  t.bwdData = ms([&] {
    sdy.in(rt);
    swD.in(rt);
    bwdData.execute(rt.st, {{DNNL_ARG_DIFF_DST, sdy.inner},
                            {DNNL_ARG_WEIGHTS, swD.inner},
                            {DNNL_ARG_DIFF_SRC, sdx.inner}});
    sdx.out(rt);
  }, rt.st);
  t.bwdWeights = ms([&] {
    sxW.in(rt);
    sdyW.in(rt);
    bwdWeights.execute(rt.st, {{DNNL_ARG_SRC, sxW.inner},
                               {DNNL_ARG_DIFF_DST, sdyW.inner},
                               {DNNL_ARG_DIFF_WEIGHTS, sdw.inner},
                               {DNNL_ARG_DIFF_BIAS, mdb}});
    sdw.out(rt);
  }, rt.st);
  t.impl = std::string(fpd.impl_info_str()) + " / " + dpd.impl_info_str() +
           " / " + wpd.impl_info_str();
  return t;
}

void benchConvolutions(Runtime &rt) {
  const ConvShape shapes[] = {
      {"cnn conv1 1->32 16x16", 32, 1, 16, 16, 32, 3, 1, 1, 1},
      {"cnn conv2 32->64 8x8", 32, 32, 8, 8, 64, 3, 1, 1, 1},
      {"cnn depthwise 32 8x8", 32, 32, 8, 8, 32, 3, 1, 1, 32},
      {"cnn pointwise 32->64 8x8", 32, 32, 8, 8, 64, 1, 1, 0, 1},
      {"resnet18 stem 3->64 7x7/2", 8, 3, 224, 224, 64, 7, 2, 3, 1},
      {"resnet18 64->64 56x56", 8, 64, 56, 56, 64, 3, 1, 1, 1},
      {"resnet18 64->128 3x3/2", 8, 64, 56, 56, 128, 3, 2, 1, 1},
      {"resnet18 128->128 28x28", 8, 128, 28, 28, 128, 3, 1, 1, 1},
      {"resnet18 256->256 14x14", 8, 256, 14, 14, 256, 3, 1, 1, 1},
      {"resnet18 512->512 7x7", 8, 512, 7, 7, 512, 3, 1, 1, 1},
  };
  std::printf("convolution (ms per call: forward / input gradient / filter "
              "gradient)\n");
  std::printf("%-28s %-8s %8s %8s %8s  %s\n", "shape", "kernel", "fwd", "bwd d",
              "bwd w", "implementation");
  for (const ConvShape &c : shapes) {
    size_t nx = c.n * c.c * c.h * c.w, ny = c.n * c.m * c.oh() * c.ow(),
           nw = c.m * (c.c / c.g) * c.k * c.k;
    auto x = randomVector(nx, 1), wt = randomVector(nw, 2), b = randomVector(c.m, 3),
         dy = randomVector(ny, 4);
    AlignedVector y(ny), dx(nx), dw(nw), db(c.m);
    auto print = [&](const char *kernel, const ConvTimes &t) {
      std::printf("%-28s %-8s %8.3f %8.3f %8.3f  %s\n", c.name, kernel, t.fwd,
                  t.bwdData, t.bwdWeights, t.impl.c_str());
    };
    pdrt::onednn::useOneDnn(false);
    print("im2col", pdrtConv(c, x, wt, b, y, dy, dx, dw, rt.st));
    pdrt::onednn::useOneDnn(true);
    print("pdrt", pdrtConv(c, x, wt, b, y, dy, dx, dw, rt.st));
    print("plain", onednnConv(rt, c, false, x, wt, b, y, dy, dx, dw, db));
    print("blocked", onednnConv(rt, c, true, x, wt, b, y, dy, dx, dw, db));
  }
}

//===-- Batch norm and max pooling -----------------------------------------===//

/// The buffers of a normalization (batch or layer norm) with scale and
/// shift: data-shaped x, y, dy, dx; per-channel g, b, dg, db; statistics.
struct NormBuffers {
  AlignedVector x, y, dy, dx, g, b, dg, db, mean, var;
  NormBuffers(int64_t n, int64_t channels, int64_t stats)
      : x(randomVector(n, 1)), y(n), dy(randomVector(n, 2)), dx(n),
        g(randomVector(channels, 3)), b(randomVector(channels, 4)), dg(channels),
        db(channels), mean(stats), var(stats) {}
};

/// Times a oneDNN normalization's forward (training: it writes the
/// statistics) and backward (reading them) and prints its row.
template <typename Fwd, typename Bwd>
void timeOneDnnNorm(Runtime &rt, const char *name, const typename Fwd::primitive_desc &fpd,
                    const typename Bwd::primitive_desc &bpd, const memory::desc &data,
                    const memory::desc &chan, const memory::desc &stat, NormBuffers &nb) {
  auto mem = [&](const memory::desc &d, AlignedVector &v) {
    return memory(d, rt.eng, v.data());
  };
  memory mx = mem(data, nb.x), my = mem(data, nb.y), mdy = mem(data, nb.dy),
         mdx = mem(data, nb.dx), mg = mem(chan, nb.g), mb = mem(chan, nb.b),
         mdg = mem(chan, nb.dg), mdb = mem(chan, nb.db), mmean = mem(stat, nb.mean),
         mvar = mem(stat, nb.var);
  Fwd fwd(fpd);
  Bwd bwd(bpd);
  double f = ms([&] {
    fwd.execute(rt.st, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_SCALE, mg}, {DNNL_ARG_SHIFT, mb},
                        {DNNL_ARG_DST, my}, {DNNL_ARG_MEAN, mmean},
                        {DNNL_ARG_VARIANCE, mvar}});
  }, rt.st);
  double bw = ms([&] {
    bwd.execute(rt.st, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DIFF_DST, mdy},
                        {DNNL_ARG_MEAN, mmean}, {DNNL_ARG_VARIANCE, mvar},
                        {DNNL_ARG_SCALE, mg}, {DNNL_ARG_SHIFT, mb},
                        {DNNL_ARG_DIFF_SRC, mdx}, {DNNL_ARG_DIFF_SCALE, mdg},
                        {DNNL_ARG_DIFF_SHIFT, mdb}});
  }, rt.st);
  std::printf("%-28s %-8s %8.3f %8.3f  %s / %s\n", name, "plain", f, bw,
              fpd.impl_info_str(), bpd.impl_info_str());
}

struct NormShape {
  const char *name;
  int64_t n, c, h, w;
};

void benchBatchNorm(Runtime &rt) {
  const NormShape shapes[] = {{"cnn bn1 32x32x16x16", 32, 32, 16, 16},
                              {"cnn bn2 32x64x8x8", 32, 64, 8, 8},
                              {"resnet18 bn 8x64x56x56", 8, 64, 56, 56},
                              {"resnet18 bn 8x256x14x14", 8, 256, 14, 14}};
  std::printf("\nbatch norm, training (ms per call: forward with the running "
              "statistics / backward)\n");
  std::printf("%-28s %-8s %8s %8s  %s\n", "shape", "kernel", "fwd", "bwd",
              "implementation");
  const float eps = 1e-5f;
  for (const NormShape &sh : shapes) {
    int64_t s = sh.h * sh.w, n = sh.n * sh.c * s;
    NormBuffers nb(n, sh.c, sh.c);
    AlignedVector rm(sh.c), rv(sh.c, 1.0f);
    double f = ms([&] {
      pdrt_batch_norm(nullptr, nb.x.data(), nb.g.data(), nb.b.data(), nb.y.data(), sh.n,
                      sh.c, s, eps);
      pdrt_batch_norm_running_stats(nullptr, nb.x.data(), rm.data(), rv.data(), sh.n,
                                    sh.c, s, 0.9f);
    }, rt.st);
    double bw = ms([&] {
      pdrt_batch_norm_grad(nullptr, nb.dy.data(), nb.x.data(), nb.g.data(), nb.dx.data(),
                           nb.dg.data(), nb.db.data(), sh.n, sh.c, s, eps);
    }, rt.st);
    std::printf("%-28s %-8s %8.3f %8.3f  %s\n", sh.name, "pdrt", f, bw, "");
    memory::desc data({sh.n, sh.c, sh.h, sh.w}, f32, tag::nchw), chan({sh.c}, f32, tag::a);
    auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
    auto fpd = batch_normalization_forward::primitive_desc(
        batch_normalization_forward::desc(prop_kind::forward_training, data, eps, flags),
        rt.eng);
    auto bpd = batch_normalization_backward::primitive_desc(
        batch_normalization_backward::desc(prop_kind::backward, data, data, eps, flags),
        rt.eng, fpd);
    // oneDNN returns the batch statistics; the running statistics' update
    // (one pass over c numbers) is left out of its time.
    timeOneDnnNorm<batch_normalization_forward, batch_normalization_backward>(
        rt, sh.name, fpd, bpd, data, chan, chan, nb);
  }
}

void benchMaxPool(Runtime &rt) {
  struct PoolShape {
    const char *name;
    int64_t n, c, h, w, k, s, p;
  };
  const PoolShape shapes[] = {{"cnn pool 32x32x16x16 2/2", 32, 32, 16, 16, 2, 2, 0},
                              {"cnn pool 32x64x8x8 2/2", 32, 64, 8, 8, 2, 2, 0},
                              {"resnet18 8x64x112x112 3/2", 8, 64, 112, 112, 3, 2, 1}};
  std::printf("\nmax pooling (ms per call: forward / backward)\n");
  std::printf("%-28s %-8s %8s %8s  %s\n", "shape", "kernel", "fwd", "bwd",
              "implementation");
  for (const PoolShape &sh : shapes) {
    int64_t oh = (sh.h + 2 * sh.p - sh.k) / sh.s + 1, ow = (sh.w + 2 * sh.p - sh.k) / sh.s + 1;
    int64_t nx = sh.n * sh.c * sh.h * sh.w, ny = sh.n * sh.c * oh * ow;
    auto x = randomVector(nx, 1), dy = randomVector(ny, 2);
    AlignedVector y(ny), dx(nx);
    int64_t desc[PDRT_CONV_DESC_WORDS] = {sh.n, sh.c, sh.h, sh.w, sh.c, sh.k, sh.k,
                                          oh, ow, sh.s, sh.s, sh.p, sh.p, sh.p,
                                          sh.p, 1, 1, sh.c, 0};
    double f = ms([&] { pdrt_max_pool2d(nullptr, x.data(), y.data(), desc); }, rt.st);
    double bw = ms([&] {
      pdrt_max_pool2d_grad(nullptr, dy.data(), x.data(), dx.data(), desc);
    }, rt.st);
    std::printf("%-28s %-8s %8.3f %8.3f  %s\n", sh.name, "pdrt", f, bw, "");
    memory::desc src({sh.n, sh.c, sh.h, sh.w}, f32, tag::nchw),
        dst({sh.n, sh.c, oh, ow}, f32, tag::nchw);
    memory::dims k{sh.k, sh.k}, st{sh.s, sh.s}, dil{0, 0}, pad{sh.p, sh.p};
    auto fpd = pooling_v2_forward::primitive_desc(
        pooling_v2_forward::desc(prop_kind::forward_training, algorithm::pooling_max,
                                 src, dst, st, k, dil, pad, pad),
        rt.eng);
    auto bpd = pooling_v2_backward::primitive_desc(
        pooling_v2_backward::desc(algorithm::pooling_max, src, dst, st, k, dil, pad, pad),
        rt.eng, fpd);
    memory mx(src, rt.eng, x.data()), my(dst, rt.eng, y.data()), mdy(dst, rt.eng, dy.data()),
        mdx(src, rt.eng, dx.data()), ws(fpd.workspace_desc(), rt.eng);
    pooling_v2_forward fwd(fpd);
    pooling_v2_backward bwd(bpd);
    f = ms([&] {
      fwd.execute(rt.st, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DST, my}, {DNNL_ARG_WORKSPACE, ws}});
    }, rt.st);
    bw = ms([&] {
      bwd.execute(rt.st, {{DNNL_ARG_DIFF_DST, mdy}, {DNNL_ARG_DIFF_SRC, mdx},
                          {DNNL_ARG_WORKSPACE, ws}});
    }, rt.st);
    std::printf("%-28s %-8s %8.3f %8.3f  %s / %s\n", sh.name, "plain", f, bw,
                fpd.impl_info_str(), bpd.impl_info_str());
  }
}

//===-- Layer norm and softmax ---------------------------------------------===//

void benchLayerNorm(Runtime &rt) {
  struct Rows {
    const char *name;
    int64_t rows, cols;
  };
  const Rows shapes[] = {{"small gpt 1024x256", 1024, 256}, {"large gpt 2048x512", 2048, 512}};
  std::printf("\nlayer norm (ms per call: forward / backward; pdrt recomputes "
              "the row statistics in the backward, oneDNN reads the forward's)\n");
  std::printf("%-28s %-8s %8s %8s  %s\n", "shape", "kernel", "fwd", "bwd",
              "implementation");
  const float eps = 1e-5f;
  for (const Rows &r : shapes) {
    NormBuffers nb(r.rows * r.cols, r.cols, r.rows);
    double f = ms([&] {
      pdrt_layer_norm(nullptr, nb.x.data(), nb.g.data(), nb.b.data(), nb.y.data(), r.rows,
                      r.cols, eps);
    }, rt.st);
    double bw = ms([&] {
      pdrt_layer_norm_grad(nullptr, nb.dy.data(), nb.x.data(), nb.g.data(), nullptr,
                           nb.dx.data(), nb.dg.data(), nb.db.data(), nullptr, r.rows, r.cols, eps);
    }, rt.st);
    std::printf("%-28s %-8s %8.3f %8.3f  %s\n", r.name, "pdrt", f, bw, "");
    memory::desc data({r.rows, r.cols}, f32, tag::ab), stat({r.rows}, f32, tag::a),
        chan({r.cols}, f32, tag::a);
    auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
    auto fpd = layer_normalization_forward::primitive_desc(
        layer_normalization_forward::desc(prop_kind::forward_training, data, stat, eps,
                                          flags),
        rt.eng);
    auto bpd = layer_normalization_backward::primitive_desc(
        layer_normalization_backward::desc(prop_kind::backward, data, data, stat, eps,
                                           flags),
        rt.eng, fpd);
    timeOneDnnNorm<layer_normalization_forward, layer_normalization_backward>(
        rt, r.name, fpd, bpd, data, chan, stat, nb);
  }
}

void benchSoftmax(Runtime &rt) {
  struct Rows {
    const char *name;
    int64_t rows, t;
  };
  const Rows shapes[] = {{"small gpt 8x4x128 rows, 128", 8 * 4 * 128, 128},
                         {"large gpt 8x8x256 rows, 256", 8 * 8 * 256, 256}};
  std::printf("\nattention softmax over rows (ms per call: forward / backward; "
              "pdrt causal: the fused scale + causal mask kernel the attention "
              "runs, which exponentiates a row's kept prefix only)\n");
  std::printf("%-28s %-12s %8s %8s  %s\n", "shape", "kernel", "fwd", "bwd",
              "implementation");
  for (const Rows &r : shapes) {
    int64_t n = r.rows * r.t;
    auto x = randomVector(n, 1), dy = randomVector(n, 2);
    AlignedVector y(n), dx(n);
    std::vector<uint8_t> causal(r.t * r.t);
    for (int64_t i = 0; i < r.t; ++i)
      for (int64_t j = 0; j < r.t; ++j)
        causal[i * r.t + j] = j <= i;
    double f = ms([&] { pdrt_softmax(nullptr, x.data(), y.data(), r.rows, r.t, 1, 0); }, rt.st);
    double bw = ms([&] {
      pdrt_softmax_grad(nullptr, dy.data(), y.data(), dx.data(), r.rows, r.t, 1, 0);
    }, rt.st);
    std::printf("%-28s %-12s %8.3f %8.3f  %s\n", r.name, "pdrt", f, bw, "");
    f = ms(
        [&] {
          pdrt_masked_softmax(nullptr, x.data(), causal.data(), y.data(),
                              r.rows, r.t, r.t, 1, 0.125f, 0, 0);
        },
        rt.st);
    bw = ms([&] {
      pdrt_masked_softmax_grad(nullptr, dy.data(), y.data(), dx.data(), r.rows, r.t, 0.125f, 0,
                               0);
    }, rt.st);
    std::printf("%-28s %-12s %8.3f %8.3f  %s\n", r.name, "pdrt causal", f, bw, "");
    memory::desc data({r.rows, r.t}, f32, tag::ab);
    auto fpd = softmax_v2_forward::primitive_desc(
        softmax_v2_forward::desc(prop_kind::forward_training, algorithm::softmax_accurate,
                                 data, data, 1),
        rt.eng);
    auto bpd = softmax_v2_backward::primitive_desc(
        softmax_v2_backward::desc(algorithm::softmax_accurate, data, data, data, 1),
        rt.eng, fpd);
    memory mx(data, rt.eng, x.data()), my(data, rt.eng, y.data()), mdy(data, rt.eng, dy.data()),
        mdx(data, rt.eng, dx.data());
    softmax_v2_forward fwd(fpd);
    softmax_v2_backward bwd(bpd);
    f = ms([&] { fwd.execute(rt.st, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DST, my}}); }, rt.st);
    bw = ms([&] {
      bwd.execute(rt.st, {{DNNL_ARG_DST, my}, {DNNL_ARG_DIFF_DST, mdy},
                          {DNNL_ARG_DIFF_SRC, mdx}});
    }, rt.st);
    std::printf("%-28s %-12s %8.3f %8.3f  %s / %s\n", r.name, "onednn", f, bw,
                fpd.impl_info_str(), bpd.impl_info_str());
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string only = argc > 1 ? argv[1] : "";
  Runtime rt;
  if (only.empty() || only == "conv")
    benchConvolutions(rt);
  if (only.empty() || only == "bn")
    benchBatchNorm(rt);
  if (only.empty() || only == "pool")
    benchMaxPool(rt);
  if (only.empty() || only == "ln")
    benchLayerNorm(rt);
  if (only.empty() || only == "softmax")
    benchSoftmax(rt);
}
