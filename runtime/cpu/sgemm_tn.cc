//===- sgemm_tn.cc - C = A^T B through its transpose ------------------------===//
//
// See sgemm_tn.h. The reorders are created once per chunk geometry and
// thread (a plan has a handful: one per weight-gradient shape, plus the
// tail chunk), with their memory objects, whose handles are set per call.
//
//===----------------------------------------------------------------------===//

#include "cpu/sgemm_tn.h"
#include "cpu/scratch.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>

namespace pdrt {
namespace {

using namespace dnnl;

/// A reorder from T's chunk (w x n read through strides {1, w}) to C's
/// rows (strides {ldc, 1}).
struct TransposeAdd {
  reorder prim;
  memory src, dst;
};

using Key = std::tuple<int64_t, int64_t, int64_t, uint32_t>; // w, n, ldc, beta

struct Cache {
  engine eng{engine::kind::cpu, 0};
  stream st{eng};
  std::map<Key, std::unique_ptr<TransposeAdd>> reorders;
  Scratch scratch;

  TransposeAdd &reorderFor(int64_t w, int64_t n, int64_t ldc, float beta) {
    uint32_t betaBits;
    std::memcpy(&betaBits, &beta, sizeof betaBits);
    auto &entry = reorders[Key{w, n, ldc, betaBits}];
    if (!entry) {
      memory::desc from({w, n}, memory::data_type::f32, memory::dims{1, w});
      memory::desc to({w, n}, memory::data_type::f32, memory::dims{ldc, 1});
      primitive_attr attr;
      if (beta != 0.0f) {
        post_ops ops;
        ops.append_sum(beta);
        attr.set_post_ops(ops);
      }
      reorder::primitive_desc pd(eng, from, eng, to, attr);
      entry.reset(new TransposeAdd{reorder(pd), memory(from, eng, nullptr),
                                   memory(to, eng, nullptr)});
    }
    return *entry;
  }
};

Cache &cache() {
  thread_local Cache c;
  return c;
}

} // namespace

// bench/kernels/run.sh sgemm_tn on an Ice Lake Xeon (AVX-512, one thread,
// 64-byte-aligned operands, k = 1024-4096), GFLOP/s direct / transposed /
// OpenBLAS: 2048 x 512: 120-135 / 178-182 / 151-155; 1024 x 768: 122-135 /
// 177-185 / 155; 4096 x 256: 107-114 / 168-171 / 126-136; 1536 x 512:
// 136-148 / 142-151 / 153-159; 2560 x 512: 128-148 / 137-146 / 151-157;
// 2304 x 512: 146-166 / 152-159 / 151-155; 1536 x 768: 186-194 / 180-191 /
// 153-161. Below m = 1024 and from n = 1024 on the direct kernel ties or
// wins everywhere measured.
TNPath chooseTNPath(int64_t m, int64_t n) {
  if (m < 1024 || n > 768)
    return TNPath::Direct;
  if (n <= 256)
    return TNPath::Transposed;
  if (m % 1024 == 0)
    return n <= 640 || m == 1024 ? TNPath::Transposed : TNPath::Direct;
  if (m % 1024 == 512) {
    if (n < 512)
      return TNPath::Transposed;
    if (n <= 576 || (n <= 640 && m < 2048))
      return TNPath::OpenBLAS;
  }
  return TNPath::Direct;
}

bool sgemmTNThroughTranspose(int64_t m, int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, const float *b,
                             int64_t ldb, float beta, float *c, int64_t ldc,
                             int64_t maxScratch) {
  Cache &cc = cache();
  // Chunks of whole 64-column blocks of T (rows of C), at least one.
  int64_t width = std::max<int64_t>(64, maxScratch / std::max<int64_t>(n, 1) / 64 * 64);
  width = std::min(width, m);
  auto *t = static_cast<float *>(cc.scratch.get(width * n * sizeof(float)));
  if (!t)
    return false;
  try {
    // Both reorders (whole chunks and the tail) before C is written.
    TransposeAdd &whole = cc.reorderFor(width, n, ldc, beta);
    TransposeAdd &tail = cc.reorderFor(m % width ? m % width : width, n, ldc, beta);
    for (int64_t at = 0; at < m; at += width) {
      int64_t w = std::min(width, m - at);
      // T (n x w) = alpha B^T A[:, at:at+w].
      if (dnnl_sgemm('T', 'N', n, w, k, alpha, b, ldb, a + at, lda, 0.0f, t,
                     w) != dnnl_success)
        return false;
      TransposeAdd &r = w == width ? whole : tail;
      r.src.set_data_handle(t);
      r.dst.set_data_handle(c + at * ldc);
      r.prim.execute(cc.st, r.src, r.dst);
    }
    cc.st.wait();
  } catch (const dnnl::error &) {
    return false;
  }
  return true;
}

} // namespace pdrt
