//===- FuseElementwiseChains.cpp - Elementwise chains in one loop -*- C++ -*-===//
//
// pd-fuse-elementwise-chains: a run of elementwise ops whose intermediates
// have no other reader (Llama's SiLU gate silu(x) * up, an attention
// mask built as (1 - m) * -1e4 + s, gradient formulas) costs one pass over
// memory per op. This pass collects each such tree, rooted at an op whose
// result leaves it, into one pd.fused_elementwise whose kernel evaluates the
// whole tree on blocks that stay in L1: the inputs are read once and the
// result written once.
//
// Members: add, sub, mul, div, min, max (operands of the result's shape, a
// scalar, or a vector broadcast over the trailing dims), neg, sqrt, exp,
// log, erf, tanh, sigmoid, reciprocal, cos, sin, silu, relu and scale. A member
// other than the root has exactly one user, in the tree, and the same
// result type; forward ops and gradient ops are not mixed (the phases stay
// as autodiff made them); a tree reads at most four inputs. Scalar
// constants become immediates. Runs after pd-autodiff; gradient ops that
// named an absorbed forward op (pd.grad_of) then name the root.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/GradTags.h"
#include "passes/Passes.h"
#include "passes/ScalarConstant.h"
#include "pdrt/pdrt_codes.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

namespace mlir::pd {
#define GEN_PASS_DEF_FUSEELEMENTWISECHAINSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseElementwiseChainsPass
    : public mlir::pd::impl::FuseElementwiseChainsPassBase<
          FuseElementwiseChainsPass> {
  using FuseElementwiseChainsPassBase::FuseElementwiseChainsPassBase;
  void runOnOperation() override;
};

constexpr size_t kMaxInputs = 4;

/// The runtime instruction an op becomes: kind and code (and for scale,
/// its factor as a second, constant operand).
struct Instruction {
  int64_t kind, code;
  std::optional<float> factor;
};

std::optional<Instruction> instructionOf(Operation *op) {
  auto binary = [](int64_t code) {
    return Instruction{PDRT_CHAIN_BINARY, code, std::nullopt};
  };
  auto unary = [](UnaryKind kind) {
    return Instruction{PDRT_CHAIN_UNARY, static_cast<int64_t>(kind),
                       std::nullopt};
  };
  return llvm::TypeSwitch<Operation *, std::optional<Instruction>>(op)
      .Case([&](AddOp) { return binary(PDRT_ADD); })
      .Case([&](SubOp) { return binary(PDRT_SUB); })
      .Case([&](MulOp) { return binary(PDRT_MUL); })
      .Case([&](DivOp) { return binary(PDRT_DIV); })
      .Case([&](MinOp) { return binary(PDRT_BINARY_MIN); })
      .Case([&](MaxOp) { return binary(PDRT_BINARY_MAX); })
      .Case<NegOp, SqrtOp, ExpOp, LogOp, ErfOp, TanhOp, SigmoidOp,
            ReciprocalOp, CosOp, SinOp, SiluOp>(
          [&](auto u) { return unary(decltype(u)::kKind); })
      .Case([&](ReluOp) {
        return Instruction{PDRT_CHAIN_RELU, 0, std::nullopt};
      })
      .Case([&](ScaleOp s) {
        return Instruction{PDRT_CHAIN_BINARY, PDRT_MUL,
                           s.getFactor().convertToFloat()};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Whether `v` can be read by a chain producing `result`: the same type, or
/// a broadcast that repeats with a period (a scalar, or trailing dims).
std::optional<int64_t> periodOf(Value v, RankedTensorType result) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape(), full = result.getShape();
  if (shape.size() > full.size())
    return std::nullopt;
  // Leading 1s, then the result's trailing dims exactly.
  size_t lead = 0;
  while (lead < shape.size() && shape[lead] == 1)
    ++lead;
  if (shape.drop_front(lead) != full.take_back(shape.size() - lead))
    return std::nullopt;
  return type.getNumElements();
}

/// Which phase an op belongs to: forward (pd.op_id) or gradient.
bool isForward(Operation *op) {
  return getContractInt<PDDialect::OpIdAttrHelper>(op).has_value();
}

/// A tree of chain members rooted at `root`, in program order.
struct Tree {
  SmallVector<Operation *> members;
  SmallVector<Value> inputs;
  /// Scalar constants read as immediates (erased once nothing reads them).
  SmallVector<Operation *> immediates;
};


/// Grows the tree below `op` (already a member): an operand joins when it
/// is a member-kind op of the root's type and phase whose only user is
/// `op`; constants become immediates, anything else an input.
void grow(Operation *op, Operation *root, Tree &tree) {
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (def && def->getBlock() == root->getBlock() && def->hasOneUse() &&
        instructionOf(def) && def->getResult(0).getType() == root->getResult(0).getType() &&
        isForward(def) == isForward(root) && def->getNumRegions() == 0) {
      grow(def, root, tree);
      tree.members.push_back(def);
      continue;
    }
    if (scalarF32Constant(operand)) {
      if (def && !llvm::is_contained(tree.immediates, def))
        tree.immediates.push_back(def);
      continue;
    }
    if (!llvm::is_contained(tree.inputs, operand))
      tree.inputs.push_back(operand);
  }
}

/// Emits the program of `tree` (members in program order, root last).
SmallVector<int64_t> programOf(const Tree &tree) {
  DenseMap<Value, int64_t> reg;
  for (auto [i, v] : llvm::enumerate(tree.inputs))
    reg[v] = i;
  int64_t next = tree.inputs.size();
  SmallVector<int64_t> words;
  auto operandReg = [&](Value v) -> int64_t {
    if (auto it = reg.find(v); it != reg.end())
      return it->second;
    // A scalar constant: one instruction loads it.
    float value = *scalarF32Constant(v);
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    words.append({PDRT_CHAIN_CONST, 0, next, (int64_t)bits, 0});
    return next++;
  };
  for (Operation *op : tree.members) {
    Instruction ins = *instructionOf(op);
    int64_t a = operandReg(op->getOperand(0));
    int64_t b = 0;
    if (ins.factor) {
      float value = *ins.factor;
      uint32_t bits;
      std::memcpy(&bits, &value, sizeof(bits));
      words.append({PDRT_CHAIN_CONST, 0, next, (int64_t)bits, 0});
      b = next++;
    } else if (op->getNumOperands() == 2) {
      b = operandReg(op->getOperand(1));
    }
    words.append({ins.kind, ins.code, next, a, b});
    reg[op->getResult(0)] = next++;
  }
  return words;
}

} // namespace

void FuseElementwiseChainsPass::runOnOperation() {
  Absorbed absorbed;
  SmallVector<Operation *> roots;
  getOperation().walk([&](Operation *op) {
    if (instructionOf(op))
      roots.push_back(op);
  });
  DenseSet<Operation *> fused;
  // Last to first: a root is an op whose result is not folded into a later
  // tree (its users are not single-use members of one).
  for (Operation *root : llvm::reverse(roots)) {
    if (fused.contains(root))
      continue;
    auto type = cast<RankedTensorType>(root->getResult(0).getType());
    if (!type.getElementType().isF32() || !type.hasStaticShape())
      continue;
    Tree tree;
    grow(root, root, tree);
    tree.members.push_back(root);
    if (tree.members.size() < 2 || tree.inputs.size() > kMaxInputs ||
        tree.inputs.empty())
      continue;
    SmallVector<int64_t> periods;
    for (Value v : tree.inputs)
      if (auto p = periodOf(v, type))
        periods.push_back(*p);
    if (periods.size() != tree.inputs.size())
      continue;
    OpBuilder b(root);
    auto op = b.create<FusedElementwiseOp>(
        root->getLoc(), type, tree.inputs, b.getDenseI64ArrayAttr(periods),
        b.getDenseI64ArrayAttr(programOf(tree)));
    op->setDiscardableAttrs(root->getDiscardableAttrDictionary());
    std::optional<int64_t> rootId = forwardIdOf(root);
    root->getResult(0).replaceAllUsesWith(op.getResult());
    for (Operation *member : llvm::reverse(tree.members)) {
      if (auto id = getContractInt<PDDialect::OpIdAttrHelper>(member);
          id && rootId)
        absorbed.try_emplace(*id, *rootId);
      fused.insert(member);
      member->erase();
    }
    for (Operation *constant : tree.immediates)
      if (constant->use_empty())
        constant->erase();
  }
  retagOrphanedGradients(getOperation(), absorbed);
}
