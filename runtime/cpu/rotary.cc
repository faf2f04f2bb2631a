//===- rotary.cc - Rotary position embedding ------------------------------===//
//
// y = x cos + rotate_half(x) sin per row of x (Llama's, Mistral's and
// Qwen's RoPE), rotate_half(x) = concat(-x[h:], x[:h]), and with `adjoint`
// the transposed map, its gradient. One pass over x: the unfused export
// wrote the two halves (slices), the negated half, their concatenation
// and the two products, and its gradient stashed the negation's input and
// output. The table row of x row r is (r / repeat) mod table_rows, so that
// a [T, dim] table serves x laid out as [B, H, T, dim] (repeat 1) and as
// [B, T, H, dim] (repeat H) alike: the heads' transpose can stay folded
// into the attention's GEMMs. Partial rotary (GPT-NeoX, Phi) rotates the
// first `rotated` columns of each row and copies the others, where the
// export sliced the row in two and concatenated the halves again.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"

#include <cstring>
#include <string>

namespace {

/// One row: lo/hi are the two halves of x, y and of the table rows.
void rotateRow(const float *__restrict x, const float *__restrict c,
               const float *__restrict s, float *__restrict y, int64_t h) {
  for (int64_t i = 0; i < h; ++i) {
    y[i] = x[i] * c[i] - x[i + h] * s[i];
    y[i + h] = x[i + h] * c[i + h] + x[i] * s[i + h];
  }
}

/// The transposed map of one row.
void rotateRowAdjoint(const float *__restrict x, const float *__restrict c,
                      const float *__restrict s, float *__restrict y,
                      int64_t h) {
  for (int64_t i = 0; i < h; ++i) {
    y[i] = x[i] * c[i] + x[i + h] * s[i + h];
    y[i + h] = x[i + h] * c[i + h] - x[i] * s[i];
  }
}

} // namespace

extern "C" void pdrt_rotary(pdrt_ctx *ctx, const float *x, const float *cos,
                            const float *sin, float *y, int64_t rows,
                            int64_t dim, int64_t rotated, int64_t table_rows,
                            int64_t repeat, int32_t adjoint) {
  if (pdrt::hasError(ctx))
    return;
  if (rotated < 2 || rotated % 2 || rotated > dim || table_rows < 1 ||
      repeat < 1 || rows < 0) {
    pdrt::setError(ctx, "pdrt_rotary: " + std::to_string(rotated) +
                            " rotated of " + std::to_string(dim) +
                            " columns (must be even and at most all), table "
                            "rows " +
                            std::to_string(table_rows) + " and repeat " +
                            std::to_string(repeat) + " (must be >= 1)");
    return;
  }
  const int64_t h = rotated / 2, rest = dim - rotated;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = (r / repeat) % table_rows;
    const float *xr = x + r * dim, *c = cos + t * rotated,
                *s = sin + t * rotated;
    float *yr = y + r * dim;
    if (adjoint)
      rotateRowAdjoint(xr, c, s, yr, h);
    else
      rotateRow(xr, c, s, yr, h);
    if (rest)
      std::memcpy(yr + rotated, xr + rotated, rest * sizeof(float));
  }
}
