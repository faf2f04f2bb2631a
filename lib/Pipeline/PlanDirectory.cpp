//===- PlanDirectory.cpp - Atomic creation of PLAN_DIR ----------*- C++ -*-===//
//
// Builds the plan in `<target>.pdc-tmp` and renames it over the target on
// success; the destructor removes an uncommitted temporary directory.
//
//===----------------------------------------------------------------------===//

#include "PlanDirectory.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::pd;
namespace fs = llvm::sys::fs;

FailureOr<PlanDirectory> PlanDirectory::create(Location loc,
                                               llvm::StringRef target) {
  llvm::SmallString<256> abs(target);
  fs::make_absolute(abs);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  std::string tmp = (abs + ".pdc-tmp").str();
  fs::remove_directories(tmp);
  if (std::error_code ec = fs::create_directories(tmp))
    return emitError(loc, "cannot create directory '")
           << tmp << "': " << ec.message();
  return PlanDirectory(loc, std::string(abs), tmp);
}

PlanDirectory::PlanDirectory(PlanDirectory &&other)
    : loc(other.loc), target(std::move(other.target)),
      tmp(std::move(other.tmp)), committed(other.committed) {
  other.committed = true;
}

PlanDirectory::~PlanDirectory() {
  if (!committed)
    fs::remove_directories(tmp);
}

LogicalResult PlanDirectory::writeFile(llvm::StringRef name,
                                       llvm::StringRef contents) {
  llvm::SmallString<256> path(tmp);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, fs::OF_Text);
  if (!ec) {
    os << contents;
    os.close();
  }
  if (ec || os.has_error())
    return emitError(loc, "cannot write '") << path << "'";
  return success();
}

/// A directory pdc may replace: empty, or an earlier plan.
static bool isReplaceable(llvm::StringRef dir) {
  llvm::SmallString<256> plan(dir);
  llvm::sys::path::append(plan, "plan.json");
  if (fs::exists(plan))
    return true;
  std::error_code ec;
  return fs::directory_iterator(dir, ec) == fs::directory_iterator() && !ec;
}

LogicalResult PlanDirectory::commit() {
  if (fs::exists(target)) {
    if (!fs::is_directory(target) || !isReplaceable(target))
      return emitError(loc, "refusing to replace '")
             << target << "': it exists and is not a pdc plan directory";
    if (std::error_code ec = fs::remove_directories(target))
      return emitError(loc, "cannot remove the old plan '")
             << target << "': " << ec.message();
  }
  if (std::error_code ec = fs::rename(tmp, target))
    return emitError(loc, "cannot move the plan into '")
           << target << "': " << ec.message();
  committed = true;
  return success();
}
