//===- abi_check.cc - The pdrt headers against pdrt_abi.def ---------------===//
//
// Compiled stage code calls the runtime through the declarations
// pd-lower-to-runtime builds from pdrt_abi.def. This file checks at build
// time that each prototype in the pdrt headers has the parameter and result
// kinds the table says, so the two can never drift apart silently.
//
//===----------------------------------------------------------------------===//

#include "pdrt/pdrt.h"
#include "pdrt/pdrt_conv.h"
#include "pdrt/pdrt_nn.h"
#include "pdrt/pdrt_tensor.h"

#include <cstdint>
#include <initializer_list>
#include <type_traits>

namespace pdrt_abi {

enum Kind { VOID, PTR, I64, I32, F32, OTHER };

template <typename T> constexpr Kind kindOf() {
  if constexpr (std::is_void_v<T>)
    return VOID;
  else if constexpr (std::is_pointer_v<T>)
    return PTR;
  else if constexpr (std::is_same_v<T, int64_t>)
    return I64;
  else if constexpr ((std::is_integral_v<T> || std::is_enum_v<T>) &&
                     sizeof(T) == 4)
    return I32;
  else if constexpr (std::is_same_v<T, float>)
    return F32;
  else
    return OTHER;
}

template <int N> struct Kinds {
  Kind k[N];
};

/// True if `R (*)(A...)` has result kind `result` and parameter kinds
/// `params`.
template <typename R, typename... A, int N>
constexpr bool matches(R (*)(A...), Kind result, const Kinds<N> &params) {
  if (sizeof...(A) != N || kindOf<R>() != result)
    return false;
  Kind actual[] = {kindOf<A>()...};
  for (int i = 0; i < N; ++i)
    if (actual[i] != params.k[i])
      return false;
  return true;
}

#define PDRT_ABI_FN(name, result, ...)                                         \
  static_assert(                                                               \
      matches(&name, result,                                                   \
              Kinds<std::initializer_list<Kind>{__VA_ARGS__}.size()>{          \
                  {__VA_ARGS__}}),                                             \
      #name " differs from runtime/include/pdrt/pdrt_abi.def");
#include "pdrt/pdrt_abi.def"
#undef PDRT_ABI_FN

} // namespace pdrt_abi
