//===- LinkStage.cpp - Link a stage object with the runtime -----*- C++ -*-===//
//
// Runs the system C++ driver to link a stage's object with libpdrt.a and
// the runtime's dependencies, as listed one argument per line in
// pdrt-link.txt (written by runtime/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "pd/Codegen/Codegen.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;
using namespace mlir::pd;

/// Finds pdrt-link.txt: beside pdc's own lib/ directory in a build or
/// install tree, else where this build wrote it.
static std::string findLinkFile() {
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(path, "..", "lib", "pdrt-link.txt");
  if (llvm::sys::fs::exists(path))
    return std::string(path);
  return PDC_RUNTIME_LINK_FILE;
}

LogicalResult mlir::pd::linkStage(Location loc, StringRef objPath,
                                  StringRef exePath) {
  std::string linkFile = findLinkFile();
  auto buffer = llvm::MemoryBuffer::getFile(linkFile);
  if (!buffer)
    return emitError(loc, "cannot read the runtime's link line ")
           << linkFile << ": " << buffer.getError().message();
  auto driver = llvm::sys::findProgramByName("c++");
  if (!driver)
    return emitError(loc, "no C++ driver (c++) on PATH to link stages");
  std::vector<std::string> args{*driver, objPath.str()};
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines)
    if (!line.trim().empty())
      args.push_back(line.trim().str());
  args.push_back("-o");
  args.push_back(exePath.str());
  std::vector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*driver, argRefs, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0)
    return emitError(loc, "linking ")
           << exePath << " failed (exit " << rc << ")"
           << (message.empty() ? "" : ": ") << message;
  return success();
}
