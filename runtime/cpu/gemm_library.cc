//===- gemm_library.cc - Which library runs a pdrt_matmul -----------------===//
//
// See gemm_library.h.
//
//===----------------------------------------------------------------------===//

#include "cpu/gemm_library.h"
#include "cpu/sgemm_tn.h"
#include "cpu/vmath.h"
#include "exec/context.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace pdrt {

std::optional<GemmLibrary> gemmLibraryNamed(std::string_view name) {
  if (name == "onednn")
    return GemmLibrary::OneDNN;
  if (name == "openblas")
    return GemmLibrary::OpenBLAS;
  return std::nullopt;
}

static std::optional<GemmLibrary> readForcedGemmLibrary() {
  const char *value = std::getenv("PDRT_GEMM_LIBRARY");
  if (!value || !*value)
    return std::nullopt;
  std::optional<GemmLibrary> library = gemmLibraryNamed(value);
  if (!library)
    std::fprintf(stderr, "pdrt: warning: PDRT_GEMM_LIBRARY='%s' is neither "
                         "onednn nor openblas; ignored\n", value);
  return library;
}

std::optional<GemmLibrary> forcedGemmLibrary() {
  static const std::optional<GemmLibrary> forced = readForcedGemmLibrary();
  return forced;
}

GemmLibrary defaultGemmLibrary(const GemmShape2D &shape) {
  static const bool avx512 = vmath::cpuHasAvx512();
  if (!avx512)
    return GemmLibrary::OpenBLAS;
  if (shape.transA && !shape.transB &&
      chooseTNPath(shape.m, shape.n) == TNPath::OpenBLAS)
    return GemmLibrary::OpenBLAS;
  return GemmLibrary::OneDNN;
}

GemmLibrary chooseGemmLibrary(const pdrt_ctx *ctx, const GemmShape2D &shape) {
  if (std::optional<GemmLibrary> forced = forcedGemmLibrary())
    return *forced;
  if (ctx && ctx->manifest) {
    const auto &table = ctx->manifest->gemmLibraries;
    auto it = table.find(shape);
    if (it != table.end())
      return it->second;
  }
  return defaultGemmLibrary(shape);
}

void noteProfiledGemm(pdrt_ctx *ctx, const GemmShape2D &shape) {
  if (!ctx || !ctx->profile || ctx->profileMark < 0)
    return;
  std::vector<GemmShape2D> &shapes = ctx->opGemms[ctx->profileMark];
  auto same = [&](const GemmShape2D &s) { return !(s < shape) && !(shape < s); };
  if (std::none_of(shapes.begin(), shapes.end(), same))
    shapes.push_back(shape);
}

} // namespace pdrt
