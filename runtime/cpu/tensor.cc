//===- tensor.cc - CPU kernels of tensor ops -----------------------------===//
//
// CPU implementations of runtime/include/pdrt/pdrt_tensor.h: strided copies
// and their inverse (f32 and any element size), gather and GatherElements
// with their scatter-add gradients, where (f32 and any element size) and
// its branch gradient, constant padding of any element size (and
// pdrt_conv.h's pdrt_pad, f32 zero padding, through the same code), and
// batched matmul: small products on libxsmm's kernels (small_gemm.h), the
// others a loop of pdrt_matmul's GEMMs. Cast, compare and not are in
// dtype.cc.
//
//===----------------------------------------------------------------------===//

#include "cpu/small_gemm.h"
#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_tensor_numerics.h"
#include "strided_runs.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace {
/// Records an error and returns false when desc's rank exceeds what the
/// strided walkers support.
bool checkRank(pdrt_ctx *ctx, const char *kernel, const int64_t *desc) {
  if (desc[0] >= 0 && desc[0] <= PDRT_MAX_RANK)
    return true;
  pdrt::setError(ctx, std::string(kernel) + ": rank " + std::to_string(desc[0]) +
                          " exceeds " + std::to_string(PDRT_MAX_RANK));
  return false;
}

/// Calls fn(T()) with T the unsigned integer type of `elem_size` bytes (1, 4
/// or 8), which moves elements of any type of that size as bits; records
/// an error naming `kernel` and returns false for other sizes.
template <typename Fn>
bool withElemType(pdrt_ctx *ctx, const char *kernel, int64_t elem_size, Fn fn) {
  switch (elem_size) {
  case 1: fn(uint8_t()); return true;
  case 4: fn(uint32_t()); return true;
  case 8: fn(uint64_t()); return true;
  default:
    pdrt::setError(ctx, std::string(kernel) + ": element size " +
                            std::to_string(elem_size) + " is not 1, 4 or 8");
    return false;
  }
}

/// Copies one strided run of elements of type T to a dense destination.
template <typename T>
void copyRun(const char *src, char *dst, const pdrt::StridedRun<1> &run) {
  const T *s = reinterpret_cast<const T *>(src) + run.offset[0];
  T *d = reinterpret_cast<T *>(dst) + run.linear;
  for (int64_t j = 0; j < run.count; ++j)
    d[j] = s[j * run.stride[0]];
}
} // namespace

extern "C" void pdrt_permute(pdrt_ctx *ctx, const void *x, void *y,
                             const int64_t *desc, int64_t elem_size) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_permute", desc))
    return;
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  pdrt::forEachRun<1>(desc, [&](const pdrt::StridedRun<1> &run) {
    if (run.stride[0] == 1) {
      std::memcpy(dst + run.linear * elem_size, src + run.offset[0] * elem_size,
                  run.count * elem_size);
      return;
    }
    switch (elem_size) {
    case 4: return copyRun<uint32_t>(src, dst, run);
    case 8: return copyRun<uint64_t>(src, dst, run);
    case 1: return copyRun<uint8_t>(src, dst, run);
    default:
      for (int64_t j = 0; j < run.count; ++j)
        std::memcpy(dst + (run.linear + j) * elem_size,
                    src + (run.offset[0] + j * run.stride[0]) * elem_size,
                    elem_size);
    }
  });
}

namespace {
/// pdrt_scatter on elements of type T.
template <typename T>
void scatterRuns(const T *x, T *y, int64_t y_numel, int64_t base,
                 const int64_t *desc, bool zero_first) {
  if (zero_first)
    std::memset(y, 0, sizeof(T) * y_numel);
  pdrt::forEachRun<1>(desc, [&](const pdrt::StridedRun<1> &run) {
    T *d = y + base + run.offset[0];
    const T *s = x + run.linear;
    if (run.stride[0] == 1) { // unit stride (a concat's rows): one memcpy
      std::memcpy(d, s, sizeof(T) * run.count);
      return;
    }
    for (int64_t j = 0; j < run.count; ++j)
      d[j * run.stride[0]] = s[j];
  });
}
} // namespace

extern "C" void pdrt_scatter(pdrt_ctx *ctx, const float *x, float *y,
                             int64_t y_numel, int64_t base, const int64_t *desc,
                             int32_t zero_first) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_scatter", desc))
    return;
  scatterRuns(x, y, y_numel, base, desc, zero_first != 0);
}

