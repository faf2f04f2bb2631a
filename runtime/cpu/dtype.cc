//===- dtype.cc - CPU kernels that know element types ----------------------===//
//
// CPU implementations of the element-type-aware kernels of
// runtime/include/pdrt/pdrt_tensor.h: pdrt_cast between f32, int64, int32
// and bool, pdrt_compare (comparisons, and logic ops on bools) with numpy
// broadcasting, and pdrt_not. Each (type, op) pair is its own template
// instance, so the inner loops are branch-free and vectorise; the scalar
// rules are pdrt_tensor_numerics.h's.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_tensor_numerics.h"
#include "strided_runs.h"

#include <cstring>
#include <string>

namespace {

/// Records an error naming `kernel` and returns false unless `dtype` is a
/// PDRT_DT_* code.
bool validDtype(pdrt_ctx *ctx, const char *kernel, int32_t dtype) {
  if (dtype >= PDRT_DT_F32 && dtype <= PDRT_DT_BOOL)
    return true;
  pdrt::setError(ctx, std::string(kernel) + ": unknown element type " +
                          std::to_string(dtype));
  return false;
}

/// Calls fn(T()) with T the storage type of `dtype` (a valid PDRT_DT_*).
template <typename Fn> void withDtype(int32_t dtype, Fn fn) {
  switch (dtype) {
  case PDRT_DT_F32: return fn(float());
  case PDRT_DT_I64: return fn(int64_t());
  case PDRT_DT_I32: return fn(int32_t());
  default: return fn(uint8_t()); // PDRT_DT_BOOL
  }
}

/// y[i] = x[i] converted from From to To.
template <typename From, typename To>
void castAll(const From *x, To *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = pdrt_cast_value<To>(x[i]);
}

/// out = a (Op) b over a pdrt_binary descriptor, with Op fixed at compile
/// time.
template <int Op, typename T>
void compareAll(const T *a, const T *b, uint8_t *out, const int64_t *desc) {
  pdrt::mapBroadcastPair(desc, a, b, out, [](int64_t, T x, T y) {
    return pdrt_compare_apply<T>(Op, x, y);
  });
}

template <typename T>
void compareOp(int32_t op, const T *a, const T *b, uint8_t *out,
               const int64_t *desc) {
  switch (op) {
  case PDRT_CMP_EQ: return compareAll<PDRT_CMP_EQ>(a, b, out, desc);
  case PDRT_CMP_LT: return compareAll<PDRT_CMP_LT>(a, b, out, desc);
  case PDRT_CMP_LE: return compareAll<PDRT_CMP_LE>(a, b, out, desc);
  case PDRT_CMP_GT: return compareAll<PDRT_CMP_GT>(a, b, out, desc);
  case PDRT_CMP_GE: return compareAll<PDRT_CMP_GE>(a, b, out, desc);
  case PDRT_LOGIC_AND: return compareAll<PDRT_LOGIC_AND>(a, b, out, desc);
  case PDRT_LOGIC_OR: return compareAll<PDRT_LOGIC_OR>(a, b, out, desc);
  default: return compareAll<PDRT_LOGIC_XOR>(a, b, out, desc);
  }
}

/// Records an error and returns false unless op, dtype and desc's rank are
/// valid for pdrt_compare (logic ops need bools).
bool validCompare(pdrt_ctx *ctx, int32_t op, int32_t dtype,
                  const int64_t *desc) {
  if (!validDtype(ctx, "pdrt_compare", dtype))
    return false;
  if (op < PDRT_CMP_EQ || op > PDRT_LOGIC_XOR) {
    pdrt::setError(ctx, "pdrt_compare: unknown op " + std::to_string(op));
    return false;
  }
  if (op >= PDRT_LOGIC_AND && dtype != PDRT_DT_BOOL) {
    pdrt::setError(ctx, "pdrt_compare: logic op " + std::to_string(op) +
                            " needs bool operands, not element type " +
                            std::to_string(dtype));
    return false;
  }
  if (desc[0] < 0 || desc[0] > PDRT_MAX_RANK) {
    pdrt::setError(ctx, "pdrt_compare: rank " + std::to_string(desc[0]) +
                            " exceeds " + std::to_string(PDRT_MAX_RANK));
    return false;
  }
  return true;
}

} // namespace

extern "C" void pdrt_cast(pdrt_ctx *ctx, const void *x, void *y, int64_t n,
                          int32_t from, int32_t to) {
  if (pdrt::hasError(ctx) || !validDtype(ctx, "pdrt_cast", from) ||
      !validDtype(ctx, "pdrt_cast", to) || n <= 0)
    return;
  withDtype(from, [&](auto fromTag) {
    using From = decltype(fromTag);
    withDtype(to, [&](auto toTag) {
      using To = decltype(toTag);
      if (from == to)
        std::memcpy(y, x, sizeof(From) * (size_t)n);
      else
        castAll(static_cast<const From *>(x), static_cast<To *>(y), n);
    });
  });
}

extern "C" void pdrt_compare(pdrt_ctx *ctx, int32_t op, const void *a,
                             const void *b, uint8_t *out, const int64_t *desc,
                             int32_t dtype) {
  if (pdrt::hasError(ctx) || !validCompare(ctx, op, dtype, desc))
    return;
  withDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    compareOp(op, static_cast<const T *>(a), static_cast<const T *>(b), out,
              desc);
  });
}

extern "C" void pdrt_not(pdrt_ctx *ctx, const uint8_t *x, uint8_t *y,
                         int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] == 0 ? 1 : 0;
}
