//===- LowerStageOps.cpp - Stage structure to runtime calls -----*- C++ -*-===//
//
// pd-lower-to-runtime's patterns for the structure of a stage: each stage
// function becomes `llvm.func @pd_stage_forward|backward(ctx, weights,
// grads, stash, workspace, comm)` (pdrt.h's pdrt_stage_fn), its stash
// arguments pointers into the stash slot; constants become read-only data;
// parameter reads, inputs, send/recv, gradient seeds, loss reports and
// gradient accumulation become their pdrt_* calls. pd.param and pd.state
// declarations leave with the tensor world.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"

using namespace mlir;
using namespace mlir::pd;

namespace {

/// A stage function to the C ABI of pdrt_stage_fn.
class StageFuncLowering : public OpConversionPattern<func::FuncOp> {
public:
  StageFuncLowering(const TypeConverter &converter, MLIRContext *context,
                    StageLowering &)
      : OpConversionPattern(converter, context) {}

  LogicalResult
  matchAndRewrite(func::FuncOp fn, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    PhaseAttr phase = PDDialect::PhaseAttrHelper(getContext()).getAttr(fn);
    if (!phase || fn.getBody().getBlocks().size() != 1)
      return rewriter.notifyMatchFailure(fn, "not a stage function");
    auto ptr = LLVM::LLVMPointerType::get(getContext());
    auto type = LLVM::LLVMFunctionType::get(
        LLVM::LLVMVoidType::get(getContext()), SmallVector<Type>(6, ptr));
    StringRef name = phase.getValue() == Phase::Forward ? "pd_stage_forward"
                                                        : "pd_stage_backward";
    auto llvmFn = rewriter.create<LLVM::LLVMFuncOp>(fn.getLoc(), name, type);
    Block *entry = rewriter.createBlock(&llvmFn.getBody(), {},
                                        SmallVector<Type>(6, ptr),
                                        SmallVector<Location>(6, fn.getLoc()));
    // Stash arguments: pointers into the microbatch's stash slot.
    Value stash = entry->getArgument(3);
    SmallVector<Value> args;
    for (BlockArgument arg : fn.getArguments()) {
      BufferAttr buffer = getBuffer(arg);
      args.push_back(
          byteOffset(rewriter, arg.getLoc(), stash, buffer.getOffset()));
    }
    rewriter.inlineBlockBefore(&fn.getBody().front(), entry, entry->end(),
                               args);
    rewriter.eraseOp(fn);
    return success();
  }
};

/// The stage function's end: results are in their buffers already.
class ReturnLowering : public OpConversionPattern<func::ReturnOp> {
public:
  ReturnLowering(const TypeConverter &converter, MLIRContext *context,
                 StageLowering &)
      : OpConversionPattern(converter, context) {}

  LogicalResult
  matchAndRewrite(func::ReturnOp ret, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(ret, ValueRange{});
    return success();
  }
};

/// A constant tensor: read-only data of the stage object (booleans one
/// byte per element, as the kernels read them).
class ConstantLowering : public OpConversionPattern<ConstantOp> {
public:
  ConstantLowering(const TypeConverter &converter, MLIRContext *context,
                   StageLowering &stage)
      : OpConversionPattern(converter, context), target(stage.target) {}

  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = cast<DenseElementsAttr>(op.getValue());
    int64_t n = dense.getNumElements();
    Type elem = dense.getElementType();
    DenseElementsAttr flat;
    if (elem.isInteger(1)) {
      SmallVector<int8_t> bytes;
      for (bool v : dense.getValues<bool>())
        bytes.push_back(v);
      flat = DenseElementsAttr::get(
          RankedTensorType::get({n}, rewriter.getI8Type()),
          ArrayRef<int8_t>(bytes));
    } else {
      flat = dense.reshape(RankedTensorType::get({n}, elem));
    }
    rewriter.replaceOp(op, target.getConstantData(
                               rewriter, op.getLoc(),
                               op->getParentOfType<ModuleOp>(), flat,
                               "__pd_const_"));
    return success();
  }

private:
  RuntimeTarget &target;
};

/// Declarations with no runtime form: the plan carries them.
template <typename OpTy>
class EraseLowering : public OpConversionPattern<OpTy> {
public:
  EraseLowering(const TypeConverter &converter, MLIRContext *context,
                StageLowering &)
      : OpConversionPattern<OpTy>(converter, context) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

/// Adds up a weight gradient into its accumulator (grads + pd.grad_offset),
/// unless it was computed in place there.
static LogicalResult lowerAccumulate(AccumulateGradOp acc,
                                     RuntimeCallBuilder &b) {
  BufferAttr buffer = getBuffer(acc.getGrad());
  if (buffer && buffer.getRegion() == ArenaRegion::Grads)
    return success();
  std::optional<int64_t> offset =
      getContractInt<PDDialect::GradOffsetAttrHelper>(acc);
  if (!offset)
    return acc.emitError("pd-lower-to-runtime: pd.accumulate_grad has no "
                         "pd.grad_offset; run pd-allocate-buffers first");
  Value dst = b.offset(b.regionBase(ArenaRegion::Grads), *offset);
  b.call(RuntimeFn::pdrt_accumulate,
         {b.ctx(), b.address(acc.getGrad()), dst, b.i64(numel(acc.getGrad()))});
  return success();
}

void mlir::pd::populateStageRuntimePatterns(RuntimePatterns &patterns) {
  patterns.addPattern<StageFuncLowering>();
  patterns.addPattern<ReturnLowering>();
  patterns.addPattern<ConstantLowering>();
  patterns.addPattern<EraseLowering<ParamOp>>();
  patterns.addPattern<EraseLowering<StateOp>>();
  // A parameter read is its weight slot: no call.
  patterns.add<ParamRefOp>([](ParamRefOp, RuntimeCallBuilder &) {
    return success();
  });
  patterns.add<InputOp>([](InputOp in, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_load_input,
           {b.ctx(), b.i64(in.getIndex()), b.address(in),
            b.i64(getTensorBytes(in.getType()))});
    return success();
  });
  patterns.add<RecvOp>([](RecvOp r, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_recv, {b.ctx(), b.i64(r.getChannel()), b.address(r),
                                  b.i64(getTensorBytes(r.getType()))});
    return success();
  });
  patterns.add<SendOp>([](SendOp s, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_send,
           {b.ctx(), b.i64(s.getChannel()), b.address(s.getValue()),
            b.i64(getTensorBytes(s.getValue().getType()))});
    return success();
  });
  patterns.add<GradSeedOp>([](GradSeedOp s, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_grad_seed, {b.ctx(), b.address(s)});
    return success();
  });
  patterns.add<ProfileMarkOp>([](ProfileMarkOp mark, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_profile_mark, {b.ctx(), b.i64(mark.getId())});
    return success();
  });
  patterns.add<InterleaveBeginOp>([](InterleaveBeginOp, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_interleave_begin, {b.ctx()});
    return success();
  });
  patterns.add<InterleaveEndOp>([](InterleaveEndOp, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_interleave_end, {b.ctx()});
    return success();
  });
  patterns.add<ReportLossOp>([](ReportLossOp r, RuntimeCallBuilder &b) {
    b.call(RuntimeFn::pdrt_report_loss, {b.ctx(), b.address(r.getLoss())});
    return success();
  });
  patterns.add<AccumulateGradOp>(lowerAccumulate);
}
