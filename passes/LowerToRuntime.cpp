//===- LowerToRuntime.cpp - Stage functions to pdrt_* calls -----*- C++ -*-===//
//
// pd-lower-to-runtime: the last pd pass before LLVM IR. Every op of one
// stage's buffer-assigned forward and backward functions becomes a call of
// its runtime kernel (runtime/include/pdrt/pdrt.h) on pointers computed
// from the region bases the runtime passes in and the op's pd.buffer.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "passes/Passes.h"
#include "passes/RuntimeLowering.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::pd {
#define GEN_PASS_DEF_LOWERTORUNTIMEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct LowerToRuntimePass
    : public mlir::pd::impl::LowerToRuntimePassBase<LowerToRuntimePass> {
  using LowerToRuntimePassBase::LowerToRuntimePassBase;
  void runOnOperation() override;
};

constexpr StringLiteral kRegionNames[] = {"weights", "grads", "stash",
                                          "workspace", "comm"};

} // namespace

//===----------------------------------------------------------------------===//
// Helpers: constants, globals, runtime declarations
//===----------------------------------------------------------------------===//

Value StageLowering::i64(int64_t v) {
  return b.create<LLVM::ConstantOp>(loc, b.getI64Type(),
                                    b.getI64IntegerAttr(v));
}
Value StageLowering::i32(int64_t v) {
  return b.create<LLVM::ConstantOp>(loc, b.getI32Type(),
                                    b.getI32IntegerAttr(v));
}
LLVM::GEPArg StageLowering::byteOffset(int64_t bytes) {
  // Small offsets stay constant indices (readable IR); offsets past 2 GiB,
  // which arenas of large models have, become i64 values.
  if (bytes >= INT32_MIN && bytes <= INT32_MAX)
    return LLVM::GEPArg(static_cast<int32_t>(bytes));
  return LLVM::GEPArg(i64(bytes));
}

Value StageLowering::f32(double v) {
  return b.create<LLVM::ConstantOp>(loc, b.getF32Type(), b.getF32FloatAttr(v));
}

/// Returns the address of a new internal constant global holding `value`.
static Value globalAddress(OpBuilder &b, ModuleOp module, Location loc,
                           Type type, Attribute value, StringRef prefix,
                           int64_t &counter) {
  std::string name;
  do {
    name = (prefix + Twine(counter++)).str();
  } while (module.lookupSymbol(name));
  LLVM::GlobalOp global;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = b.create<LLVM::GlobalOp>(loc, type, /*isConstant=*/true,
                                      LLVM::Linkage::Internal, name, value,
                                      /*alignment=*/64);
  }
  return b.create<LLVM::AddressOfOp>(loc, global);
}

Value StageLowering::descriptor(ArrayRef<int64_t> words) {
  auto tensorType = RankedTensorType::get({(int64_t)words.size()},
                                          b.getI64Type());
  auto value = DenseElementsAttr::get(tensorType, words);
  auto type = LLVM::LLVMArrayType::get(b.getI64Type(), words.size());
  return globalAddress(b, module, loc, type, value, "__pd_desc_", globalCounter);
}

Value StageLowering::constantGlobal(ConstantOp op) {
  auto tensorType = cast<RankedTensorType>(op.getType());
  auto dense = cast<DenseElementsAttr>(op.getValue());
  int64_t n = tensorType.getNumElements();
  Type elem = tensorType.getElementType();
  DenseElementsAttr flat;
  if (elem.isInteger(1)) {
    // Booleans are stored one byte per element, as the kernels read them.
    elem = b.getI8Type();
    SmallVector<int8_t> bytes;
    for (bool v : dense.getValues<bool>())
      bytes.push_back(v);
    flat = DenseElementsAttr::get(RankedTensorType::get({n}, elem),
                                  ArrayRef<int8_t>(bytes));
  } else {
    flat = dense.reshape(RankedTensorType::get({n}, elem));
  }
  auto type = LLVM::LLVMArrayType::get(elem, n);
  return globalAddress(b, module, loc, type, flat, "__pd_const_", globalCounter);
}

void StageLowering::call(StringRef callee, ValueRange args) {
  auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(callee);
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    auto type = LLVM::LLVMFunctionType::get(
        LLVM::LLVMVoidType::get(b.getContext()),
        llvm::to_vector(args.getTypes()));
    fn = b.create<LLVM::LLVMFuncOp>(loc, callee, type);
  }
  b.create<LLVM::CallOp>(loc, fn, args);
}

Value StageLowering::regionBase(StringRef region) {
  for (auto [i, name] : llvm::enumerate(kRegionNames))
    if (region == name)
      return params[i + 1];
  return {};
}

