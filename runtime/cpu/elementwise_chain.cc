//===- elementwise_chain.cc - Fused elementwise chains ------------------------===//
//
// pdrt_elementwise_chain runs a small program of elementwise ops (formed by
// pd-fuse-elementwise-chains) over blocks of kBlock elements: every
// intermediate lives in a block register that stays in L1, and only the
// result is written to memory, so a chain of k ops reads its inputs once
// and writes once instead of k reads and writes. Each instruction is the
// same vectorised loop (or pdrt_unary on the block) the unfused op runs, in
// the same order, so results are bit for bit those of the unfused ops.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_numerics.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

constexpr int64_t kBlock = 512;
constexpr int64_t kMaxInputs = 4;

/// Fills `dst[0, count)` with input elements [at, at + count) read with
/// period `period` (the input repeats every `period` elements).
void loadBlock(const float *in, int64_t period, int64_t at, int64_t count,
               float *dst) {
  if (period <= 0 || at + count <= period) {
    std::memcpy(dst, in + at, count * sizeof(float));
    return;
  }
  if (period == 1) {
    std::fill(dst, dst + count, in[0]);
    return;
  }
  for (int64_t i = 0, e = at % period; i < count; ++i, e = e + 1 == period ? 0 : e + 1)
    dst[i] = in[e];
}

/// d = a (Op) b with the scalar rule every pdrt_binary uses.
template <int Op>
void binaryLoop(const float *__restrict a, const float *__restrict b,
                float *__restrict d, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    d[i] = pdrt_binary_apply(Op, a[i], b[i]);
}

void binaryBlock(int64_t code, const float *a, const float *b, float *d,
                 int64_t count) {
  switch (code) {
  case PDRT_ADD: return binaryLoop<PDRT_ADD>(a, b, d, count);
  case PDRT_SUB: return binaryLoop<PDRT_SUB>(a, b, d, count);
  case PDRT_MUL: return binaryLoop<PDRT_MUL>(a, b, d, count);
  case PDRT_DIV: return binaryLoop<PDRT_DIV>(a, b, d, count);
  case PDRT_BINARY_MIN: return binaryLoop<PDRT_BINARY_MIN>(a, b, d, count);
  case PDRT_BINARY_MAX: return binaryLoop<PDRT_BINARY_MAX>(a, b, d, count);
  default: return binaryLoop<PDRT_BINARY_POW>(a, b, d, count);
  }
}

/// Checks the descriptor once: register and input bounds, known kinds.
bool validProgram(pdrt_ctx *ctx, const int64_t *desc) {
  int64_t inputs = desc[1], regs = desc[2 + inputs],
          count = desc[3 + inputs];
  const int64_t *code = desc + 4 + inputs;
  bool ok = inputs >= 1 && inputs <= kMaxInputs && regs >= inputs &&
            count >= 1;
  for (int64_t k = 0; ok && k < count; ++k) {
    const int64_t *ins = code + 5 * k;
    bool twoOperands = ins[0] == PDRT_CHAIN_BINARY;
    bool oneOperand = ins[0] == PDRT_CHAIN_UNARY || ins[0] == PDRT_CHAIN_RELU;
    ok = ins[0] >= PDRT_CHAIN_BINARY && ins[0] <= PDRT_CHAIN_RELU &&
         ins[2] >= inputs && ins[2] < regs &&
         (!(oneOperand || twoOperands) || (ins[3] >= 0 && ins[3] < regs)) &&
         (!twoOperands || (ins[4] >= 0 && ins[4] < regs));
  }
  if (!ok)
    pdrt::setError(ctx, "pdrt_elementwise_chain: malformed program");
  return ok;
}

} // namespace

extern "C" void pdrt_elementwise_chain(pdrt_ctx *ctx, const int64_t *desc,
                                       float *out, const float *in0,
                                       const float *in1, const float *in2,
                                       const float *in3) {
  if (pdrt::hasError(ctx) || !validProgram(ctx, desc))
    return;
  int64_t n = desc[0], inputs = desc[1];
  const int64_t *periods = desc + 2;
  int64_t regs = desc[2 + inputs], count = desc[3 + inputs];
  const int64_t *code = desc + 4 + inputs;
  const float *in[kMaxInputs] = {in0, in1, in2, in3};
  // Block registers, reused across calls (no allocation per kernel call).
  static thread_local std::vector<float> storage;
  if ((int64_t)storage.size() < regs * kBlock)
    storage.resize(regs * kBlock);
  auto reg = [&](int64_t r) { return storage.data() + r * kBlock; };
  int64_t last = code[5 * (count - 1) + 2];
  for (int64_t at = 0; at < n; at += kBlock) {
    int64_t c = std::min(kBlock, n - at);
    for (int64_t i = 0; i < inputs; ++i)
      loadBlock(in[i], periods[i], at, c, reg(i));
    for (int64_t k = 0; k < count; ++k) {
      const int64_t *ins = code + 5 * k;
      float *dst = ins[2] == last && k == count - 1 ? out + at : reg(ins[2]);
      switch (ins[0]) {
      case PDRT_CHAIN_BINARY:
        binaryBlock(ins[1], reg(ins[3]), reg(ins[4]), dst, c);
        break;
      case PDRT_CHAIN_UNARY:
        pdrt_unary(ctx, (int32_t)ins[1], 0.0f, reg(ins[3]), dst, c);
        break;
      case PDRT_CHAIN_CONST: {
        uint32_t bits = (uint32_t)ins[3];
        float value;
        std::memcpy(&value, &bits, sizeof(value));
        std::fill(dst, dst + c, value);
        break;
      }
      case PDRT_CHAIN_RELU: {
        const float *a = reg(ins[3]);
        for (int64_t i = 0; i < c; ++i)
          dst[i] = a[i] > 0.0f ? a[i] : 0.0f;
        break;
      }
      }
    }
  }
}
