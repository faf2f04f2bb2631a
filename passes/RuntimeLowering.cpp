//===- RuntimeLowering.cpp - The shared part of runtime lowering ----------===//
//
// The type converter, the CPU target and RuntimeCallBuilder: addresses,
// constants, descriptors and ABI-checked calls for every pattern file.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::pd;

//===----------------------------------------------------------------------===//
// Target and types
//===----------------------------------------------------------------------===//

RuntimeTarget::~RuntimeTarget() = default;

namespace {

class CpuRuntimeTarget : public RuntimeTarget {
public:
  StringRef getSymbol(RuntimeFn fn) const override {
    return getRuntimeFnName(fn);
  }

  Value getConstantData(OpBuilder &b, Location loc, ModuleOp module,
                        DenseElementsAttr value, StringRef prefix) override {
    if (module != scanned) {
      scanned = module;
      taken.clear();
      for (Operation &op : *module.getBody())
        if (auto name = op.getAttrOfType<StringAttr>(
                SymbolTable::getSymbolAttrName()))
          taken.insert(name.getValue());
    }
    std::string name;
    do {
      name = (prefix + Twine(counter++)).str();
    } while (!taken.insert(name).second);
    auto type = LLVM::LLVMArrayType::get(value.getElementType(),
                                         value.getNumElements());
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

private:
  /// Numbers the internal globals.
  int64_t counter = 0;
  /// The symbol names of `scanned` and those given out since: one scan of
  /// the module instead of a lookup per constant.
  ModuleOp scanned;
  llvm::StringSet<> taken;
};

} // namespace

std::unique_ptr<RuntimeTarget> mlir::pd::createCpuRuntimeTarget() {
  return std::make_unique<CpuRuntimeTarget>();
}

SmallVector<LLVM::LLVMFuncOp>
mlir::pd::declareRuntimeFunctions(ModuleOp module, RuntimeTarget &target) {
  llvm::StringMap<LLVM::LLVMFuncOp> existing;
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
    existing[fn.getName()] = fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  SmallVector<LLVM::LLVMFuncOp> decls;
  for (unsigned i = 0; i < kNumRuntimeFns; ++i) {
    auto fn = static_cast<RuntimeFn>(i);
    StringRef symbol = target.getSymbol(fn);
    LLVM::LLVMFuncOp decl = existing.lookup(symbol);
    if (!decl)
      decl = b.create<LLVM::LLVMFuncOp>(
          module.getLoc(), symbol, getRuntimeFnType(module.getContext(), fn));
    decls.push_back(decl);
  }
  return decls;
}

void mlir::pd::eraseUncalledDeclarations(ModuleOp module,
                                         ArrayRef<LLVM::LLVMFuncOp> decls) {
  llvm::DenseSet<StringAttr> called;
  module.walk([&](LLVM::CallOp call) {
    if (auto callee = call.getCalleeAttr())
      called.insert(callee.getAttr());
  });
  for (LLVM::LLVMFuncOp decl : decls)
    if (decl.isExternal() && !called.contains(decl.getSymNameAttr()))
      decl.erase();
}

RuntimeTypeConverter::RuntimeTypeConverter(MLIRContext *context) {
  addConversion([](Type type) { return type; });
  addConversion([context](RankedTensorType) -> Type {
    return LLVM::LLVMPointerType::get(context);
  });
}

//===----------------------------------------------------------------------===//
// RuntimeCallBuilder
//===----------------------------------------------------------------------===//

/// The stage function's parameters after ctx, in order (pdrt.h's
/// pdrt_stage_fn).
static constexpr ArenaRegion kParamRegions[] = {
    ArenaRegion::Weights, ArenaRegion::Grads, ArenaRegion::Stash,
    ArenaRegion::Workspace, ArenaRegion::Comm};

RuntimeCallBuilder::RuntimeCallBuilder(Operation *op,
                                       ConversionPatternRewriter &rewriter,
                                       StageLowering &stage)
    : op(op), rewriter(rewriter), stage(stage), loc(op->getLoc()),
      function(op->getParentOfType<LLVM::LLVMFuncOp>()) {}

Value RuntimeCallBuilder::ctx() { return function.getArgument(0); }

Value RuntimeCallBuilder::regionBase(ArenaRegion region) {
  for (auto [i, r] : llvm::enumerate(kParamRegions))
    if (r == region)
      return function.getArgument(i + 1);
  return {};
}

Value mlir::pd::byteOffset(OpBuilder &builder, Location loc, Value ptr,
                          int64_t bytes) {
  // Small offsets stay constant indices (readable IR); larger ones would be
  // silently truncated to 29 bits, so they become i64 values.
  constexpr int64_t limit = int64_t(1) << (LLVM::kGEPConstantBitWidth - 1);
  LLVM::GEPArg index =
      (bytes >= -limit && bytes < limit)
          ? LLVM::GEPArg(static_cast<int32_t>(bytes))
          : LLVM::GEPArg(builder.create<LLVM::ConstantOp>(
                loc, builder.getI64Type(), builder.getI64IntegerAttr(bytes)));
  return builder.create<LLVM::GEPOp>(loc, ptr.getType(), builder.getI8Type(),
                                     ptr, ArrayRef<LLVM::GEPArg>{index});
}

Value RuntimeCallBuilder::offset(Value ptr, int64_t bytes) {
  return byteOffset(rewriter, loc, ptr, bytes);
}

Value RuntimeCallBuilder::address(Value v) {
  if (v.getDefiningOp() != op)
    return rewriter.getRemappedValue(v);
  if (Value cached = results.lookup(v))
    return cached;
  BufferAttr buffer = getBuffer(v);
  Value base = buffer ? regionBase(buffer.getRegion()) : Value();
  if (!base)
    return {};
  Value addr = offset(base, buffer.getOffset());
  results[v] = addr;
  return addr;
}

Value RuntimeCallBuilder::null() {
  return rewriter.create<LLVM::ZeroOp>(
      loc, LLVM::LLVMPointerType::get(rewriter.getContext()));
}

Value RuntimeCallBuilder::i64(int64_t v) {
  return rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI64Type(),
                                           rewriter.getI64IntegerAttr(v));
}