/// The address of a tensor: its region's base plus its pd.buffer offset.
Value StageLowering::address(Value v) {
  if (Value cached = addresses.lookup(v))
    return cached;
  BufferAttr buffer = getBuffer(v);
  if (!buffer)
    return {};
  Value base = regionBase(buffer.getRegion());
  if (!base)
    return {};
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value addr = b.create<LLVM::GEPOp>(loc, ptr, b.getI8Type(), base,
                                     ArrayRef<LLVM::GEPArg>{byteOffset(buffer.getOffset())});
  addresses[v] = addr;
  return addr;
}

//===----------------------------------------------------------------------===//
// Broadcast descriptors
//===----------------------------------------------------------------------===//

/// Element strides of `shape` right-aligned against `target`, 0 on the
/// dimensions that broadcast.
static SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                             ArrayRef<int64_t> target) {
  int64_t rank = target.size(), lead = rank - shape.size();
  SmallVector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= lead; --i) {
    int64_t dim = shape[i - lead];
    strides[i] = (dim == 1 && target[i] != 1) ? 0 : stride;
    stride *= dim;
  }
  return strides;
}

/// [rank, dims..., strides of each operand...]; rank-0 shapes become [1].
SmallVector<int64_t> mlir::pd::makeDescriptor(ArrayRef<int64_t> dims,
                                           ArrayRef<ArrayRef<int64_t>> shapes) {
  SmallVector<int64_t> target(dims);
  if (target.empty())
    target.push_back(1);
  SmallVector<int64_t> words{(int64_t)target.size()};
  words.append(target);
  for (ArrayRef<int64_t> shape : shapes)
    words.append(broadcastStrides(shape, target));
  return words;
}

