//===- nn.cc - CPU kernels of nn ops ---------------------------------===//
//
// CPU implementations of runtime/include/pdrt/pdrt_nn.h.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
