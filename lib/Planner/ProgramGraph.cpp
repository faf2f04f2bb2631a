//===- ProgramGraph.cpp - The training function as the planner sees it ----===//
//
// Values are numbered graph inputs first, then op results in program
// order. The op chain's crossing bytes: a value defined at chain position
// a and last used (by a forward op or a gradient op, at the position of the
// forward op it differentiates) at u crosses every cut in (a, u].
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/ProgramGraph.h"
#include "dialects/PD/IR/PDOps.h"
#include "pd/Support/ArenaRules.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pd;

namespace {

/// Numbers the values and ops of one function body while the graph is
/// filled in.
class GraphBuilder {
public:
  explicit GraphBuilder(func::FuncOp main)
      : main(main), symbols(main->getParentOfType<ModuleOp>()) {}

  FailureOr<ProgramGraph> run();

private:
  LogicalResult addOp(Operation &op);
  int32_t valueId(mlir::Value v) const;
  int32_t paramId(FlatSymbolRefAttr sym);
  void addStateRefs(Operation &op);
  void linkUsers();
  void buildChain();

  func::FuncOp main;
  SymbolTable symbols;
  ProgramGraph g;
  DenseMap<Operation *, int32_t> opIndex;
  DenseMap<int64_t, int32_t> opOfId; ///< pd.op_id -> op index
  llvm::StringMap<int32_t> params, states;
  std::vector<int64_t> forwardIds; ///< pd.op_id or pd.grad_of per op
};

} // namespace

int32_t GraphBuilder::valueId(mlir::Value v) const {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getArgNumber();
  const ProgramGraph::Op &def = g.ops[opIndex.lookup(v.getDefiningOp())];
  return def.resultBegin + cast<OpResult>(v).getResultNumber();
}

int32_t GraphBuilder::paramId(FlatSymbolRefAttr sym) {
  auto [it, inserted] = params.try_emplace(sym.getValue(), g.paramBytes.size());
  if (inserted) {
    auto param = symbols.lookup<ParamOp>(sym.getAttr());
    g.paramBytes.push_back(param ? getTensorBytes(param.getType()) : 0);
    g.paramNames.push_back(sym.getValue().str());
  }
  return it->second;
}

/// pd.state tensors an op names through symbol-reference attributes
/// (batch norm's running statistics).
void GraphBuilder::addStateRefs(Operation &op) {
  for (NamedAttribute attr : op.getAttrs()) {
    auto sym = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
    auto state = sym ? symbols.lookup<StateOp>(sym.getAttr()) : StateOp();
    if (!state)
      continue;
    auto [it, inserted] =
        states.try_emplace(sym.getValue(), g.stateBytes.size());
    if (inserted)
      g.stateBytes.push_back(getTensorBytes(state.getType()));
    g.stateRefs.push_back(it->second);
  }
}

