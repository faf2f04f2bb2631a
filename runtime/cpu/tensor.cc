//===- tensor.cc - CPU kernels of tensor ops ---------------------------------===//
//
// CPU implementations of runtime/include/pdrt/pdrt_tensor.h.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
