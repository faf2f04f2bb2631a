//===- RuntimeABI.cpp - Runtime entry points from pdrt_abi.def ------------===//
//
// Builds each entry point's name and LLVM function type from the table the
// runtime checks its own prototypes against (runtime/cpu/abi_check.cc).
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeABI.h"

#include <iterator>

using namespace mlir;
using namespace mlir::pd;

namespace {

/// The parameter and result kinds of pdrt_abi.def.
enum class AbiKind { VOID, PTR, I64, I32, F32 };

struct RuntimeFnInfo {
  const char *name;
  AbiKind result;
  std::initializer_list<AbiKind> params;
};

namespace kinds {
constexpr AbiKind VOID = AbiKind::VOID, PTR = AbiKind::PTR, I64 = AbiKind::I64,
                  I32 = AbiKind::I32, F32 = AbiKind::F32;
} // namespace kinds

using namespace kinds;

const RuntimeFnInfo kRuntimeFns[] = {
#define PDRT_ABI_FN(name, result, ...) {#name, result, {__VA_ARGS__}},
#include "pdrt/pdrt_abi.def"
#undef PDRT_ABI_FN
};
static_assert(std::size(kRuntimeFns) == kNumRuntimeFns,
              "one table row per RuntimeFn");

Type llvmType(MLIRContext *context, AbiKind kind) {
  switch (kind) {
  case AbiKind::VOID:
    return LLVM::LLVMVoidType::get(context);
  case AbiKind::PTR:
    return LLVM::LLVMPointerType::get(context);
  case AbiKind::I64:
    return IntegerType::get(context, 64);
  case AbiKind::I32:
    return IntegerType::get(context, 32);
  case AbiKind::F32:
    return Float32Type::get(context);
  }
  llvm_unreachable("unknown ABI kind");
}

} // namespace

StringRef mlir::pd::getRuntimeFnName(RuntimeFn fn) {
  return kRuntimeFns[static_cast<size_t>(fn)].name;
}

LLVM::LLVMFunctionType mlir::pd::getRuntimeFnType(MLIRContext *context,
                                                  RuntimeFn fn) {
  const RuntimeFnInfo &info = kRuntimeFns[static_cast<size_t>(fn)];
  SmallVector<Type> params;
  for (AbiKind kind : info.params)
    params.push_back(llvmType(context, kind));
  return LLVM::LLVMFunctionType::get(llvmType(context, info.result), params);
}
