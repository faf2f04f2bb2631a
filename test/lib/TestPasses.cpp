//===- TestPasses.cpp - Registration of test-only pd passes -----*- C++ -*-===//
//
// Test-only passes print what an analysis decided so that FileCheck can
// match it (Triton's test/lib style). Linked into pd-opt only.
//
//===----------------------------------------------------------------------===//

namespace mlir::pd::test {
void registerTestPasses() {}
} // namespace mlir::pd::test
