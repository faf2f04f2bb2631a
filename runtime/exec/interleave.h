//===- interleave.h - Batched kernels run entry by entry ---------*- C++ -*-===//
//
// Between pdrt_interleave_begin and pdrt_interleave_end, the batched
// kernels that support it (pdrt_batch_matmul_strided, pdrt_masked_softmax,
// pdrt_masked_softmax_grad) record their call instead of running it; the
// end runs the recorded calls batch entry by batch entry: entry 0 of every
// call in program order, then entry 1, ... Attention's backward (dP = dO
// V^T, its softmax gradient dS, dV, dQ and dK) then works on one (batch,
// head)'s T x T scores while they are in L2, instead of streaming all of
// them through memory once per kernel. pd-interleave-batched-ops groups the
// calls; the runtime runs them entry by entry only when that computes what
// running them whole and in order computes: every call splits into the
// same entries, and wherever two calls' accesses meet and one writes,
// they touch the same rows of the same entry (one tensor flowing from call
// to call, or a kernel writing over its operand). Memory the buffer
// allocator gave to two tensors, or entries that overlap, make the group
// run whole (checked once per group and set of addresses).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_INTERLEAVE_H
#define PDRT_EXEC_INTERLEAVE_H

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

struct pdrt_ctx;

namespace pdrt {

/// The memory one operand of a call touches in each of its entries: rows
/// of rowBytes bytes, ldBytes apart, from each entry's base address.
/// `accumulates`: a written operand whose entries may share rows, each
/// adding to what the entries before it wrote (a GEMM summing a group of
/// products into one C); run entry by entry, they still run in order.
struct EntryAccess {
  bool write = false;
  bool accumulates = false;
  int64_t rows = 0, rowBytes = 0, ldBytes = 0;
  std::vector<uintptr_t> bases;
};

/// One recorded kernel call of an interleaved group.
class DeferredKernel {
public:
  virtual ~DeferredKernel() = default;
  /// The batch entries of a batched GEMM; 0 for a kernel over rows.
  virtual int64_t gemmEntries() const { return 0; }
  /// Whether the call divides into `parts` equal parts, part i touching
  /// entry i of the group's GEMMs.
  virtual bool splits(int64_t parts) const = 0;
  /// Runs part `i` of `parts` (parts == 1: the whole call).
  virtual void run(pdrt_ctx *ctx, int64_t i, int64_t parts) = 0;
  /// Appends what each operand touches in each of `parts` parts.
  virtual void accesses(int64_t parts, std::vector<EntryAccess> &out) const = 0;
  /// Appends the words that identify the call (its addresses and shape).
  virtual void key(std::vector<uintptr_t> &out) const = 0;
  /// The profile mark passed before the call (run --profile-ops).
  int64_t profileMark = -1;
};

/// The calls recorded since pdrt_interleave_begin.
struct InterleavedGroup {
  bool open = false;
  std::vector<std::unique_ptr<DeferredKernel>> calls;
  /// Whether a group's calls (by their keys) may run entry by entry.
  std::map<std::vector<uintptr_t>, bool> checked;
};

/// Whether ctx is inside pdrt_interleave_begin / _end (a kernel then
/// records its call with defer instead of running it).
bool interleaving(const pdrt_ctx *ctx);

/// Records `call` in ctx's open group.
void defer(pdrt_ctx *ctx, std::unique_ptr<DeferredKernel> call);

/// Whether running the calls whose accesses these are entry by entry
/// computes what running them whole and in order does: every byte that
/// two accesses touch, one of them writing, lies in identical rows of the
/// same entry of both, or in identical rows that only one accumulating
/// access touches (its entries run in order either way).
bool entriesIndependent(const std::vector<EntryAccess> &accesses);

} // namespace pdrt

#endif // PDRT_EXEC_INTERLEAVE_H
