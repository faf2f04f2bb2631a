//===- gemm_library.h - Which library runs a pdrt_matmul --------*- C++ -*-===//
//
// pdrt_matmul runs on oneDNN's sgemm or OpenBLAS's, per shape. Which one is
// faster depends on the machine more than on the shape: on an Ice Lake
// Xeon (AVX-512) oneDNN was 5-16% faster on the benchmark GPTs' GEMMs and
// OpenBLAS only on a few weight gradients (sgemm_tn.h); on a Zen 3 EPYC
// (AVX2) oneDNN ran every weight gradient (A^T B) at half OpenBLAS's rate
// and OpenBLAS the forward products 5% slower or 12% faster alone
// (bench/kernels/run.sh sgemm_libs); in place, one process per core
// (pdc --profile), the weight gradients ran 1.95-2.35x faster
// on OpenBLAS and the other products within 8% either way, oneDNN ahead
// on the widest; on a GPT with n_embd 64 oneDNN won 14 of its 15 shapes
// on the same machine. So the choice is measured: pdc
// --profile times every GEMM of the model on both libraries on the
// compiling machine and the plan's manifest carries the faster one per
// shape ("gemm_libraries"). Shapes it does not list (no profile, or a
// GEMM the planner split) take the default below; PDRT_GEMM_LIBRARY=onednn
// or openblas puts every pdrt_matmul of the process on one library, and
// PDRT_GEMM_LIBRARY=alternate switches library from one microbatch to the
// next (pdc --profile's timing run: each op's calls on either library
// interleaved, so that a change in the machine's load between them touches
// both alike; run --profile-ops then times each op per library).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_GEMM_LIBRARY_H
#define PDRT_CPU_GEMM_LIBRARY_H

#include "exec/manifest.h"

#include <cstdint>
#include <optional>
#include <string_view>

struct pdrt_ctx;

namespace pdrt {

/// The library named "onednn" or "openblas" (the manifest's and
/// PDRT_GEMM_LIBRARY's spelling), none for another name.
std::optional<GemmLibrary> gemmLibraryNamed(std::string_view name);

/// PDRT_GEMM_LIBRARY's library, if it names one (read once; a value that
/// is neither a library nor "alternate" is reported once on stderr and
/// ignored).
std::optional<GemmLibrary> forcedGemmLibrary();

/// Under "alternate", the library of global microbatch `microbatch` (t*m +
/// i): oneDNN where i + t is even, OpenBLAS where odd, so each microbatch
/// of a step runs on both libraries in turn over the steps.
GemmLibrary alternateGemmLibrary(int64_t microbatch, int64_t microbatches);

/// The library every pdrt_matmul of the running call takes under
/// "alternate" (by ctx's microbatch), none otherwise.
std::optional<GemmLibrary> alternatingGemmLibrary(const pdrt_ctx *ctx);

/// Without a measurement: OpenBLAS on a CPU without AVX-512 (the Zen 3
/// above), and for sgemm_tn.h's aliasing A^T B shapes; else oneDNN.
GemmLibrary defaultGemmLibrary(const GemmShape2D &shape);

/// The library of one pdrt_matmul: PDRT_GEMM_LIBRARY (a library, or the
/// microbatch's under "alternate"), else the plan's measured choice for the
/// shape, else the default.
GemmLibrary chooseGemmLibrary(const pdrt_ctx *ctx, const GemmShape2D &shape);

/// Under run --profile-ops, records that the op being timed ran a GEMM of
/// `shape` (the op's entry in the --profile-ops file lists them).
void noteProfiledGemm(pdrt_ctx *ctx, const GemmShape2D &shape);

} // namespace pdrt

#endif // PDRT_CPU_GEMM_LIBRARY_H