Value RuntimeCallBuilder::i32(int64_t v) {
  return rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI32Type(),
                                           rewriter.getI32IntegerAttr(v));
}

Value RuntimeCallBuilder::f32(double v) {
  return rewriter.create<LLVM::ConstantOp>(loc, rewriter.getF32Type(),
                                           rewriter.getF32FloatAttr(v));
}

Value RuntimeCallBuilder::descriptor(ArrayRef<int64_t> words) {
  auto type = RankedTensorType::get({(int64_t)words.size()},
                                    rewriter.getI64Type());
  return stage.target.getConstantData(rewriter, loc,
                                      op->getParentOfType<ModuleOp>(),
                                DenseElementsAttr::get(type, words),
                                "__pd_desc_");
}

Value RuntimeCallBuilder::call(RuntimeFn fn, ValueRange args) {
  LLVM::LLVMFuncOp callee = stage.runtimeDecls[static_cast<unsigned>(fn)];
  LLVM::LLVMFunctionType type = callee.getFunctionType();
  // A mismatch is a bug in a pattern, never in the user's model.
  assert(llvm::equal(args.getTypes(), type.getParams()) &&
         "runtime call arguments differ from pdrt_abi.def");
  (void)type;
  auto call = rewriter.create<LLVM::CallOp>(loc, callee, args);
  return call.getNumResults() ? call.getResult() : Value();
}

SmallVector<Value> RuntimeCallBuilder::resultAddresses() {
  SmallVector<Value> addresses;
  for (Value result : op->getResults()) {
    Value addr = address(result);
    addresses.push_back(addr ? addr : null());
  }
  return addresses;
}

//===----------------------------------------------------------------------===//
// Shapes and broadcast descriptors
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

SmallVector<int64_t>
mlir::pd::makeDescriptor(ArrayRef<int64_t> dims,
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

int64_t mlir::pd::numel(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}
