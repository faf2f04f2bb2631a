/*===- pdrt_codes.h - Op codes shared by the runtime and pdc ---*- C -*-===//
 *
 * The integer codes the pdrt_* kernels take (binary op, unary function,
 * comparison, element type, scatter mode). This header is the one table of
 * them: the runtime's kernels switch on these names, and pdc's lowering
 * passes (passes/Lower*.cpp) include it to emit the same values; the pd
 * dialect checks its unary kinds against it at build time. Plain C, no
 * declarations besides the enums.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_CODES_H
#define PDRT_PDRT_CODES_H

/// Binary op codes of pdrt_binary (pdrt.h).
enum pdrt_binary_op {
  PDRT_ADD = 0, PDRT_SUB = 1, PDRT_MUL = 2, PDRT_DIV = 3, PDRT_BINARY_POW = 4,
  PDRT_BINARY_MIN = 5, PDRT_BINARY_MAX = 6
};

/// Functions of pdrt_unary and pdrt_unary_grad (pdrt_nn.h); PDRT_POW
/// computes x^alpha, PDRT_SILU x * sigmoid(x).
enum pdrt_unary_kind {
  PDRT_NEG = 0, PDRT_SQRT = 1, PDRT_EXP = 2, PDRT_LOG = 3, PDRT_ERF = 4,
  PDRT_TANH = 5, PDRT_SIGMOID = 6, PDRT_RECIPROCAL = 7, PDRT_POW = 8,
  PDRT_COS = 9, PDRT_SIN = 10, PDRT_SILU = 11
};

/// Element types of the type-aware kernels (pdrt_cast, pdrt_compare): f32,
/// int64, int32, and bool stored as one byte holding 0 or 1 (pdrt_tensor.h).
enum pdrt_dtype {
  PDRT_DT_F32 = 0, PDRT_DT_I64 = 1, PDRT_DT_I32 = 2, PDRT_DT_BOOL = 3
};

/// Op codes of pdrt_compare: comparisons, and logic ops on bools.
enum pdrt_compare_op {
  PDRT_CMP_EQ = 0, PDRT_CMP_LT = 1, PDRT_CMP_LE = 2, PDRT_CMP_GT = 3,
  PDRT_CMP_GE = 4, PDRT_LOGIC_AND = 5, PDRT_LOGIC_OR = 6, PDRT_LOGIC_XOR = 7
};

/// Instructions of pdrt_elementwise_chain (pdrt_nn.h), five words each:
/// [kind, code, dst, a, b] over block registers (the inputs first).
///   PDRT_CHAIN_BINARY  dst = a (code: pdrt_binary_op) b
///   PDRT_CHAIN_UNARY   dst = f(a), code: pdrt_unary_kind (not PDRT_POW)
///   PDRT_CHAIN_CONST   dst = the float whose bits are a (low 32 bits)
///   PDRT_CHAIN_RELU    dst = max(a, 0)
enum pdrt_chain_kind {
  PDRT_CHAIN_BINARY = 0, PDRT_CHAIN_UNARY = 1, PDRT_CHAIN_CONST = 2,
  PDRT_CHAIN_RELU = 3
};

/// The triangle word of pdrt_batch_matmul_strided's descriptor: the
/// blocks of a square matrix the GEMM skips under a causal mask (the pd
/// dialect's Triangle, checked at build time). PDRT_RESULT_LOWER: only C's
/// lower triangle is read, so only the blocks on and below the diagonal
/// are computed; PDRT_LHS_LOWER / PDRT_LHS_UPPER: op(A) is zero above /
/// below its diagonal, so each row block of C sums over op(A)'s nonzero
/// columns only. Blocks are PDRT_CAUSAL_BLOCK rows or columns.
enum pdrt_triangle {
  PDRT_DENSE = 0, PDRT_RESULT_LOWER = 1, PDRT_LHS_LOWER = 2, PDRT_LHS_UPPER = 3
};
enum { PDRT_CAUSAL_BLOCK = 32 };

/// Flags of pdrt_masked_softmax for the rows a mask computed in the step
/// leaves empty or that overflow (pdrt_nn.h): PDRT_SOFTMAX_ZERO_NAN_ROWS
/// zeroes a row whose softmax is NaN; PDRT_SOFTMAX_UNIFORM_EMPTY_ROWS
/// gives a row that keeps nothing 1 / dim everywhere (a finite fill).
enum pdrt_softmax_flags {
  PDRT_SOFTMAX_ZERO_NAN_ROWS = 1,
  PDRT_SOFTMAX_UNIFORM_EMPTY_ROWS = 2
};

/// `zero_first` of pdrt_scatter and pdrt_gather_grad: accumulate into y as
/// it is, or zero y first (pdrt_tensor.h).
enum pdrt_scatter_mode { PDRT_SCATTER_INTO = 0, PDRT_SCATTER_ZERO_FIRST = 1 };

#endif /* PDRT_PDRT_CODES_H */
