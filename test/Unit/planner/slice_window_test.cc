//===- slice_window_test.cc - Which slices are views of their input -------===//
//
// SliceOp::getContiguousOffset decides which pd.slice results are views of
// their input (pd-allocate-buffers) and which graph ops are windows (the
// stage model): checked against the definition on random windows, the
// element offsets of the window in row-major order being one run.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDDialect.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

using namespace mlir;
using namespace mlir::pd;

namespace {

/// The input offset of the window's first element if the window's
/// elements, in row-major order, are consecutive elements of the input.
std::optional<int64_t> bruteForceOffset(ArrayRef<int64_t> in,
                                        ArrayRef<int64_t> out,
                                        ArrayRef<int64_t> starts,
                                        ArrayRef<int64_t> steps) {
  int64_t rank = in.size(), count = 1;
  for (int64_t d : out)
    count *= d;
  if (count == 0)
    return std::nullopt;
  std::vector<int64_t> index(rank, 0);
  std::optional<int64_t> first;
  for (int64_t n = 0; n < count; ++n) {
    int64_t at = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      at += (starts[d] + index[d] * steps[d]) * stride;
      stride *= in[d];
    }
    if (!first)
      first = at;
    else if (at != *first + n)
      return std::nullopt;
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == out[d]; --d)
      index[d] = 0;
  }
  return first;
}

TEST(SliceWindow, ContiguousOffsetMatchesTheDefinition) {
  MLIRContext ctx;
  ctx.loadDialect<PDDialect, func::FuncDialect>();
  OpBuilder b(&ctx);
  auto module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module.getBody());
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int views = 0, copies = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    int64_t rank = pick(1, 4);
    SmallVector<int64_t> in, out, starts, steps;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = pick(1, 5);
      // Often the whole dim, else a random window of it.
      int64_t step = pick(0, 3) == 0 ? -pick(1, 2) : pick(1, 2);
      int64_t start = step > 0 ? pick(0, size - 1) : pick(0, size - 1);
      int64_t room = step > 0 ? (size - 1 - start) / step + 1
                              : start / (-step) + 1;
      int64_t extent = pick(1, room);
      if (pick(0, 2) == 0) {
        start = 0;
        step = 1;
        extent = size;
      }
      in.push_back(size);
      out.push_back(extent);
      starts.push_back(start);
      steps.push_back(step);
    }
    auto f32 = b.getF32Type();
    auto input = b.create<ConstantOp>(
        b.getUnknownLoc(), DenseElementsAttr::get(
                               RankedTensorType::get(in, f32), 1.0f));
    auto slice = b.create<SliceOp>(
        b.getUnknownLoc(), RankedTensorType::get(out, f32), input,
        b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(steps));
    ASSERT_TRUE(succeeded(slice.verify()));
    std::optional<int64_t> expected =
        bruteForceOffset(in, out, starts, steps);
    EXPECT_EQ(slice.getContiguousOffset(), expected)
        << "trial " << trial << " rank " << rank;
    (expected ? views : copies)++;
  }
  // Both outcomes are exercised.
  EXPECT_GT(views, 400);
  EXPECT_GT(copies, 400);
  module->erase();
}

} // namespace
