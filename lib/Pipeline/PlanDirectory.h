//===- PlanDirectory.h - Atomic creation of PLAN_DIR ------------*- C++ -*-===//
//
// A plan directory is built in a temporary sibling and renamed into place
// only when complete, so a failed compile never leaves a half-written plan.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_PLANDIRECTORY_H
#define PD_LIB_PIPELINE_PLANDIRECTORY_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::pd {

class PlanDirectory {
public:
  /// Creates the temporary directory beside `target`.
  static FailureOr<PlanDirectory> create(Location loc, llvm::StringRef target);
  PlanDirectory(PlanDirectory &&other);
  ~PlanDirectory();

  /// The directory to write into until commit().
  llvm::StringRef path() const { return tmp; }
  /// Writes `contents` to the file `name` inside the directory.
  LogicalResult writeFile(llvm::StringRef name, llvm::StringRef contents);
  /// Replaces the target (if it is an earlier plan) with the new plan.
  LogicalResult commit();

private:
  PlanDirectory(Location loc, std::string target, std::string tmp)
      : loc(loc), target(std::move(target)), tmp(std::move(tmp)) {}
  Location loc;
  std::string target, tmp;
  bool committed = false;
};

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_PLANDIRECTORY_H
