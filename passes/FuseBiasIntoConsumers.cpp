//===- FuseBiasIntoConsumers.cpp - Biases into readers ----------*- C++ -*-===//
//
// pd-fuse-bias-into-consumers: pd-fuse-matmul-bias leaves a Linear layer
// as a pd.matmul with a bias, whose kernel first fills the whole product
// with the bias rows for the GEMM to add into: one more pass over the
// output (16 MiB per microbatch for the large benchmark GPT's MLP). When
// the product's only reader passes over every element anyway, the bias
// moves there and the GEMM writes its product once:
//
//   %z = pd.matmul %x, %w, %b      ->  %z = pd.matmul %x, %w
//   %h = pd.gelu %z                    %h = pd.gelu %z, %b          (z + b)
//
//   %z = pd.matmul %x, %w, %b      ->  %z = pd.matmul %x, %w
//   %s, %y = pd.add_layer_norm         %s, %y = pd.add_layer_norm
//       %r, %z, %g, %beta                  %r, %z, %g, %beta, %b (r + (z + b))
//
// the MLP's up projection into its GELU, the attention output and MLP
// down projections into the residual add and the next layer norm (the
// product as either operand of the add; a norm over the last dimension
// only). The GELU's gradient recomputes z + b, and the bias gradient is
// its column sums (pd-fuse-bias-gradients then computes them in the
// GELU gradient's pass). The matmul and any reshapes between the two
// (which must keep the last dimension, the one the bias runs along) must
// have no other reader. Runs before pd-autodiff.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FUSEBIASINTOCONSUMERSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseBiasIntoConsumersPass
    : public mlir::pd::impl::FuseBiasIntoConsumersPassBase<
          FuseBiasIntoConsumersPass> {
  using FuseBiasIntoConsumersPassBase::FuseBiasIntoConsumersPassBase;
  void runOnOperation() override;
};

int64_t lastDim(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getRank() ? type.getShape().back() : -1;
}

/// The matmul with a bias that `v` is, directly or through single-use
/// reshapes keeping the last dimension, and that only `v`'s chain reads.
MatMulOp biasedProducer(Value v) {
  int64_t n = lastDim(v);
  while (auto view = v.getDefiningOp<ReshapeOp>()) {
    if (!view->hasOneUse() || lastDim(view.getInput()) != n)
      return {};
    v = view.getInput();
  }
  auto mm = v.getDefiningOp<MatMulOp>();
  if (!mm || !mm.getBias() || !mm->hasOneUse() || lastDim(mm) != n)
    return {};
  return mm;
}

/// Moves the bias of `norm`'s rhs producer (or of its lhs producer, the
/// operands swapped: the sum is the same) into `norm`.
void moveBiasIntoNorm(AddLayerNormOp norm) {
  int64_t rank = norm.getSum().getType().getRank();
  if (norm.getRhsBias() || static_cast<int64_t>(norm.getAxis()) != rank - 1)
    return;
  Value lhs = norm.getLhs(), rhs = norm.getRhs();
  MatMulOp mm = rhs.hasOneUse() ? biasedProducer(rhs) : MatMulOp();
  if (!mm && lhs != rhs && lhs.hasOneUse()) {
    mm = biasedProducer(lhs);
    if (mm) {
      norm.getLhsMutable().assign(rhs);
      norm.getRhsMutable().assign(lhs);
    }
  }
  if (!mm)
    return;
  norm.getRhsBiasMutable().assign(mm.getBias());
  mm.getBiasMutable().clear();
}

} // namespace

void FuseBiasIntoConsumersPass::runOnOperation() {
  getOperation().walk([](Operation *op) {
    if (auto norm = dyn_cast<AddLayerNormOp>(op))
      return moveBiasIntoNorm(norm);
    auto gelu = dyn_cast<GeluOp>(op);
    if (!gelu || gelu.getBias() || !gelu.getInput().hasOneUse())
      return;
    MatMulOp mm = biasedProducer(gelu.getInput());
    if (!mm)
      return;
    gelu.getBiasMutable().assign(mm.getBias());
    mm.getBiasMutable().clear();
  });
}
