//===- StageArena.cpp - The stage model's buffer passes ---------*- C++ -*-===//
//
// pd-fuse-bias-gradients, pd-concat-in-place and pd-allocate-buffers'
// stash roots, views and workspace packing, re-enacted on the stage
// model's functions (StageFunctions.h). Keep each in step with its pass;
// pdc compares the model with every plan it compiles.
//
//===----------------------------------------------------------------------===//

#include "StageFunctions.h"
#include "pd/Support/ArenaRules.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pd;
using GraphOp = ProgramGraph::OpKind;

namespace mlir::pd::stage_model {

/// pd-allocate-buffers' onlyCutIntoWindows: whether every reader of `v`
/// in `fn` is a contiguous slice.
static bool onlyCutIntoWindows(const ProgramGraph &g, const VFn &fn,
                               int32_t v) {
  if (llvm::is_contained(fn.returned, v))
    return false;
  for (const VOp &op : fn.ops)
    if (op.alive && llvm::is_contained(fn.operandsOf(op), v) &&
        (op.kind != VKind::Clone || !g.ops[op.orig].window))
      return false;
  return true;
}

/// pd-allocate-buffers' homeRoot: what holds the stashed or sent value
/// `v`: the start of its chain of views when the function computes it (not
/// a constant or an argument, homed nowhere or in the stash), else `v`.
/// The chain goes through reshapes, and through contiguous slices of
/// values that only such slices read.
int32_t homeRoot(const ProgramGraph &g, const VFn &fn, int32_t v) {
  if (fn.vals[v].home != Home::None)
    return v;
  int32_t root = v;
  for (int32_t d = fn.vals[root].def; d >= 0; d = fn.vals[root].def) {
    const VOp &op = fn.ops[d];
    if (op.kind != VKind::Clone)
      break;
    const ProgramGraph::Op &view = g.ops[op.orig];
    int32_t in = fn.pool[op.operandBegin];
    if (!view.view && !(view.window && onlyCutIntoWindows(g, fn, in)))
      break;
    const VVal &input = fn.vals[in];
    if (input.constant || input.def < 0 ||
        (input.home != Home::None && input.home != Home::Stash))
      break;
    root = in;
  }
  return root;
}

/// pd-allocate-buffers' shareWithOperand: a stashed value `v` that its
/// op writes over operand 0 (the graph op's inPlaceResult: a cross-entropy
/// gradient over its logits, a masked softmax over its scores) has that
/// operand's reshape chain start, computed by an op of this function,
/// share its stash slot (the reshapes then view it).
void shareWithOperand(const ProgramGraph &g, VFn &fn, int32_t v) {
  int32_t d = fn.vals[v].def;
  if (d < 0 || fn.ops[d].kind != VKind::Clone)
    return;
  int32_t result = g.ops[fn.ops[d].orig].inPlaceResult;
  if (result < 0 || v != (int32_t)fn.ops[d].resultBegin + result)
    return;
  int32_t in = fn.pool[fn.ops[d].operandBegin];
  while (true) {
    const VVal &val = fn.vals[in];
    if (val.def < 0 || val.constant || fn.ops[val.def].kind != VKind::Clone ||
        g.ops[fn.ops[val.def].orig].kind != GraphOp::Compute)
      return;
    const VOp &producer = fn.ops[val.def];
    if (!g.ops[producer.orig].view)
      break;
    in = fn.pool[producer.operandBegin];
  }
  if (fn.vals[in].home == Home::None)
    fn.vals[in].home = Home::Stash;
}

/// pd-allocate-buffers' views: a reshape or contiguous slice result
/// without a home (nor a concat's part) takes its input's (a function
/// argument is a stash slot), else shares its input's workspace slot; a
/// constant input is copied.
void allocateViews(const ProgramGraph &g, VFn &fn) {
  fn.viewOf.assign(fn.vals.size(), -1);
  fn.offStart.assign(fn.vals.size(), false);
  for (VOp &op : fn.ops) {
    if (!op.alive || op.kind != VKind::Clone)
      continue;
    const ProgramGraph::Op &view = g.ops[op.orig];
    if (!view.view && !view.window)
      continue;
    int32_t in = fn.pool[op.operandBegin], out = op.resultBegin;
    VVal &result = fn.vals[out];
    const VVal &input = fn.vals[in];
    if (result.home != Home::None || fn.partOf[out] >= 0 || input.constant)
      continue;
    op.viewed = true;
    if (input.def < 0) {
      result.home = Home::Stash;
    } else if (input.home != Home::None) {
      result.home = input.home;
    } else {
      fn.viewOf[out] = fn.viewOf[in] >= 0 ? fn.viewOf[in] : in;
      fn.offStart[out] =
          fn.offStart[in] || (view.window && !view.windowAtStart);
    }
  }
}

/// pd-allocate-buffers' overwritten operands (getOverwritableOperand): in
/// op order, a result whose op may write it over an operand takes the
/// operand's workspace slot (slotRoot) when the op is the slot's last
/// reader (`end`: each slot's last reader so far, merged as slots are
/// shared) and the slot, not a concat's (firstPart), is large enough.
static void overwriteDyingOperands(const ProgramGraph &g, const VFn &fn,
                                   ArrayRef<int64_t> position,
                                   ArrayRef<int64_t> firstPart,
                                   std::vector<int64_t> &end,
                                   std::vector<int32_t> &slotRoot) {
  auto rootOf = [&](int32_t v) {
    int32_t r = fn.viewOf[v] >= 0 ? fn.viewOf[v] : v;
    while (slotRoot[r] != r)
      r = slotRoot[r];
    return r;
  };
  auto inWorkspace = [&](int32_t v) {
    const VVal &val = fn.vals[v];
    return val.def >= 0 && val.home == Home::None && !val.constant &&
           fn.partOf[v] < 0 && firstPart[v] < 0;
  };
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    const VOp &op = fn.ops[i];
    if (!op.alive || op.kind != VKind::Clone ||
        g.ops[op.orig].overwritableOperand < 0)
      continue;
    int32_t v = op.resultBegin;
    int32_t x = fn.pool[op.operandBegin + g.ops[op.orig].overwritableOperand];
    int32_t r = rootOf(x);
    if (!inWorkspace(v) || !inWorkspace(r) || fn.offStart[x] ||
        end[r] != position[i] ||
        alignArena(fn.vals[r].bytes) < alignArena(fn.vals[v].bytes))
      continue;
    slotRoot[v] = r;
    end[r] = std::max(end[r], end[v]);
  }
}

