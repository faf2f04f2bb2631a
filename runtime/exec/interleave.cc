//===- interleave.cc - Batched kernels run entry by entry ------------------===//
//
// pdrt_interleave_begin / _end (exec/interleave.h). With run --profile-ops
// each recorded call's time, summed over its entries, goes to the op its
// mark times, as if it had run where it stands.
//
//===----------------------------------------------------------------------===//

#include "exec/interleave.h"

#include "exec/context.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace pdrt {

bool interleaving(const pdrt_ctx *ctx) { return ctx && ctx->interleaved.open; }

void defer(pdrt_ctx *ctx, std::unique_ptr<DeferredKernel> call) {
  call->profileMark = ctx->profile ? ctx->profileMark : -1;
  ctx->interleaved.calls.push_back(std::move(call));
}

bool entriesIndependent(const std::vector<EntryAccess> &accesses) {
  struct Row {
    uintptr_t begin, end;
    int64_t entry;
    bool write;
    size_t access;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < accesses.size(); ++i) {
    const EntryAccess &a = accesses[i];
    for (size_t e = 0; e < a.bases.size(); ++e)
      for (int64_t r = 0; r < a.rows && a.rowBytes > 0; ++r) {
        uintptr_t begin = a.bases[e] + (uintptr_t)(r * a.ldBytes);
        rows.push_back(
            {begin, begin + (uintptr_t)a.rowBytes, (int64_t)e, a.write, i});
      }
  }
  std::sort(rows.begin(), rows.end(), [](const Row &x, const Row &y) {
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  // Identical rows merge (one entry if any writes, or one accumulating
  // access); distinct rows may overlap only when neither writes.
  uintptr_t endAll = 0, endWritten = 0;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    bool write = false, oneEntry = true, oneAccess = true;
    for (; j < rows.size() && rows[j].begin == rows[i].begin &&
           rows[j].end == rows[i].end;
         ++j) {
      write |= rows[j].write;
      oneEntry &= rows[j].entry == rows[i].entry;
      oneAccess &= rows[j].access == rows[i].access;
    }
    bool accumulated = oneAccess && accesses[rows[i].access].accumulates;
    if (write && !oneEntry && !accumulated)
      return false;
    if (rows[i].begin < endWritten || (write && rows[i].begin < endAll))
      return false;
    endAll = std::max(endAll, rows[i].end);
    if (write)
      endWritten = std::max(endWritten, rows[i].end);
    i = j;
  }
  return true;
}

/// The number of parts every call of `calls` runs in: the GEMMs' common
/// entry count when every call splits into it, else 1 (whole calls).
static int64_t commonParts(
    const std::vector<std::unique_ptr<DeferredKernel>> &calls) {
  int64_t parts = 0;
  for (const auto &call : calls) {
    int64_t entries = call->gemmEntries();
    if (entries > 0 && parts > 0 && entries != parts)
      return 1;
    if (entries > 0)
      parts = entries;
  }
  if (parts <= 1)
    return 1;
  for (const auto &call : calls)
    if (!call->splits(parts))
      return 1;
  return parts;
}

/// `parts` if the calls may run in that many parts entry by entry (cached
/// by the calls' keys), else 1.
static int64_t checkedParts(InterleavedGroup &group, int64_t parts) {
  // PDRT_INTERLEAVE=0 runs every group whole (to compare the two).
  static const bool off = [] {
    const char *v = std::getenv("PDRT_INTERLEAVE");
    return v && std::strcmp(v, "0") == 0;
  }();
  if (parts == 1 || off)
    return 1;
  std::vector<uintptr_t> key{(uintptr_t)parts};
  for (const auto &call : group.calls)
    call->key(key);
  auto [it, added] = group.checked.try_emplace(std::move(key), false);
  if (added) {
    std::vector<EntryAccess> accesses;
    for (const auto &call : group.calls)
      call->accesses(parts, accesses);
    it->second = entriesIndependent(accesses);
  }
  return it->second ? parts : 1;
}

} // namespace pdrt

extern "C" void pdrt_interleave_begin(pdrt_ctx *ctx) {
  if (!ctx)
    return;
  if (ctx->interleaved.open)
    pdrt::setError(ctx, "pdrt_interleave_begin: a group is already open");
  ctx->interleaved.open = true;
  ctx->interleaved.calls.clear();
}

extern "C" void pdrt_interleave_end(pdrt_ctx *ctx) {
  if (!ctx)
    return;
  pdrt::InterleavedGroup &group = ctx->interleaved;
  group.open = false;
  if (pdrt::hasError(ctx)) {
    group.calls.clear();
    return;
  }
  int64_t parts = pdrt::checkedParts(group, pdrt::commonParts(group.calls));
  std::vector<std::unique_ptr<pdrt::DeferredKernel>> calls = std::move(group.calls);
  group.calls.clear();
  using Clock = std::chrono::steady_clock;
  std::vector<double> seconds(calls.size(), 0.0);
  for (int64_t i = 0; i < parts; ++i)
    for (size_t c = 0; c < calls.size(); ++c) {
      if (!ctx->profile) {
        calls[c]->run(ctx, i, parts);
        continue;
      }
      Clock::time_point start = Clock::now();
      calls[c]->run(ctx, i, parts);
      seconds[c] += std::chrono::duration<double>(Clock::now() - start).count();
    }
  if (!ctx->profile)
    return;
  for (size_t c = 0; c < calls.size(); ++c)
    if (calls[c]->profileMark >= 0)
      ctx->opTimes[calls[c]->profileMark].first += seconds[c];
  // The mark passed last times the ops after the group, not the group.
  ctx->profileAt = Clock::now();
}
