//===- conv.cc - CPU kernels of conv ops ---------------------------------===//
//
// CPU implementations of runtime/include/pdrt/pdrt_conv.h.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