extern "C" void pdrt_scatter_any(pdrt_ctx *ctx, const void *x, void *y,
                                 int64_t y_numel, int64_t base,
                                 const int64_t *desc, int32_t zero_first,
                                 int64_t elem_size) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_scatter_any", desc))
    return;
  withElemType(ctx, "pdrt_scatter_any", elem_size, [&](auto tag) {
    using T = decltype(tag);
    scatterRuns(static_cast<const T *>(x), static_cast<T *>(y), y_numel, base,
                desc, zero_first != 0);
  });
}

namespace {
/// Checks every index against [-rows, rows) before any data moves; records
/// the first bad one as the ctx error, "<what> <index> at position <i> is
/// outside [-rows, rows)", and returns false.
bool checkIndices(pdrt_ctx *ctx, const int64_t *idx, int64_t n, int64_t rows,
                  const char *what = "gather index") {
  for (int64_t i = 0; i < n; ++i)
    if (pdrt_gather_row(idx[i], rows) < 0) {
      pdrt::setError(ctx, std::string(what) + " " + std::to_string(idx[i]) +
                              " at position " + std::to_string(i) +
                              " is outside [-" + std::to_string(rows) + ", " +
                              std::to_string(rows) + ")");
      return false;
    }
  return true;
}
} // namespace

extern "C" void pdrt_gather(pdrt_ctx *ctx, const void *data, const int64_t *idx,
                            void *out, int64_t outer, int64_t n, int64_t rows,
                            int64_t inner, int64_t elem_size) {
  if (pdrt::hasError(ctx) || !checkIndices(ctx, idx, n, rows))
    return;
  const char *src = static_cast<const char *>(data);
  char *dst = static_cast<char *>(out);
  int64_t slice = inner * elem_size;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(dst + (o * n + i) * slice,
                  src + (o * rows + pdrt_gather_row(idx[i], rows)) * slice,
                  slice);
}

extern "C" void pdrt_gather_grad(pdrt_ctx *ctx, const float *dout,
                                 const int64_t *idx, float *ddata,
                                 int64_t outer, int64_t n, int64_t rows,
                                 int64_t inner, int32_t zero_first) {
  if (pdrt::hasError(ctx) || !checkIndices(ctx, idx, n, rows))
    return;
  if (zero_first == PDRT_SCATTER_ZERO_FIRST)
    std::memset(ddata, 0, sizeof(float) * outer * rows * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i) {
      float *dst = ddata + (o * rows + pdrt_gather_row(idx[i], rows)) * inner;
      const float *src = dout + (o * n + i) * inner;
      for (int64_t j = 0; j < inner; ++j)
        dst[j] += src[j];
    }
}

//===----------------------------------------------------------------------===//
// GatherElements: out[i] = data[i with coordinate axis replaced by idx[i]]
//===----------------------------------------------------------------------===//

namespace {
/// The decoded GatherElements descriptor [rank, axis, data_dims[rank],
/// idx_dims[rank]] and the walk over idx: a pdrt_permute-style descriptor
/// [rank, idx_dims[rank], data_strides[rank]] with the axis' stride 0, so
/// that each run's offset is the data element minus the axis term.
struct GatherElementsGeom {
  int64_t rank = 0, axis = 0, axisDim = 0, axisStride = 0;
  int64_t idxNumel = 0, dataNumel = 0;
  int64_t walk[1 + 2 * PDRT_MAX_RANK] = {};
};

/// Decodes and checks `desc` and every index; records an error naming
/// `kernel` and returns false when one is bad.
bool gatherElementsGeom(pdrt_ctx *ctx, const char *kernel, const int64_t *desc,
                        const int64_t *idx, GatherElementsGeom *g) {
  int64_t rank = desc[0], axis = desc[1];
  if (rank < 1 || rank > PDRT_MAX_RANK) {
    pdrt::setError(ctx, std::string(kernel) + ": rank " + std::to_string(rank) +
                            " is outside [1, " + std::to_string(PDRT_MAX_RANK) +
                            "]");
    return false;
  }
  if (axis < -rank || axis >= rank) {
    pdrt::setError(ctx, std::string(kernel) + ": axis " + std::to_string(axis) +
                            " is outside [-" + std::to_string(rank) + ", " +
                            std::to_string(rank) + ")");
    return false;
  }
  g->rank = rank;
  g->axis = axis < 0 ? axis + rank : axis;
  const int64_t *dataDims = desc + 2, *idxDims = dataDims + rank;
  for (int64_t d = 0; d < rank; ++d)
    if (d != g->axis && idxDims[d] > dataDims[d]) {
      pdrt::setError(ctx, std::string(kernel) + ": index dim " +
                              std::to_string(d) + " (" +
                              std::to_string(idxDims[d]) +
                              ") exceeds the data's (" +
                              std::to_string(dataDims[d]) + ")");
      return false;
    }
  int64_t *walk = g->walk;
  walk[0] = rank;
  for (int64_t d = 0; d < rank; ++d)
    walk[1 + d] = idxDims[d];
  g->dataNumel = pdrt_dense_strides(rank, dataDims, walk + 1 + rank);
  g->axisDim = dataDims[g->axis];
  g->axisStride = walk[1 + rank + g->axis];
  walk[1 + rank + g->axis] = 0;
  g->idxNumel = pdrt_desc_numel(walk);
  std::string what = std::string(kernel) + ": index";
  return checkIndices(ctx, idx, g->idxNumel, g->axisDim, what.c_str());
}

/// Calls fn(i, e) for every position i of idx (linear, row-major) with e
/// the element of data that GatherElements reads for it.
template <typename Fn>
void forEachGatherElement(const GatherElementsGeom &g, const int64_t *idx,
                          Fn fn) {
  pdrt::forEachRun<1>(g.walk, [&](const pdrt::StridedRun<1> &run) {
    for (int64_t j = 0; j < run.count; ++j) {
      int64_t i = run.linear + j;
      int64_t row = pdrt_gather_row(idx[i], g.axisDim);
      fn(i, run.offset[0] + j * run.stride[0] + row * g.axisStride);
    }
  });
}
} // namespace