/// The workspace of one function: values no other region holds (constants
/// live in the stage object), live from their definition to their last
/// use (the return included), views sharing their input's slot, an
/// in-place concat's parts its slot, gradients their dying operand's,
/// packed first-fit.
int64_t workspaceBytes(const ProgramGraph &g, const VFn &fn) {
  std::vector<int64_t> position(fn.ops.size(), -1);
  int64_t next = 0;
  for (size_t i = 0; i < fn.ops.size(); ++i)
    if (fn.ops[i].alive)
      position[i] = next++;
  int64_t returnAt = next;
  std::vector<int64_t> lastUse(fn.vals.size(), -1);
  for (size_t i = 0; i < fn.ops.size(); ++i)
    if (fn.ops[i].alive)
      for (int32_t v : fn.operandsOf(fn.ops[i]))
        lastUse[v] = std::max(lastUse[v], position[i]);
  for (int32_t v : fn.returned)
    lastUse[v] = returnAt;
  // A view keeps the slot it shares live for its own uses.
  for (size_t v = 0; v < fn.vals.size(); ++v)
    if (fn.viewOf[v] >= 0) {
      int32_t root = fn.viewOf[v];
      int64_t end =
          std::max(position[fn.vals[v].def], lastUse[v]);
      lastUse[root] = std::max(lastUse[root], end);
    }
  // A part keeps the concat result's slot live from its own definition:
  // the slot is placed at the first part (pd-concat-in-place).
  std::vector<int64_t> firstPart(fn.vals.size(), -1);
  for (size_t v = 0; v < fn.vals.size(); ++v)
    if (int32_t whole = fn.partOf[v]; whole >= 0) {
      int64_t at = position[fn.vals[v].def];
      lastUse[whole] = std::max({lastUse[whole], at, lastUse[v],
                                 position[fn.vals[whole].def]});
      if (firstPart[whole] < 0 || at < firstPart[whole])
        firstPart[whole] = at;
    }
  // Each value's end as a slot (its definition if never read).
  for (size_t v = 0; v < fn.vals.size(); ++v)
    if (fn.vals[v].def >= 0 && fn.ops[fn.vals[v].def].alive)
      lastUse[v] = std::max(lastUse[v], position[fn.vals[v].def]);
  std::vector<int32_t> slotRoot(fn.vals.size());
  for (size_t v = 0; v < fn.vals.size(); ++v)
    slotRoot[v] = v;
  overwriteDyingOperands(g, fn, position, firstPart, lastUse, slotRoot);
  llvm::SmallVector<LiveInterval> intervals;
  auto addInterval = [&](uint32_t v, int64_t at) {
    const VVal &val = fn.vals[v];
    if (val.home != Home::None || val.constant || fn.viewOf[v] >= 0 ||
        slotRoot[v] != (int32_t)v)
      return;
    intervals.push_back(
        {at, std::max(at, lastUse[v]), alignArena(val.bytes), 0});
  };
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    const VOp &op = fn.ops[i];
    if (!op.alive)
      continue;
    for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v) {
      if (int32_t whole = fn.partOf[v]; whole >= 0) {
        if (firstPart[whole] == position[i])
          addInterval(whole, position[i]);
        continue;
      }
      if (firstPart[v] < 0)
        addInterval(v, position[i]);
    }
    if (op.absorbed >= 0)
      addInterval(fn.ops[op.absorbed].resultBegin, position[i]);
  }
  return packFirstFit(intervals);
}

