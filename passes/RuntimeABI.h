//===- RuntimeABI.h - The runtime entry points stage code calls -*- C++ -*-===//
//
// The compiler's view of runtime/include/pdrt/pdrt_abi.def: one RuntimeFn
// per entry point, with the LLVM function type its table line gives. The
// lowering declares callees only through here, so a call can never be typed
// from its arguments.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_RUNTIMEABI_H
#define PD_PASSES_RUNTIMEABI_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::pd {

/// Every runtime entry point, named as in pdrt_abi.def.
enum class RuntimeFn {
#define PDRT_ABI_FN(name, ...) name,
#include "pdrt/pdrt_abi.def"
#undef PDRT_ABI_FN
};

/// How many entry points pdrt_abi.def lists.
constexpr unsigned kNumRuntimeFns = 0
#define PDRT_ABI_FN(name, ...) +1
#include "pdrt/pdrt_abi.def"
#undef PDRT_ABI_FN
    ;

/// The C name of `fn` in the pdrt headers (e.g. "pdrt_matmul").
StringRef getRuntimeFnName(RuntimeFn fn);

/// The LLVM function type pdrt_abi.def gives `fn`.
LLVM::LLVMFunctionType getRuntimeFnType(MLIRContext *context, RuntimeFn fn);

} // namespace mlir::pd

#endif // PD_PASSES_RUNTIMEABI_H
