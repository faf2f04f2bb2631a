//===- FirstFit.h - First-fit placement in O(log n) -------------*- C++ -*-===//
//
// The live blocks of a packing, ordered by offset in a treap whose nodes
// know their subtree's lowest offset, highest end and an upper bound on the
// gaps between its blocks, so that "the lowest offset where `size` bytes fit
// between the live blocks" is found in logarithmic time. packFirstFit
// (ArenaRules.h) places workspaces of stages with tens of thousands of
// values with it; its placements are exactly those of scanning the blocks
// in offset order (test/Unit/planner/first_fit_test.cc checks this).
//
//===----------------------------------------------------------------------===//

#ifndef PD_SUPPORT_FIRSTFIT_H
#define PD_SUPPORT_FIRSTFIT_H

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace mlir::pd {

class FirstFitArena {
public:
  /// Places a block of `size` bytes at the lowest offset where it overlaps
  /// no live block (after the last one if no gap fits); returns its handle
  /// and sets `offset`.
  int32_t place(int64_t size, int64_t &offset) {
    offset = root < 0 ? 0 : find(root, 0, size);
    if (offset < 0)
      offset = std::max<int64_t>(0, nodes[root].hi);
    int32_t n = newNode(offset, size);
    int32_t left, right;
    split(root, nodes[n].offset, n, left, right);
    root = merge(merge(left, n), right);
    return n;
  }

  /// Frees the block `handle`.
  void remove(int32_t handle) {
    int32_t left, mid, right;
    split(root, nodes[handle].offset, handle, left, mid);
    split(mid, nodes[handle].offset, handle + 1, mid, right);
    // `mid` is the block itself.
    freeList.push_back(handle);
    root = merge(left, right);
  }

private:
  static constexpr int64_t kNone = -1;
  static constexpr int64_t kLow = std::numeric_limits<int64_t>::min() / 4;

  struct Node {
    int64_t offset = 0, size = 0;
    uint32_t priority = 0;
    int32_t left = -1, right = -1;
    int64_t lo = 0, hi = 0; ///< Lowest offset, highest end in the subtree.
    int64_t gap = kLow;     ///< Bound on the gaps between its blocks.
  };

  int32_t newNode(int64_t offset, int64_t size) {
    int32_t n;
    if (!freeList.empty()) {
      n = freeList.back();
      freeList.pop_back();
    } else {
      n = nodes.size();
      nodes.emplace_back();
    }
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    nodes[n] = Node{offset, size, (uint32_t)(seed >> 33), -1, -1,
                    offset, offset + size, kLow};
    return n;
  }

  /// Orders blocks by (offset, handle).
  bool before(int32_t a, int64_t offset, int32_t handle) const {
    return nodes[a].offset < offset ||
           (nodes[a].offset == offset && a < handle);
  }

  void update(int32_t t) {
    Node &n = nodes[t];
    n.lo = n.offset;
    n.hi = n.offset + n.size;
    n.gap = kLow;
    int64_t end = n.offset + n.size;
    if (n.left >= 0) {
      const Node &l = nodes[n.left];
      n.lo = l.lo;
      n.gap = std::max({n.gap, l.gap, n.offset - l.hi});
      end = std::max(end, l.hi);
      n.hi = std::max(n.hi, l.hi);
    }
    if (n.right >= 0) {
      const Node &r = nodes[n.right];
      n.gap = std::max({n.gap, r.gap, r.lo - end});
      n.hi = std::max(n.hi, r.hi);
    }
  }

  /// Splits `t` into the blocks ordered before (offset, handle) and the rest.
  void split(int32_t t, int64_t offset, int32_t handle, int32_t &left,
             int32_t &right) {
    if (t < 0) {
      left = right = -1;
      return;
    }
    if (before(t, offset, handle)) {
      split(nodes[t].right, offset, handle, nodes[t].right, right);
      left = t;
    } else {
      split(nodes[t].left, offset, handle, left, nodes[t].left);
      right = t;
    }
    update(t);
  }

  int32_t merge(int32_t a, int32_t b) {
    if (a < 0)
      return b;
    if (b < 0)
      return a;
    if (nodes[a].priority > nodes[b].priority) {
      nodes[a].right = merge(nodes[a].right, b);
      update(a);
      return a;
    }
    nodes[b].left = merge(a, nodes[b].left);
    update(b);
    return b;
  }

  /// The lowest offset in subtree t where `size` bytes fit, the blocks
  /// before t ending at `prevEnd`; kNone if no gap there fits.
  int64_t find(int32_t t, int64_t prevEnd, int64_t size) const {
    if (t < 0)
      return kNone;
    const Node &n = nodes[t];
    if (std::max(n.lo - prevEnd, n.gap) < size)
      return kNone;
    int64_t end = prevEnd;
    if (n.left >= 0) {
      int64_t found = find(n.left, prevEnd, size);
      if (found != kNone)
        return found;
      end = std::max(end, nodes[n.left].hi);
    }
    if (n.offset - end >= size)
      return end;
    return find(n.right, std::max(end, n.offset + n.size), size);
  }

  std::vector<Node> nodes;
  std::vector<int32_t> freeList;
  int32_t root = -1;
  uint64_t seed = 0x9E3779B97F4A7C15ULL;
};

} // namespace mlir::pd

#endif // PD_SUPPORT_FIRSTFIT_H