extern "C" void pdrt_gather_elements(pdrt_ctx *ctx, const void *data,
                                     const int64_t *idx, void *out,
                                     const int64_t *desc, int64_t elem_size) {
  GatherElementsGeom g;
  if (pdrt::hasError(ctx) ||
      !gatherElementsGeom(ctx, "pdrt_gather_elements", desc, idx, &g))
    return;
  withElemType(ctx, "pdrt_gather_elements", elem_size, [&](auto tag) {
    using T = decltype(tag);
    const T *src = static_cast<const T *>(data);
    T *dst = static_cast<T *>(out);
    forEachGatherElement(g, idx, [&](int64_t i, int64_t e) { dst[i] = src[e]; });
  });
}

extern "C" void pdrt_gather_elements_grad(pdrt_ctx *ctx, const float *dout,
                                          const int64_t *idx, float *ddata,
                                          const int64_t *desc) {
  GatherElementsGeom g;
  if (pdrt::hasError(ctx) ||
      !gatherElementsGeom(ctx, "pdrt_gather_elements_grad", desc, idx, &g))
    return;
  std::memset(ddata, 0, sizeof(float) * g.dataNumel);
  forEachGatherElement(g, idx,
                       [&](int64_t i, int64_t e) { ddata[e] += dout[i]; });
}

//===----------------------------------------------------------------------===//
// Constant padding
//===----------------------------------------------------------------------===//

namespace {
/// Records an error and returns false unless x fits inside y at begin on
/// every axis of a pad descriptor [rank, x_dims, y_dims, begin].
bool checkPadFits(pdrt_ctx *ctx, const char *kernel, const int64_t *desc) {
  int64_t rank = desc[0];
  const int64_t *xd = desc + 1, *yd = xd + rank, *begin = yd + rank;
  for (int64_t d = 0; d < rank; ++d)
    if (begin[d] < 0 || begin[d] + xd[d] > yd[d]) {
      pdrt::setError(ctx, std::string(kernel) + ": axis " + std::to_string(d) +
                              ": x dim " + std::to_string(xd[d]) +
                              " at begin " + std::to_string(begin[d]) +
                              " does not fit y dim " + std::to_string(yd[d]));
      return false;
    }
  return true;
}

/// Fills y with `value`, then writes x's runs at their place.
template <typename T>
void padRuns(const T *x, T *y, const int64_t *desc, T value) {
  int64_t rank = desc[0];
  const int64_t *xd = desc + 1, *yd = xd + rank, *begin = yd + rank;
  int64_t walk[1 + 2 * PDRT_MAX_RANK];
  walk[0] = rank;
  for (int64_t d = 0; d < rank; ++d)
    walk[1 + d] = xd[d];
  int64_t yn = pdrt_dense_strides(rank, yd, walk + 1 + rank), base = 0;
  for (int64_t d = 0; d < rank; ++d)
    base += begin[d] * walk[1 + rank + d];
  std::fill(y, y + yn, value);
  pdrt::forEachRun<1>(walk, [&](const pdrt::StridedRun<1> &run) {
    T *d = y + base + run.offset[0];
    const T *s = x + run.linear;
    for (int64_t j = 0; j < run.count; ++j)
      d[j * run.stride[0]] = s[j];
  });
}

/// pdrt_pad_value with errors naming `kernel`.
void padValue(pdrt_ctx *ctx, const char *kernel, const void *x, void *y,
              const int64_t *desc, int64_t elem_size, int64_t value_bits) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, kernel, desc) ||
      !checkPadFits(ctx, kernel, desc))
    return;
  withElemType(ctx, kernel, elem_size, [&](auto tag) {
    using T = decltype(tag);
    padRuns(static_cast<const T *>(x), static_cast<T *>(y), desc,
            static_cast<T>(static_cast<uint64_t>(value_bits)));
  });
}
} // namespace