/// pd-fuse-bias-gradients on a function: a sum_to that is a GELU or
/// layer-norm gradient's bias gradient, with the reshapes between them in
/// the same function, is computed by that gradient op (the first such sum
/// of each); the sum and the reshapes only it read go.
void fuseBiasGradients(const ProgramGraph &g, VFn &fn) {
  std::vector<std::vector<int32_t>> chains; // the reshapes, sum side first
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    VOp &sum = fn.ops[i];
    if (!sum.alive || sum.kind != VKind::Clone ||
        g.ops[sum.orig].summedProducer < 0)
      continue;
    std::vector<int32_t> views;
    int32_t def = fn.vals[fn.pool[sum.operandBegin]].def;
    while (def >= 0 && fn.ops[def].kind == VKind::Clone &&
           g.ops[fn.ops[def].orig].view) {
      views.push_back(def);
      def = fn.vals[fn.pool[fn.ops[def].operandBegin]].def;
    }
    if (def < 0 || fn.ops[def].kind != VKind::Clone ||
        fn.ops[def].orig != g.ops[sum.orig].summedProducer ||
        fn.ops[def].absorbed >= 0)
      continue;
    sum.alive = false;
    fn.ops[def].absorbed = i;
    fn.vals[sum.resultBegin].def = def;
    chains.push_back(std::move(views));
  }
  if (chains.empty())
    return;
  std::vector<int32_t> uses(fn.vals.size(), 0);
  for (const VOp &op : fn.ops)
    if (op.alive)
      for (int32_t v : fn.operandsOf(op))
        ++uses[v];
  for (int32_t v : fn.returned)
    ++uses[v];
  for (const std::vector<int32_t> &views : chains)
    for (int32_t view : views) {
      VOp &op = fn.ops[view];
      if (!op.alive || uses[op.resultBegin] > 0)
        break;
      op.alive = false;
      --uses[fn.pool[op.operandBegin]];
    }
}

