//===- PDOpsConv.h - Shape rules of the conv ops ----------------*- C++ -*-===//
//
// The output-size rule of convolution and pooling windows, shared by the
// verifiers of PDOpsConv.td and the ONNX importer (which computes result
// types itself).
//
//===----------------------------------------------------------------------===//

#ifndef PD_DIALECT_PD_IR_PDOPSCONV_H
#define PD_DIALECT_PD_IR_PDOPSCONV_H

#include <cstdint>

namespace mlir::pd {

/// Output size of one spatial axis of a convolution or pooling window:
/// floor (or ceil with `ceilMode`) of
/// (in + padBegin + padEnd - dilation * (kernel - 1) - 1) / stride + 1, where
/// with ceilMode the last window must start inside the input or its begin
/// padding (PyTorch, onnxruntime). Returns <= 0 when no window fits.
/// Same rule as pdrt_conv_out_size in runtime/include/pdrt/pdrt_conv_numerics.h.
int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride,
                       int64_t padBegin, int64_t padEnd, int64_t dilation,
                       bool ceilMode);

} // namespace mlir::pd

#endif // PD_DIALECT_PD_IR_PDOPSCONV_H