LogicalResult GraphBuilder::addOp(Operation &op) {
  auto id = getContractInt<PDDialect::OpIdAttrHelper>(&op);
  auto gradOf = getContractInt<PDDialect::GradOfAttrHelper>(&op);
  if (!id && !gradOf)
    return op.emitError("planner: op is neither forward (pd.op_id) nor "
                        "gradient (pd.grad_of); run pd-autodiff first");
  ProgramGraph::Op node;
  node.backward = gradOf.has_value();
  forwardIds.push_back(id ? *id : *gradOf);
  if (id)
    opOfId[*id] = g.ops.size();
  if (isa<ParamRefOp>(op))
    node.kind = ProgramGraph::OpKind::ParamRef;
  else if (isa<ConstantOp>(op))
    node.kind = ProgramGraph::OpKind::Constant;
  else if (isa<AccumulateGradOp>(op))
    node.kind = ProgramGraph::OpKind::AccumulateGrad;
  node.pure = isMemoryEffectFree(&op);
  node.view = isa<ReshapeOp>(op);
  node.recomputable =
      node.pure || isa<ParamRefOp, ConstantOp, BatchNormOp>(op);
  if (auto xent = dyn_cast<SoftmaxCrossEntropyWithGradOp>(op);
      xent && xent.getInPlaceLogits())
    node.inPlaceResult = 1;
  if (auto softmax = dyn_cast<MaskedSoftmaxOp>(op);
      softmax && softmax.getInPlaceInput())
    node.inPlaceResult = 0;
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    node.inPlaceParts = !concat.getInPlaceParts().empty();
    node.contiguousInputs = concat.hasContiguousInputs();
  }
  node.partWriter = canWriteContiguousPart(&op);
  if (auto slice = dyn_cast<SliceOp>(op))
    if (std::optional<int64_t> offset = slice.getContiguousOffset()) {
      node.window = true;
      node.windowAtStart = *offset == 0;
    }
  // A view of a parameter read is a source too (as pd-outline-stages
  // clones it).
  if (node.view || node.window)
    if (Operation *def = op.getOperand(0).getDefiningOp()) {
      auto it = opIndex.find(def);
      if (it != opIndex.end())
        node.weightView =
            g.ops[it->second].kind == ProgramGraph::OpKind::ParamRef ||
            g.ops[it->second].weightView;
    }
  if (mlir::Value x = getOverwritableOperand(&op))
    for (OpOperand &use : op.getOpOperands())
      if (use.get() == x) {
        node.overwritableOperand = use.getOperandNumber();
        break;
      }
  if (auto ref = dyn_cast<ParamRefOp>(op))
    node.param = paramId(ref.getParamAttr());
  else if (auto acc = dyn_cast<AccumulateGradOp>(op))
    node.param = paramId(acc.getParamAttr());
  node.name = op.getName().getStringRef();
  if (auto cost = dyn_cast<CostOpInterface>(op)) {
    node.costed = true;
    node.flops = cost.getFlops();
    node.bytes = cost.getBytes();
  }
  if (FloatAttr s = PDDialect::SecondsAttrHelper(op.getContext()).getAttr(&op))
    node.measured = s.getValueAsDouble();
  node.operandBegin = g.operands.size();
  for (mlir::Value operand : op.getOperands())
    g.operands.push_back(valueId(operand));
  node.operandEnd = g.operands.size();
  node.stateBegin = g.stateRefs.size();
  addStateRefs(op);
  node.stateEnd = g.stateRefs.size();
  node.resultBegin = g.values.size();
  for (mlir::Value result : op.getResults())
    g.values.push_back({getTensorBytes(result.getType()),
                        (int32_t)g.ops.size(), -1, 0, 0});
  node.resultEnd = g.values.size();
  opIndex[&op] = g.ops.size();
  g.ops.push_back(node);
  return success();
}

/// Users of every value (the return excluded), the matmuls that
/// accumulate in place and the bias gradients of GELU and layer-norm
/// gradients.
void GraphBuilder::linkUsers() {
  Block &body = main.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    ProgramGraph::Value &v = g.values[arg.getArgNumber()];
    v.userBegin = g.users.size();
    for (Operation *user : arg.getUsers())
      if (!isa<func::ReturnOp>(user))
        g.users.push_back(opIndex.lookup(user));
    v.userEnd = g.users.size();
  }
  for (Operation &op : body.without_terminator()) {
    for (mlir::Value result : op.getResults()) {
      ProgramGraph::Value &v = g.values[valueId(result)];
      v.userBegin = g.users.size();
      for (Operation *user : result.getUsers())
        if (!isa<func::ReturnOp>(user))
          g.users.push_back(opIndex.lookup(user));
      v.userEnd = g.users.size();
    }
    if (op.hasOneUse())
      if (auto acc = dyn_cast<AccumulateGradOp>(*op.getUsers().begin()))
        if (acc.getInPlaceProducer() == &op)
          g.ops[opIndex.lookup(&op)].accumulateUser = opIndex.lookup(acc);
    if (auto sum = dyn_cast<SumToOp>(op))
      if (Operation *grad = sum.getSummedProducer())
        g.ops[opIndex.lookup(&op)].summedProducer = opIndex.lookup(grad);
  }
}

void GraphBuilder::buildChain() {
  int32_t n = g.ops.size();
  for (int32_t i = 0; i < n; ++i) {
    ProgramGraph::Op &op = g.ops[i];
    auto it = opOfId.find(forwardIds[i]);
    op.owner = it == opOfId.end() ? -1 : it->second;
    if (!op.backward && op.operandEnd > op.operandBegin) {
      op.chainPos = g.chain.opIds.size();
      g.chain.opIds.push_back(forwardIds[i]);
    }
  }
}