extern "C" void pdrt_pad_value(pdrt_ctx *ctx, const void *x, void *y,
                               const int64_t *desc, int64_t elem_size,
                               int64_t value_bits) {
  padValue(ctx, "pdrt_pad_value", x, y, desc, elem_size, value_bits);
}

extern "C" void pdrt_pad(pdrt_ctx *ctx, const float *x, float *y,
                         const int64_t *desc) {
  padValue(ctx, "pdrt_pad", x, y, desc, sizeof(float), 0);
}

extern "C" void pdrt_batch_matmul(pdrt_ctx *ctx, const float *a, const float *b,
                                  float *c, int64_t batch, int64_t m, int64_t n,
                                  int64_t k, int32_t trans_a, int32_t trans_b) {
  if (pdrt::hasError(ctx))
    return;
  // Small products on libxsmm's kernels, as pdrt_batch_matmul_strided's.
  pdrt::GemmShape shape{m,           n,           k, trans_a != 0,
                        trans_b != 0, trans_a ? m : k, trans_b ? k : n, n};
  if (m > 0 && n > 0 && k > 0 && pdrt::isSmallGemm(shape, PDRT_DENSE)) {
    pdrt::SmallGemmBatch small(shape, PDRT_DENSE);
    for (int64_t i = 0; small.ok() && i < batch; ++i)
      if (!small.run(a + i * m * k, b + i * k * n, c + i * m * n)) {
        pdrt::setError(ctx, "pdrt_batch_matmul: out of memory for a "
                            "transposed operand");
        return;
      }
    if (small.ok())
      return;
  }
  for (int64_t i = 0; i < batch; ++i)
    pdrt_matmul(ctx, a + i * m * k, b + i * k * n, c + i * m * n, m, n, k,
                trans_a, trans_b, 1.0f, 0.0f);
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

namespace {
/// pdrt_where on elements of type T.
template <typename T>
void whereRuns(const uint8_t *cond, const T *a, const T *b, T *out,
               const int64_t *desc) {
  pdrt::forEachRun<3>(desc, [&](const pdrt::StridedRun<3> &run) {
    const uint8_t *c = cond + run.offset[0];
    const T *ar = a + run.offset[1], *br = b + run.offset[2];
    T *o = out + run.linear;
    for (int64_t j = 0; j < run.count; ++j)
      o[j] = c[j * run.stride[0]] ? ar[j * run.stride[1]] : br[j * run.stride[2]];
  });
}
} // namespace

extern "C" void pdrt_where(pdrt_ctx *ctx, const uint8_t *cond, const float *a,
                           const float *b, float *out, const int64_t *desc) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_where", desc))
    return;
  whereRuns(cond, a, b, out, desc);
}

extern "C" void pdrt_where_any(pdrt_ctx *ctx, const uint8_t *cond,
                               const void *a, const void *b, void *out,
                               const int64_t *desc, int64_t elem_size) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_where_any", desc))
    return;
  withElemType(ctx, "pdrt_where_any", elem_size, [&](auto tag) {
    using T = decltype(tag);
    whereRuns(cond, static_cast<const T *>(a), static_cast<const T *>(b),
              static_cast<T *>(out), desc);
  });
}

extern "C" void pdrt_where_grad(pdrt_ctx *ctx, const float *dy,
                                const uint8_t *cond, float *dx,
                                const int64_t *desc, int32_t negate) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_where_grad", desc))
    return;
  const bool flip = negate != 0;
  pdrt::forEachRun<1>(desc, [&](const pdrt::StridedRun<1> &run) {
    const uint8_t *c = cond + run.offset[0];
    for (int64_t j = 0; j < run.count; ++j) {
      int64_t i = run.linear + j;
      dx[i] = ((c[j * run.stride[0]] != 0) != flip) ? dy[i] : 0.0f;
    }
  });
}
