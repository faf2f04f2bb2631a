//===- isa_fixture.h - Kernel tests run on each vector ISA ------*- C++ -*-===//

#ifndef PDRT_TEST_ISA_FIXTURE_H
#define PDRT_TEST_ISA_FIXTURE_H

#include "cpu/vmath.h"

#include <gtest/gtest.h>

namespace pdtest {

/// A TEST_P fixture over a bool: true runs the runtime's AVX-512 kernels
/// (skipped where the CPU has no AVX-512F/DQ), false its AVX2 ones.
class OnIsa : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    pdrt::vmath::useAvx512(GetParam());
    if (GetParam() && !pdrt::vmath::hasAvx512())
      GTEST_SKIP() << "no AVX-512F/DQ on this CPU";
  }
  void TearDown() override { pdrt::vmath::useAvx512(true); }
};

} // namespace pdtest

#endif // PDRT_TEST_ISA_FIXTURE_H