FailureOr<ProgramGraph> GraphBuilder::run() {
  Block &body = main.getBody().front();
  for (BlockArgument arg : body.getArguments())
    g.values.push_back({getTensorBytes(arg.getType()), -1,
                        (int32_t)arg.getArgNumber(), 0, 0});
  for (Operation &op : body.without_terminator())
    if (failed(addOp(op)))
      return failure();
  linkUsers();
  buildChain();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() > 0 && ret.getOperand(0).getDefiningOp())
    g.loss = valueId(ret.getOperand(0));
  return std::move(g);
}

FailureOr<ProgramGraph> ProgramGraph::build(func::FuncOp main) {
  return GraphBuilder(main).run();
}

/// The chain's costs: each compute op with its gradient ops; the bytes
/// crossing each cut (a value defined at chain position a and last used,
/// by a forward op or a gradient op at its forward op's position, at u
/// crosses every cut in (a, u]).
void ProgramGraph::price(function_ref<double(const Op &)> seconds) {
  int32_t n = ops.size();
  int64_t positions = chain.opIds.size();
  chain.seconds.assign(positions, 0);
  auto positionOf = [&](int32_t i) {
    int32_t owner = ops[i].owner;
    return owner < 0 ? -1 : ops[owner].chainPos;
  };
  for (int32_t i = 0; i < n; ++i) {
    // A view of a parameter read runs no kernel (pd.view).
    ops[i].seconds = ops[i].weightView ? 0 : seconds(ops[i]);
    if (int32_t p = positionOf(i); p >= 0)
      chain.seconds[p] += ops[i].seconds;
  }
  // A GELU or layer-norm gradient with a bias gradient: both ops' FLOPs,
  // the gradient op's bytes and the bias gradient's, as the fused op is
  // priced; measured, the two measurements.
  for (Op &sum : ops) {
    if (sum.summedProducer < 0)
      continue;
    const Op &grad = ops[sum.summedProducer];
    Op fused = grad;
    fused.flops += sum.flops;
    fused.bytes += values[sum.resultBegin].bytes;
    fused.measured = grad.measured >= 0 && sum.measured >= 0
                         ? grad.measured + sum.measured
                         : -1;
    sum.fusedSeconds = seconds(fused);
  }
  std::vector<int64_t> delta(positions + 2, 0);
  for (int32_t i = 0; i < n; ++i) {
    const Op &op = ops[i];
    if (op.backward || op.chainPos < 0)
      continue;
    int64_t a = op.chainPos;
    for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v) {
      int64_t last = a;
      for (int32_t user : usersOf(v))
        last = std::max<int64_t>(last, positionOf(user));
      if (last > a) {
        delta[a + 1] += values[v].bytes;
        delta[last + 1] -= values[v].bytes;
      }
    }
  }
  chain.crossingBytes.assign(positions + 1, 0);
  for (int64_t c = 1, sum = 0; c < positions; ++c)
    chain.crossingBytes[c] = sum += delta[c];
  // Values that gradient ops read against the backward's direction: a
  // forward value read by the gradient ops of an earlier position (the
  // earlier stage's forward would wait for the later one's), a gradient
  // read by the gradient ops of a later position (the later stage's
  // backward would wait for the earlier one's). Either way each stage
  // would wait for the other: no cut between producer and reader.
  std::vector<int64_t> back(positions + 2, 0);
  bool any = false;
  for (int32_t i = 0; i < n; ++i) {
    const Op &op = ops[i];
    int64_t a = op.backward ? positionOf(i) : op.chainPos;
    if (a < 0)
      continue;
    for (uint32_t v = op.resultBegin; v < op.resultEnd; ++v)
      for (int32_t user : usersOf(v)) {
        int64_t u = positionOf(user);
        if (!ops[user].backward || u < 0 || (op.backward ? u <= a : u >= a))
          continue;
        ++back[std::min(a, u) + 1];
        --back[std::max(a, u) + 1];
        any = true;
      }
  }
  // A parameter read (with its views: pd-split-sliced-matmuls' row blocks
  // of one weight) is one value on one stage: no cut between its forward
  // readers (as pd-partition-stages places it).
  for (int32_t i = 0; i < n; ++i) {
    if (ops[i].kind != OpKind::ParamRef)
      continue;
    int64_t lo = positions, hi = -1;
    SmallVector<int32_t> reads = {i};
    while (!reads.empty()) {
      const Op &read = ops[reads.pop_back_val()];
      for (uint32_t v = read.resultBegin; v < read.resultEnd; ++v)
        for (int32_t user : usersOf(v)) {
          if (ops[user].backward)
            continue;
          if (ops[user].weightView)
            reads.push_back(user);
          if (int64_t u = positionOf(user); u >= 0)
            lo = std::min(lo, u), hi = std::max(hi, u);
        }
    }
    if (hi > lo) {
      ++back[lo + 1];
      --back[hi + 1];
      any = true;
    }
  }
  chain.flowsBack.clear();
  if (any) {
    chain.flowsBack.assign(positions + 1, 0);
    for (int64_t c = 1, open = 0; c < positions; ++c)
      chain.flowsBack[c] = (open += back[c]) > 0;
  }
}

