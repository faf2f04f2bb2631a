//===- EmitObject.cpp - Stage IR to LLVM IR and native objects --*- C++ -*-===//
//
// Lowers one stage of a buffer-assigned module with pd-lower-to-runtime,
// embeds its manifest as a constant string behind pd_stage_manifest(),
// translates to LLVM IR and emits a PIC object with llvm::TargetMachine.
//
//===----------------------------------------------------------------------===//

#include "pd/Codegen/Codegen.h"
#include "dialects/PD/IR/PDDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "passes/Passes.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::pd;

/// Adds `const char *pd_stage_manifest(void)` returning `manifest`.
static void embedManifest(ModuleOp module, StringRef manifest) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  std::string text = manifest.str();
  text.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
  auto global = b.create<LLVM::GlobalOp>(loc, type, /*isConstant=*/true,
                                         LLVM::Linkage::Internal,
                                         "__pd_manifest", b.getStringAttr(text));
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto fn = b.create<LLVM::LLVMFuncOp>(
      loc, "pd_stage_manifest", LLVM::LLVMFunctionType::get(ptr, {}));
  b.setInsertionPointToStart(fn.addEntryBlock(b));
  Value addr = b.create<LLVM::AddressOfOp>(loc, global);
  b.create<LLVM::ReturnOp>(loc, addr);
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::pd::lowerStageToLLVM(ModuleOp module, const StageInfo &info,
                           const CompilerOptions &options) {
  OwningOpRef<ModuleOp> clone = module.clone();
  PassManager pm(module.getContext());
  LowerToRuntimePassOptions lowerOptions;
  lowerOptions.stage = info.stage;
  pm.addPass(createLowerToRuntimePass(lowerOptions));
  if (failed(pm.run(*clone)))
    return failure();
  embedManifest(*clone, buildStageManifest(info, options));
  // Attributes of earlier phases mean nothing to the LLVM translation.
  for (NamedAttribute attr : llvm::to_vector(clone->getOperation()->getAttrs()))
    if (isa_and_nonnull<PDDialect>(attr.getNameDialect()))
      clone->getOperation()->removeAttr(attr.getName());
  return clone;
}

static std::unique_ptr<llvm::Module> translate(ModuleOp module,
                                               llvm::LLVMContext &ctx) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);
  return translateModuleToLLVMIR(module, ctx, "pd_stage");
}

LogicalResult mlir::pd::printLLVMIR(ModuleOp llvmModule, llvm::raw_ostream &os) {
  llvm::LLVMContext ctx;
  auto module = translate(llvmModule, ctx);
  if (!module)
    return llvmModule.emitError("translation to LLVM IR failed");
  module->print(os, nullptr);
  return success();
}

LogicalResult mlir::pd::emitObjectFile(ModuleOp llvmModule, StringRef objPath) {
  llvm::LLVMContext ctx;
  auto module = translate(llvmModule, ctx);
  if (!module)
    return llvmModule.emitError("translation to LLVM IR failed");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getDefaultTargetTriple(), error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvmModule.emitError("no LLVM target for ") << triple << ": " << error;
  // The stage functions are glue: one straight-line call of a runtime
  // kernel per op, arithmetic none. At the default level LLVM's greedy
  // register allocator grows quadratically with their length (pointers
  // live across thousands of calls: 4.2 s of 5.9 at 192 GPT layers, see
  // docs/compile-time.md); the fast allocator of -O0 is linear, and the
  // training step does not change (the kernels are compiled with the
  // runtime, at -O3).
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::None));
  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(triple);
  std::error_code ec;
  llvm::raw_fd_ostream out(objPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvmModule.emitError("cannot write ") << objPath << ": "
                                                 << ec.message();
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return llvmModule.emitError("LLVM cannot emit objects for ") << triple;
  pm.run(*module);
  return success();
}