/// getContiguousPartRoot in `fn`: the start of `v`'s reshape chain, each
/// value read once (`uses`), when an op of the function that can write a
/// part computes it (a received tensor, an input, a partWriter); -1 else.
static int32_t contiguousPartRoot(const ProgramGraph &g, const VFn &fn,
                                  const std::vector<int32_t> &uses,
                                  int32_t v) {
  while (true) {
    int32_t def = fn.vals[v].def;
    if (uses[v] != 1 || def < 0)
      return -1;
    const VOp &op = fn.ops[def];
    if (op.kind == VKind::Clone && g.ops[op.orig].view) {
      v = fn.pool[op.operandBegin];
      continue;
    }
    bool writer = op.kind == VKind::Recv || op.kind == VKind::Input ||
                  (op.kind == VKind::Clone && g.ops[op.orig].partWriter);
    return writer ? v : -1;
  }
}

/// pd-concat-in-place on a function: a concat the graph marks
/// inPlaceParts, its result neither sent nor returned, each input the end
/// of a chain (a GEMM, then reshapes) of this function's ops whose every
/// value is read once: the GEMM results share the concat result's
/// workspace slot (partOf) and the concat runs no kernel. Else a concat of
/// contiguous inputs (contiguousInputs), each with a contiguousPartRoot:
/// those share the concat result's home, wherever it is.
void concatInPlace(const ProgramGraph &g, VFn &fn) {
  fn.partOf.assign(fn.vals.size(), -1);
  std::vector<int32_t> uses(fn.vals.size(), 0);
  std::vector<bool> leaves(fn.vals.size(), false); // sent or returned
  for (const VOp &op : fn.ops)
    if (op.alive)
      for (int32_t v : fn.operandsOf(op)) {
        ++uses[v];
        leaves[v] = leaves[v] || op.kind == VKind::Send;
      }
  for (int32_t v : fn.returned) {
    ++uses[v];
    leaves[v] = true;
  }
  for (VOp &concat : fn.ops) {
    if (!concat.alive || concat.kind != VKind::Clone)
      continue;
    const ProgramGraph::Op &op = g.ops[concat.orig];
    size_t inputs = concat.operandEnd - concat.operandBegin;
    std::vector<int32_t> parts;
    if (op.inPlaceParts && !leaves[concat.resultBegin])
      for (int32_t v : fn.operandsOf(concat)) {
        // getInPlaceOperandRoot: back through reshapes to the GEMM.
        while (uses[v] == 1 && fn.vals[v].def >= 0 &&
               fn.ops[fn.vals[v].def].kind == VKind::Clone &&
               g.ops[fn.ops[fn.vals[v].def].orig].view)
          v = fn.pool[fn.ops[fn.vals[v].def].operandBegin];
        int32_t def = fn.vals[v].def;
        if (uses[v] != 1 || def < 0 || fn.ops[def].kind != VKind::Clone)
          break;
        parts.push_back(v);
      }
    if (parts.size() != inputs) {
      parts.clear();
      if (op.contiguousInputs)
        for (int32_t v : fn.operandsOf(concat)) {
          int32_t root = contiguousPartRoot(g, fn, uses, v);
          if (root < 0)
            break;
          parts.push_back(root);
        }
    }
    if (parts.size() != inputs)
      continue;
    for (int32_t part : parts) {
      fn.partOf[part] = concat.resultBegin;
      fn.vals[part].home = fn.vals[concat.resultBegin].home;
    }
    concat.partsInPlace = true;
  }
}

} // namespace mlir::pd::stage_model