/// Whether two graphs have the same ops, values and uses.
static bool sameStructure(const ProgramGraph &a, const ProgramGraph &b) {
  if (a.ops.size() != b.ops.size() || a.values.size() != b.values.size() ||
      a.operands != b.operands || a.users != b.users ||
      a.stateRefs != b.stateRefs || a.paramBytes != b.paramBytes ||
      a.stateBytes != b.stateBytes || a.loss != b.loss)
    return false;
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const ProgramGraph::Op &x = a.ops[i], &y = b.ops[i];
    if (x.kind != y.kind || x.backward != y.backward || x.pure != y.pure ||
        x.owner != y.owner || x.param != y.param || x.costed != y.costed ||
        x.accumulateUser != y.accumulateUser ||
        x.summedProducer != y.summedProducer ||
        x.inPlaceResult != y.inPlaceResult ||
        x.inPlaceParts != y.inPlaceParts ||
        x.contiguousInputs != y.contiguousInputs ||
        x.partWriter != y.partWriter || x.window != y.window ||
        x.windowAtStart != y.windowAtStart ||
        x.overwritableOperand != y.overwritableOperand || x.name != y.name ||
        x.measured >= 0 || y.measured >= 0)
      return false;
  }
  return true;
}

std::optional<ProgramGraph>
ProgramGraph::atMicrobatch(const ProgramGraph &a, int64_t sizeA,
                           const ProgramGraph &b, int64_t sizeB,
                           int64_t target) {
  if (sizeA == sizeB || !sameStructure(a, b))
    return std::nullopt;
  ProgramGraph g = a;
  // A value is the same at both sizes or scales with the batch.
  for (size_t v = 0; v < g.values.size(); ++v) {
    int64_t x = a.values[v].bytes, y = b.values[v].bytes;
    if (x == y)
      continue;
    if (x * sizeB != y * sizeA || x % sizeA != 0)
      return std::nullopt;
    g.values[v].bytes = x / sizeA * target;
  }
  // Op costs: affine in the batch through its batch-free and batch-scaled
  // tensors.
  auto affine = [&](double x, double y) {
    double slope = (y - x) / double(sizeB - sizeA);
    return std::max(0.0, x + slope * double(target - sizeA));
  };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    g.ops[i].flops = affine(a.ops[i].flops, b.ops[i].flops);
    g.ops[i].bytes = affine(a.ops[i].bytes, b.ops[i].bytes);
  }
  return g;
}

std::vector<int64_t> ProgramGraph::cutPositions(ArrayRef<int64_t> cuts) const {
  std::vector<int64_t> positions;
  size_t next = 0;
  for (size_t p = 0; p < chain.opIds.size() && next < cuts.size(); ++p)
    if (chain.opIds[p] == cuts[next]) {
      positions.push_back(p);
      ++next;
    }
  return positions;
}

int64_t ProgramGraph::alignedParamBytes() const {
  int64_t total = 0;
  for (int64_t bytes : paramBytes)
    total += alignArena(bytes);
  return total;
}
