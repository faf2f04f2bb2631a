//===- strided_runs.h - Walk a strided descriptor run by run -------*- C++ -*-===//
//
// The CPU kernels that move data through a strided descriptor
// [rank, dims[rank], strides_0[rank], ..., strides_{N-1}[rank]] (permute,
// scatter, broadcast, where) visit the dense row-major output in order. Doing
// that with a division and a modulo per element and dimension
// (pdrt_desc_offset) costs more than the copy itself; forEachRun merges
// dimensions that are contiguous for every operand, then walks the outer
// dimensions with an odometer and hands the body whole innermost runs.
// mapBroadcastPair applies an elementwise function of two broadcast
// operands run by run (pdrt_binary, pdrt_minmax_grad, pdrt_compare).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_STRIDED_RUNS_H
#define PDRT_CPU_STRIDED_RUNS_H

#include "pdrt/pdrt_numerics.h"

#include <cstdint>

namespace pdrt {

/// One innermost run: `count` elements starting at linear output index
/// `linear`; operand k starts at element offset `offset[k]` and advances
/// by `stride[k]`.
template <int N> struct StridedRun {
  int64_t linear = 0, count = 0;
  int64_t offset[N] = {}, stride[N] = {};
};

/// The descriptor's dims and N stride arrays with mergeable neighbours
/// merged: dims d and d+1 fuse when stride_k[d] == stride_k[d+1]*dims[d+1]
/// for every operand k (the output is dense, so it always agrees).
template <int N> struct CollapsedDesc {
  int rank = 0;
  int64_t dims[PDRT_MAX_RANK] = {};
  int64_t strides[N][PDRT_MAX_RANK] = {};

  explicit CollapsedDesc(const int64_t *desc) {
    int64_t r = desc[0];
    for (int64_t d = 0; d < r; ++d) {
      int64_t n = desc[1 + d];
      if (n == 1)
        continue; // Size-1 dims carry no offset.
      if (rank > 0 && mergeable(desc, r, d)) {
        for (int k = 0; k < N; ++k)
          strides[k][rank - 1] = desc[1 + r * (1 + k) + d];
        dims[rank - 1] *= n;
        continue;
      }
      dims[rank] = n;
      for (int k = 0; k < N; ++k)
        strides[k][rank] = desc[1 + r * (1 + k) + d];
      ++rank;
    }
  }

private:
  /// Whether desc's dim d continues the last kept dim for every operand.
  bool mergeable(const int64_t *desc, int64_t r, int64_t d) const {
    int64_t n = desc[1 + d];
    for (int k = 0; k < N; ++k)
      if (strides[k][rank - 1] != desc[1 + r * (1 + k) + d] * n)
        return false;
    return true;
  }
};

/// Calls body(const StridedRun<N> &) for every innermost run of the
/// descriptor, in row-major order of the output. The descriptor's rank must
/// be at most PDRT_MAX_RANK (callers check).
template <int N, typename Body>
void forEachRun(const int64_t *desc, Body body) {
  CollapsedDesc<N> c(desc);
  for (int d = 0; d < c.rank; ++d)
    if (c.dims[d] == 0)
      return;
  StridedRun<N> run;
  if (c.rank == 0) {
    run.count = 1;
    body(run);
    return;
  }
  int inner = c.rank - 1;
  run.count = c.dims[inner];
  for (int k = 0; k < N; ++k)
    run.stride[k] = c.strides[k][inner];
  int64_t index[PDRT_MAX_RANK] = {};
  int64_t total = pdrt_desc_numel(desc);
  for (run.linear = 0; run.linear < total; run.linear += run.count) {
    body(run);
    for (int d = inner - 1; d >= 0; --d) { // odometer over the outer dims
      for (int k = 0; k < N; ++k)
        run.offset[k] += c.strides[k][d];
      if (++index[d] < c.dims[d])
        break;
      for (int k = 0; k < N; ++k)
        run.offset[k] -= c.strides[k][d] * c.dims[d];
      index[d] = 0;
    }
  }
}

/// out[i] = f(i, a[i * sa], b[i * sb]) for i < n, with the 0/1 strides of
/// common broadcasts specialised so that the compiler vectorises each case.
template <typename A, typename B, typename O, typename F>
inline void mapStridedPair(const A *a, const B *b, O *out, int64_t n,
                           int64_t sa, int64_t sb, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(i, a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const B bv = b[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(i, a[i], bv);
  } else if (sa == 0 && sb == 1) {
    const A av = a[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(i, av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(i, a[i * sa], b[i * sb]);
  }
}

/// out[i] = f(i, a(i), b(i)) over the dense output of a pdrt_binary
/// descriptor [rank, out_dims[rank], a_strides[rank], b_strides[rank]],
/// where i is the linear output index (rank checked by the caller).
template <typename A, typename B, typename O, typename F>
void mapBroadcastPair(const int64_t *desc, const A *a, const B *b, O *out,
                      F f) {
  forEachRun<2>(desc, [&](const StridedRun<2> &run) {
    const int64_t base = run.linear;
    mapStridedPair(a + run.offset[0], b + run.offset[1], out + base, run.count,
                   run.stride[0], run.stride[1],
                   [&](int64_t i, A x, B y) { return f(base + i, x, y); });
  });
}

} // namespace pdrt

#endif // PDRT_CPU_STRIDED_RUNS_H