ArrayRef<int64_t> mlir::pd::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
int64_t mlir::pd::numel(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult StageLowering::lowerOp(Operation *op) {
  loc = op->getLoc();
  Value ctx = params[0];
  auto addr = [&](Value v) { return address(v); };
  for (Value v : op->getOperands())
    if (!addr(v))
      return op->emitError("pd-lower-to-runtime: operand has no buffer; run "
                           "pd-allocate-buffers first");
  for (Value v : op->getResults())
    if (!isa<ConstantOp>(op) && !addr(v))
      return op->emitError("pd-lower-to-runtime: result has no buffer");

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case<ParamRefOp>([](auto) { return success(); })
      .Case<ConstantOp>([&](ConstantOp c) {
        addresses[c] = constantGlobal(c);
        return success();
      })
      .Case<InputOp>([&](InputOp in) {
        call("pdrt_load_input", {ctx, i64(in.getIndex()), addr(in),
                                 i64(getTensorBytes(in.getType()))});
        return success();
      })
      .Case<RecvOp>([&](RecvOp r) {
        call("pdrt_recv", {ctx, i64(r.getChannel()), addr(r),
                           i64(getTensorBytes(r.getType()))});
        return success();
      })
      .Case<SendOp>([&](SendOp s) {
        call("pdrt_send", {ctx, i64(s.getChannel()), addr(s.getValue()),
                           i64(getTensorBytes(s.getValue().getType()))});
        return success();
      })
      .Case<MatMulOp>([&](MatMulOp mm) {
        bool ta = mm.getTransposeLhs(), tb = mm.getTransposeRhs();
        int64_t m = shapeOf(mm)[0], n = shapeOf(mm)[1];
        int64_t k = shapeOf(mm.getLhs())[ta ? 0 : 1];
        call("pdrt_matmul",
             {ctx, addr(mm.getLhs()), addr(mm.getRhs()), addr(mm), i64(m),
              i64(n), i64(k), i32(ta), i32(tb),
              f32(mm.getAlpha().convertToFloat()),
              f32(mm->hasAttr(PDDialect::AccumulateAttrHelper::getNameStr())
                      ? 1.0
                      : 0.0)});
        return success();
      })
      .Case<AddOp, SubOp, MulOp>([&](auto bin) {
        int code = isa<AddOp>(op)   ? PDRT_ADD
                   : isa<SubOp>(op) ? PDRT_SUB
                                    : PDRT_MUL;
        Value desc = descriptor(makeDescriptor(
            shapeOf(bin), {shapeOf(bin.getLhs()), shapeOf(bin.getRhs())}));
        call("pdrt_binary", {ctx, i32(code), addr(bin.getLhs()),
                             addr(bin.getRhs()), addr(bin), desc});
        return success();
      })
      .Case<ReluOp>([&](ReluOp r) {
        call("pdrt_relu", {ctx, addr(r.getInput()), addr(r), i64(numel(r))});
        return success();
      })
      .Case<ReluGradOp>([&](ReluGradOp r) {
        call("pdrt_relu_grad", {ctx, addr(r.getGrad()), addr(r.getOutput()),
                                addr(r), i64(numel(r))});
        return success();
      })
      .Case<ScaleOp>([&](ScaleOp s) {
        call("pdrt_scale", {ctx, addr(s.getInput()), addr(s), i64(numel(s)),
                            f32(s.getFactor().convertToFloat())});
        return success();
      })
      .Case<SumToOp>([&](SumToOp s) {
        Value desc = descriptor(
            makeDescriptor(shapeOf(s.getInput()), {shapeOf(s)}));
        call("pdrt_sum_to",
             {ctx, addr(s.getInput()), addr(s), i64(numel(s)), desc});
        return success();
      })
      .Case<SoftmaxCrossEntropyLossOp>([&](SoftmaxCrossEntropyLossOp l) {
        auto dims = shapeOf(l.getLogits());
        call(l.getType().getRank() ? "pdrt_softmax_xent_rows"
                                   : "pdrt_softmax_xent",
             {ctx, addr(l.getLogits()), addr(l.getLabels()), addr(l),
              i64(dims[0]), i64(dims[1]), i64(l.getIgnoreIndex())});
        return success();
      })
      .Case<SoftmaxCrossEntropyLossGradOp>(
          [&](SoftmaxCrossEntropyLossGradOp l) {
            auto dims = shapeOf(l.getLogits());
            bool rows = l.getGrad().getType().getRank() != 0;
            call(rows ? "pdrt_softmax_xent_rows_grad" : "pdrt_softmax_xent_grad",
                 {ctx, addr(l.getGrad()), addr(l.getLogits()),
                  addr(l.getLabels()), addr(l), i64(dims[0]), i64(dims[1]),
                  i64(l.getIgnoreIndex())});
            return success();
          })
      .Case<GradSeedOp>([&](GradSeedOp s) {
        call("pdrt_grad_seed", {ctx, addr(s)});
        return success();
      })
      .Case<ReportLossOp>([&](ReportLossOp r) {
        call("pdrt_report_loss", {ctx, addr(r.getLoss())});
        return success();
      })
      .Case<AccumulateGradOp>([&](AccumulateGradOp acc) {
        // A gradient computed in place in its accumulator needs no call.
        BufferAttr buffer = getBuffer(acc.getGrad());
        if (buffer && buffer.getRegion() == "grads")
          return success();
        int64_t offset =
            cast<IntegerAttr>(
                acc->getAttr(PDDialect::GradOffsetAttrHelper::getNameStr()))
                .getInt();
        auto ptr = LLVM::LLVMPointerType::get(b.getContext());
        Value dst = b.create<LLVM::GEPOp>(loc, ptr, b.getI8Type(), params[2],
                                          ArrayRef<LLVM::GEPArg>{byteOffset(offset)});
        call("pdrt_accumulate",
             {ctx, addr(acc.getGrad()), dst, i64(numel(acc.getGrad()))});
        return success();
      })
      .Case<func::ReturnOp>([&](auto) {
        b.create<LLVM::ReturnOp>(loc, ValueRange{});
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        for (auto family : {lowerTensorOp, lowerNNOp, lowerConvOp})
          if (std::optional<LogicalResult> done = family(*this, other))
            return *done;
        return other->emitError("pd-lower-to-runtime: no runtime kernel for '")
               << other->getName() << "'";
      });
}

LogicalResult StageLowering::lower(func::FuncOp fn, StringRef name) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(b.getContext()), SmallVector<Type>(6, ptr));
  b.setInsertionPointToEnd(module.getBody());
  auto llvmFn = b.create<LLVM::LLVMFuncOp>(fn.getLoc(), name, type);
  Block *entry = llvmFn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  params.assign(entry->args_begin(), entry->args_end());
  addresses.clear();
  for (Operation &op : fn.getBody().front())
    if (failed(lowerOp(&op)))
      return failure();
  return success();
}

void LowerToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  std::string prefix = "stage" + std::to_string(stage);
  auto fwd = module.lookupSymbol<func::FuncOp>(prefix + "_forward");
  auto bwd = module.lookupSymbol<func::FuncOp>(prefix + "_backward");
  if (!fwd || !bwd) {
    module.emitError("pd-lower-to-runtime: no functions of stage ")
                      << int64_t(stage);
    return signalPassFailure();
  }
  OpBuilder b(module.getContext());
  StageLowering lowering(module, b);
  if (failed(lowering.lower(fwd, "pd_stage_forward")) ||
      failed(lowering.lower(bwd, "pd_stage_backward")))
    return signalPassFailure();
  // Only the LLVM functions and globals of this stage remain.
  for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
    if (isa<func::FuncOp, ParamOp, StateOp>(op))
      op.erase();
}
