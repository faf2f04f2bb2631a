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

namespace {

/// PDRT_GEMM_LIBRARY, read once: a library, "alternate", or nothing.
struct GemmLibraryEnv {
  std::optional<GemmLibrary> forced;
  bool alternate = false;
};

GemmLibraryEnv readGemmLibraryEnv() {
  GemmLibraryEnv env;
  const char *value = std::getenv("PDRT_GEMM_LIBRARY");
  if (!value || !*value)
    return env;
  env.forced = gemmLibraryNamed(value);
  env.alternate = std::string_view(value) == "alternate";
  if (!env.forced && !env.alternate)
    std::fprintf(stderr, "pdrt: warning: PDRT_GEMM_LIBRARY='%s' is none of "
                         "onednn, openblas and alternate; ignored\n", value);
  return env;
}

const GemmLibraryEnv &gemmLibraryEnv() {
  static const GemmLibraryEnv env = readGemmLibraryEnv();
  return env;
}

} // namespace

std::optional<GemmLibrary> forcedGemmLibrary() { return gemmLibraryEnv().forced; }

GemmLibrary alternateGemmLibrary(int64_t microbatch, int64_t microbatches) {
  // Global microbatch g = t*m + i: (i + t) % 2 flips along a step and
  // from one step to the next.
  int64_t m = std::max<int64_t>(microbatches, 1);
  return (microbatch % m + microbatch / m) % 2 == 0 ? GemmLibrary::OneDNN
                                                    : GemmLibrary::OpenBLAS;
}

std::optional<GemmLibrary> alternatingGemmLibrary(const pdrt_ctx *ctx) {
  if (!gemmLibraryEnv().alternate || !ctx)
    return std::nullopt;
  return alternateGemmLibrary(ctx->microbatch,
                              ctx->manifest ? ctx->manifest->microbatches : 1);
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
  if (std::optional<GemmLibrary> alternate = alternatingGemmLibrary(ctx))
    return *alternate;
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
