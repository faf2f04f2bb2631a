//===- conv_onednn.h - Convolutions through oneDNN's primitives -*- C++ -*-===//
//
// pdrt_conv2d and its two gradients run oneDNN's convolution primitives
// (forward, backward data, backward weights) on pdrt's plain NCHW / OIHW
// buffers where bench/kernels/onednn_kernels found them faster than
// im2col + sgemm (conv_onednn.cc's preferOneDnn). A primitive is created
// with format `any`, so that oneDNN picks its blocked layouts and direct
// JIT kernels, once per geometry and thread; its operands are reordered
// from and to the plain buffers around it through scratch buffers shared
// by every primitive of the thread. A geometry left to pdrt, one oneDNN
// cannot run, or a oneDNN error makes the call return false, and conv.cc
// runs its own kernel instead.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_CONV_ONEDNN_H
#define PDRT_CPU_CONV_ONEDNN_H

#include "pdrt/pdrt_conv_numerics.h"

namespace pdrt::onednn {

/// Turns the oneDNN convolutions off (tests of the im2col kernels) or on
/// (the default) for the calling thread.
void useOneDnn(bool on);

/// How many primitives the calling thread has created (tests).
int primitivesCreated();

/// y = conv(x, w) (+ b when not null).
bool convForward(const pdrt_conv_geom &g, const float *x, const float *w,
                 const float *b, float *y);
/// dx = the input gradient of conv for dy (overwritten).
bool convBackwardData(const pdrt_conv_geom &g, const float *dy, const float *w,
                      float *dx);
/// dw = the filter gradient of conv for dy (overwritten).
bool convBackwardWeights(const pdrt_conv_geom &g, const float *dy,
                         const float *x, float *dw);

} // namespace pdrt::onednn

#endif // PDRT_CPU_CONV_ONEDNN_H
