/*===- pdrt_conv_numerics.h - Index math of convolution and pooling -*- C++ -*-===//
 *
 * The geometry descriptor of the conv and pooling kernels, the im2col /
 * col2im index math and the pooling windows. Inline, header-only and free of
 * host-only calls, so g++ (runtime/cpu) and nvcc (a CUDA backend) compile the
 * same code and the CPU tests cover it.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_CONV_NUMERICS_H
#define PDRT_PDRT_CONV_NUMERICS_H

#include <stdint.h>

#include "pdrt/pdrt_numerics.h" /* PDRT_HD */

/// Words of a geometry descriptor (the `desc` argument of pdrt_conv.h):
/// [n, c, h, w, m, kh, kw, oh, ow, sh, sw, pt, pl, pb, pr, dh, dw, group,
///  flags]. Input [n, c, h, w], output [n, m, oh, ow], kernel kh x kw,
/// strides sh/sw, pads top/left/bottom/right, dilations dh/dw, `group`
/// channel groups (pooling: m = c = group, dilations 1), `flags` bit 0 =
/// count_include_pad of average pooling.
#define PDRT_CONV_DESC_WORDS 19

/// The decoded geometry descriptor.
typedef struct pdrt_conv_geom {
  int64_t n, c, h, w, m, kh, kw, oh, ow, sh, sw, pt, pl, pb, pr, dh, dw, group,
      flags;
} pdrt_conv_geom;

PDRT_HD pdrt_conv_geom pdrt_conv_geom_from(const int64_t *d) {
  pdrt_conv_geom g = {d[0],  d[1],  d[2],  d[3],  d[4],  d[5],  d[6],
                      d[7],  d[8],  d[9],  d[10], d[11], d[12], d[13],
                      d[14], d[15], d[16], d[17], d[18]};
  return g;
}

/// Output size of one spatial axis: floor (or ceil with `ceil_mode`) of
/// (in + pad_begin + pad_end - dilation * (k - 1) - 1) / stride + 1; with
/// ceil_mode the last window must start inside the input or its begin pad
/// (PyTorch and onnxruntime). Returns <= 0 when no window fits.
PDRT_HD int64_t pdrt_conv_out_size(int64_t in, int64_t k, int64_t stride,
                                   int64_t pad_begin, int64_t pad_end,
                                   int64_t dilation, int ceil_mode) {
  int64_t span = in + pad_begin + pad_end - dilation * (k - 1) - 1;
  if (span < 0 || stride <= 0)
    return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin)
    --out;
  return out;
}

/// Rows of the im2col matrix of one group: (c / group) * kh * kw.
PDRT_HD int64_t pdrt_conv_col_rows(const pdrt_conv_geom *g) {
  return (g->c / g->group) * g->kh * g->kw;
}

/// Decodes im2col row `row` = (ci * kh + ky) * kw + kx into the input
/// channel (within the group) and the kernel tap.
PDRT_HD void pdrt_conv_col_decode(const pdrt_conv_geom *g, int64_t row,
                                  int64_t *ci, int64_t *ky, int64_t *kx) {
  *kx = row % g->kw;
  *ky = (row / g->kw) % g->kh;
  *ci = row / (g->kw * g->kh);
}

/// The input row read by kernel row `ky` at output row `oy` (may fall in
/// the padding: < 0 or >= h); likewise columns.
PDRT_HD int64_t pdrt_conv_in_y(const pdrt_conv_geom *g, int64_t oy,
                               int64_t ky) {
  return oy * g->sh - g->pt + ky * g->dh;
}
PDRT_HD int64_t pdrt_conv_in_x(const pdrt_conv_geom *g, int64_t ox,
                               int64_t kx) {
  return ox * g->sw - g->pl + kx * g->dw;
}

/// The input offset (within one image's channel group) read by im2col row
/// `row` at output position (oy, ox), or -1 where the kernel tap falls into
/// the zero padding.
PDRT_HD int64_t pdrt_conv_col_source(const pdrt_conv_geom *g, int64_t row,
                                     int64_t oy, int64_t ox) {
  int64_t ci, ky, kx;
  pdrt_conv_col_decode(g, row, &ci, &ky, &kx);
  int64_t iy = pdrt_conv_in_y(g, oy, ky), ix = pdrt_conv_in_x(g, ox, kx);
  if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w)
    return -1;
  return (ci * g->h + iy) * g->w + ix;
}

/// A pooling window clipped to the input: rows [y0, y1), columns [x0, x1),
/// and the divisor of average pooling (the window's size including the
/// pads but not the part beyond them with count_include_pad, else the
/// clipped size; PyTorch's rule).
typedef struct pdrt_pool_window {
  int64_t y0, y1, x0, x1, divisor;
} pdrt_pool_window;

PDRT_HD pdrt_pool_window pdrt_pool_window_at(const pdrt_conv_geom *g,
                                             int64_t oy, int64_t ox) {
  int64_t ys = oy * g->sh - g->pt, xs = ox * g->sw - g->pl;
  int64_t ye = ys + g->kh, xe = xs + g->kw;
  int64_t yp = ye < g->h + g->pb ? ye : g->h + g->pb;
  int64_t xp = xe < g->w + g->pr ? xe : g->w + g->pr;
  int64_t padded = (yp - ys) * (xp - xs);
  pdrt_pool_window win;
  win.y0 = ys > 0 ? ys : 0;
  win.x0 = xs > 0 ? xs : 0;
  win.y1 = ye < g->h ? ye : g->h;
  win.x1 = xe < g->w ? xe : g->w;
  int64_t clipped = (win.y1 - win.y0) * (win.x1 - win.x0);
  win.divisor = (g->flags & 1) ? padded : clipped;
  return win;
}

#endif /* PDRT_PDRT_CONV_NUMERICS_H */
