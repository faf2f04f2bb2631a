//===- conv_onednn.cc - Convolutions through oneDNN's primitives --------===//
//
// See conv_onednn.h. The cache key is the pass, whether a bias is added
// and the geometry descriptor's words; a key whose primitive could not be
// created maps to null, so the fallback is decided once per geometry.
//
//===----------------------------------------------------------------------===//

#include "cpu/conv_onednn.h"
#include "cpu/scratch.h"

#include <dnnl.hpp>

#include <array>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace pdrt::onednn {
namespace {

using namespace dnnl;
using tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

enum class Pass { Forward, BackwardData, BackwardWeights };

struct Key {
  Pass pass;
  bool bias;
  std::array<int64_t, PDRT_CONV_DESC_WORDS> desc;
  bool operator<(const Key &o) const {
    if (pass != o.pass)
      return pass < o.pass;
    if (bias != o.bias)
      return bias < o.bias;
    return desc < o.desc;
  }
};

/// One operand: the caller's plain buffer and, when the primitive wants
/// another layout, the memory in that layout (on a scratch buffer) with
/// the reorder between them.
struct Operand {
  int arg = 0;
  bool output = false;
  memory plain, inner;
  std::optional<reorder> convert; ///< plain -> inner, or inner -> plain.
  int scratch = 0;                ///< Which scratch buffer inner uses.
};

struct Entry {
  primitive prim;
  std::vector<Operand> operands;
  std::unordered_map<int, memory> args;
};

struct Cache {
  engine eng{engine::kind::cpu, 0};
  stream st{eng};
  std::map<Key, std::unique_ptr<Entry>> entries;
  std::array<Scratch, 3> scratch;
  bool on = true;
};

Cache &cache() {
  thread_local Cache c;
  return c;
}

/// The oneDNN view of a geometry.
struct Dims {
  memory::dims src, wei, bias, dst, strides, dilates, padL, padR;
  tag weiTag;
};

Dims dimsOf(const pdrt_conv_geom &g) {
  Dims d;
  d.src = {g.n, g.c, g.h, g.w};
  d.dst = {g.n, g.m, g.oh, g.ow};
  d.bias = {g.m};
  if (g.group > 1) {
    d.wei = {g.group, g.m / g.group, g.c / g.group, g.kh, g.kw};
    d.weiTag = tag::goihw;
  } else {
    d.wei = {g.m, g.c, g.kh, g.kw};
    d.weiTag = tag::oihw;
  }
  d.strides = {g.sh, g.sw};
  d.dilates = {g.dh - 1, g.dw - 1}; // oneDNN counts the taps skipped
  d.padL = {g.pt, g.pl};
  d.padR = {g.pb, g.pr};
  return d;
}

/// A primitive's operand in the layout oneDNN chooses.
memory::desc any(const memory::dims &dims) {
  return memory::desc(dims, kF32, tag::any);
}

/// Whether oneDNN's blocked primitive (with the reorders around it) runs
/// pass of g rather than im2col + sgemm. From bench/kernels/onednn_kernels
/// on AVX-512 (ms per call, oneDNN against im2col): the forward won or tied
/// on every shape (0.58 against 1.10 on the CNN's 32 -> 64 3x3, 17.6
/// against 22.8 on ResNet-18's 64 -> 64 at 56 x 56, 15.7 against 27.4 at
/// 512 x 7 x 7); the input gradient lost where each group has few input
/// channels (the stem's 3: 98.9 against 34.3, 1 channel: 0.64 against
/// 0.10) unless the convolution is depthwise (0.05 against 0.34); the
/// filter gradient lost on small planes of many channels (512 x 7 x 7:
/// 26.7 against 21.4) and won elsewhere (0.69 against 1.15, 20.2 against
/// 23.6). oneDNN's plain-layout primitives (im2col + its own sgemm) were
/// never faster than pdrt's.
bool preferOneDnn(Pass pass, const pdrt_conv_geom &g) {
  int64_t cg = g.c / g.group;
  bool depthwise = g.group > 1 && cg == 1;
  switch (pass) {
  case Pass::Forward:
    return true;
  case Pass::BackwardData:
    return depthwise || cg >= 8;
  case Pass::BackwardWeights:
    return !(g.oh * g.ow < 64 && cg >= 256);
  }
  return false;
}

Operand makeOperand(Cache &c, int arg, const memory::desc &plain,
                    const memory::desc &chosen, bool output, int scratch) {
  Operand op;
  op.arg = arg;
  op.output = output;
  op.plain = memory(plain, c.eng, DNNL_MEMORY_NONE);
  if (chosen == plain) {
    op.inner = op.plain;
    return op;
  }
  op.inner = memory(chosen, c.eng, DNNL_MEMORY_NONE);
  op.scratch = scratch;
  op.convert = output ? reorder(op.inner, op.plain) : reorder(op.plain, op.inner);
  return op;
}

std::unique_ptr<Entry> createForward(Cache &c, const pdrt_conv_geom &g,
                                     bool bias) {
  Dims d = dimsOf(g);
  memory::desc srcP(d.src, kF32, tag::nchw), dstP(d.dst, kF32, tag::nchw),
      weiP(d.wei, kF32, d.weiTag), biasP(d.bias, kF32, tag::a);
  auto desc = bias ? convolution_forward::desc(
                         prop_kind::forward_training, algorithm::convolution_direct,
                         any(d.src), any(d.wei), biasP, any(d.dst), d.strides,
                         d.dilates, d.padL, d.padR)
                   : convolution_forward::desc(
                         prop_kind::forward_training, algorithm::convolution_direct,
                         any(d.src), any(d.wei), any(d.dst), d.strides, d.dilates,
                         d.padL, d.padR);
  convolution_forward::primitive_desc pd(desc, c.eng);
  auto e = std::make_unique<Entry>();
  e->prim = convolution_forward(pd);
  e->operands.push_back(makeOperand(c, DNNL_ARG_SRC, srcP, pd.src_desc(), false, 0));
  e->operands.push_back(makeOperand(c, DNNL_ARG_WEIGHTS, weiP, pd.weights_desc(), false, 1));
  if (bias)
    e->operands.push_back(makeOperand(c, DNNL_ARG_BIAS, biasP, biasP, false, 0));
  e->operands.push_back(makeOperand(c, DNNL_ARG_DST, dstP, pd.dst_desc(), true, 2));
  return e;
}

/// The forward primitive descriptor the backward ones are created against.
convolution_forward::primitive_desc forwardHint(Cache &c, const Dims &d) {
  return convolution_forward::primitive_desc(
      convolution_forward::desc(prop_kind::forward_training,
                                algorithm::convolution_direct, any(d.src),
                                any(d.wei), any(d.dst), d.strides, d.dilates,
                                d.padL, d.padR),
      c.eng);
}

std::unique_ptr<Entry> createBackwardData(Cache &c, const pdrt_conv_geom &g) {
  Dims d = dimsOf(g);
  memory::desc srcP(d.src, kF32, tag::nchw), dstP(d.dst, kF32, tag::nchw),
      weiP(d.wei, kF32, d.weiTag);
  convolution_backward_data::primitive_desc pd(
      convolution_backward_data::desc(algorithm::convolution_direct, any(d.src),
                                      any(d.wei), any(d.dst), d.strides,
                                      d.dilates, d.padL, d.padR),
      c.eng, forwardHint(c, d));
  auto e = std::make_unique<Entry>();
  e->prim = convolution_backward_data(pd);
  e->operands.push_back(makeOperand(c, DNNL_ARG_DIFF_DST, dstP, pd.diff_dst_desc(), false, 0));
  e->operands.push_back(makeOperand(c, DNNL_ARG_WEIGHTS, weiP, pd.weights_desc(), false, 1));
  e->operands.push_back(makeOperand(c, DNNL_ARG_DIFF_SRC, srcP, pd.diff_src_desc(), true, 2));
  return e;
}

std::unique_ptr<Entry> createBackwardWeights(Cache &c, const pdrt_conv_geom &g) {
  Dims d = dimsOf(g);
  memory::desc srcP(d.src, kF32, tag::nchw), dstP(d.dst, kF32, tag::nchw),
      weiP(d.wei, kF32, d.weiTag);
  convolution_backward_weights::primitive_desc pd(
      convolution_backward_weights::desc(algorithm::convolution_direct,
                                         any(d.src), any(d.wei), any(d.dst),
                                         d.strides, d.dilates, d.padL, d.padR),
      c.eng, forwardHint(c, d));
  auto e = std::make_unique<Entry>();
  e->prim = convolution_backward_weights(pd);
  e->operands.push_back(makeOperand(c, DNNL_ARG_SRC, srcP, pd.src_desc(), false, 0));
  e->operands.push_back(makeOperand(c, DNNL_ARG_DIFF_DST, dstP, pd.diff_dst_desc(), false, 1));
  e->operands.push_back(
      makeOperand(c, DNNL_ARG_DIFF_WEIGHTS, weiP, pd.diff_weights_desc(), true, 2));
  return e;
}

/// The geometry's descriptor words (the cache keys).
std::array<int64_t, PDRT_CONV_DESC_WORDS> wordsOf(const pdrt_conv_geom &g) {
  return {g.n,  g.c,  g.h,  g.w,  g.m,  g.kh, g.kw, g.oh,    g.ow,   g.sh,
          g.sw, g.pt, g.pl, g.pb, g.pr, g.dh, g.dw, g.group, g.flags};
}

/// The cached primitive of (pass, g, bias), created on first use; null
/// when oneDNN cannot run it.
Entry *lookup(Cache &c, Pass pass, const pdrt_conv_geom &g, bool bias) {
  Key key{pass, bias, wordsOf(g)};
  auto it = c.entries.find(key);
  if (it != c.entries.end())
    return it->second.get();
  std::unique_ptr<Entry> e;
  try {
    switch (pass) {
    case Pass::Forward:
      e = createForward(c, g, bias);
      break;
    case Pass::BackwardData:
      e = createBackwardData(c, g);
      break;
    case Pass::BackwardWeights:
      e = createBackwardWeights(c, g);
      break;
    }
  } catch (const dnnl::error &) {
    e.reset();
  }
  if (e)
    for (Operand &op : e->operands)
      e->args[op.arg] = op.inner;
  return (c.entries[key] = std::move(e)).get();
}

/// Runs e on the caller's buffers (in the order of e->operands).
bool execute(Cache &c, Entry &e, const std::vector<const void *> &buffers) {
  try {
    for (size_t i = 0; i < e.operands.size(); ++i) {
      Operand &op = e.operands[i];
      op.plain.set_data_handle(const_cast<void *>(buffers[i]));
      if (!op.convert)
        continue;
      void *inner = c.scratch[op.scratch].get(op.inner.get_desc().get_size());
      if (!inner)
        return false; // out of memory: conv.cc's kernel needs less
      op.inner.set_data_handle(inner);
    }
    for (Operand &op : e.operands)
      if (op.convert && !op.output)
        op.convert->execute(c.st, op.plain, op.inner);
    e.prim.execute(c.st, e.args);
    for (Operand &op : e.operands)
      if (op.convert && op.output)
        op.convert->execute(c.st, op.inner, op.plain);
    c.st.wait();
  } catch (const dnnl::error &) {
    return false;
  }
  return true;
}

/// Geometries left to conv.cc: empty tensors and unset dilations.
bool runnable(const pdrt_conv_geom &g) {
  return g.n > 0 && g.c > 0 && g.m > 0 && g.h > 0 && g.w > 0 && g.oh > 0 &&
         g.ow > 0 && g.dh > 0 && g.dw > 0;
}

bool run(Pass pass, const pdrt_conv_geom &g, bool bias,
         const std::vector<const void *> &buffers) {
  Cache &c = cache();
  if (!c.on || !runnable(g) || !preferOneDnn(pass, g))
    return false;
  Entry *e = lookup(c, pass, g, bias);
  return e && execute(c, *e, buffers);
}

} // namespace

void useOneDnn(bool on) { cache().on = on; }

int primitivesCreated() {
  int n = 0;
  for (const auto &entry : cache().entries)
    n += entry.second != nullptr;
  return n;
}

bool convForward(const pdrt_conv_geom &g, const float *x, const float *w,
                 const float *b, float *y) {
  if (b)
    return run(Pass::Forward, g, true, {x, w, b, y});
  return run(Pass::Forward, g, false, {x, w, y});
}

bool convBackwardData(const pdrt_conv_geom &g, const float *dy, const float *w,
                      float *dx) {
  return run(Pass::BackwardData, g, false, {dy, w, dx});
}

bool convBackwardWeights(const pdrt_conv_geom &g, const float *dy,
                         const float *x, float *dw) {
  return run(Pass::BackwardWeights, g, false, {x, dy, dw});
}

} // namespace pdrt::onednn
