//===- PassesGradient.td - Autodiff and the folds after it -*- tablegen -*-===//
//
// Part of Passes.td (its comment: one .cpp and one test per pass).
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_GRADIENT
#define PD_PASSES_GRADIENT

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"pd-autodiff", "::mlir::ModuleOp"> {
  let summary = "Appends the reverse-mode gradient of the loss to the model.";
  let description = [{
    Differentiates the function that returns the scalar loss (by default
    `@main`). Each forward op gets an id (`pd.op_id`); the gradient ops its
    GradientOpInterface builds are appended in reverse order and tagged with
    `pd.grad_of = <id>`, so that later passes place them on the same stage.
    The seed is `pd.grad_seed`; each parameter's gradient ends in a
    `pd.accumulate_grad`. Fails on an op without a gradient rule.

    Before:
    ```mlir
    %w = pd.param_ref @w : tensor<8x4xf32>
    %y = pd.matmul %x, %w : ...
    %l = pd.softmax_cross_entropy %y, %t : ...
    return %l : tensor<f32>
    ```
    After (abridged):
    ```mlir
    %s = pd.grad_seed : tensor<f32>
    %dy = pd.softmax_cross_entropy_grad %s, %y, %t {pd.grad_of = 2}
    %dw = pd.matmul %x, %dy {transpose_lhs, pd.grad_of = 1}
    pd.accumulate_grad @w, %dw {pd.grad_of = 0}
    ```
  }];
  let options = [
    Option<"funcName", "func-name", "std::string", "\"main\"",
           "The function that computes the loss.">
  ];
}

def FuseCrossEntropyGradientPass : Pass<"pd-fuse-cross-entropy-gradient", "::mlir::ModuleOp"> {
  let summary = "Computes a seeded cross-entropy loss's gradient with the loss.";
  let description = [{
    When the objective is a mean softmax cross-entropy, its gradient is the
    runtime's seed times (softmax - onehot) / K: known when the forward
    runs. The forward loss and the backward's softmax_cross_entropy_grad
    become one pd.softmax_cross_entropy_with_grad, which exponentiates each
    logit once instead of twice; the backward reads the stashed gradient
    instead of the logits. Bit for bit the unfused results. Runs after
    pd-autodiff.

    Before:
    ```mlir
    %l = pd.softmax_cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
    %s = pd.grad_seed : tensor<f32>
    %dz = pd.softmax_cross_entropy_grad %s, %z, %y : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
    ```
    After:
    ```mlir
    %l, %dz = pd.softmax_cross_entropy_with_grad %z, %y : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>, tensor<4x10xf32>
    ```
  }];
}

def FuseSliceGradientsPass : Pass<"pd-fuse-slice-gradients", "::mlir::ModuleOp"> {
  let summary = "Rewrites a sum of slice gradients that tile a tensor to one concat.";
  let description = [{
    The gradient of a tensor split into slices (attention's qkv projection
    split into Q, K and V; ONNX Split) is a sum of pd.slice_grad, each a
    zero tensor with one slice's gradient in it. When the slices tile the
    tensor along one axis with unit steps, the sum is the concatenation of
    their gradients: one write per element instead of zero fills, copies
    and full-size additions. Exact. Runs after pd-autodiff.

    Before:
    ```mlir
    %a = pd.slice_grad %dk {starts = array<i64: 0, 4>, steps = array<i64: 1, 1>} : tensor<2x4xf32> -> tensor<2x8xf32>
    %b = pd.slice_grad %dq {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x4xf32> -> tensor<2x8xf32>
    %g = pd.add %a, %b : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
    ```
    After:
    ```mlir
    %g = pd.concat %dq, %dk {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
    ```
  }];
}

def FoldBroadcastsIntoMatMulPass : Pass<"pd-fold-broadcasts-into-matmul", "::mlir::ModuleOp"> {
  let summary = "Reads grouped-query attention's shared K and V heads without copies.";
  let description = [{
    A pd.batch_matmul whose rhs (optionally through a transpose of the
    trailing matrix dims) is reshape(broadcast_to(u)), u's last batch dim
    [..., H / g, 1, T, D] broadcast to g and merged into H heads (Hugging
    Face's repeat_kv of grouped-query attention), reads u's heads in
    place: `rhs_groups = g` on the tensor without the unit dim. A
    pd.sum_to over the g groups of a reshape of a plain pd.batch_matmul's
    product (the gradient of that broadcast) becomes the matmul with
    `result_groups = g`, which sums each group into its result. The
    broadcast copies and the sums go, forward and backward, and the
    backward's GEMMs read K and V instead of their copies. Runs after
    pd-autodiff and before pd-fold-transposes-into-matmul; gradient ops
    of absorbed forward ops re-point their pd.grad_of.

    Before:
    ```mlir
    %u = pd.reshape %k : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
    %w = pd.broadcast_to %u : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
    %kr = pd.reshape %w : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
    %s = pd.batch_matmul %q, %kr {transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
    %dkr = pd.batch_matmul %ds, %q {transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
    %d5 = pd.reshape %dkr : tensor<2x4x8x16xf32> -> tensor<2x2x2x8x16xf32>
    %dk5 = pd.sum_to %d5 : tensor<2x2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
    %dk = pd.reshape %dk5 : tensor<2x2x1x8x16xf32> -> tensor<2x2x8x16xf32>
    ```
    After:
    ```mlir
    %s = pd.batch_matmul %q, %k {rhs_groups = 2 : i64, transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x8xf32>
    %dk = pd.batch_matmul %ds, %q {result_groups = 2 : i64, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x2x8x16xf32>
    ```
  }];
}

def FoldTransposesIntoMatMulPass : Pass<"pd-fold-transposes-into-matmul", "::mlir::ModuleOp"> {
  let summary = "Folds the transposes around batched matmuls into strided operand and result layouts.";
  let description = [{
    A pd.transpose feeding a pd.batch_matmul becomes the matmul's
    lhs_perm/rhs_perm, and a pd.transpose of a matmul's sole use its
    result_perm, whenever one GEMM per batch index can still read the
    stored operand (one of its matrix dims innermost) or write the stored
    result (columns innermost; rows innermost is computed as the
    transposed product op(B)^T op(A)^T). Attention's head split and merge
    and their gradients then cost no copies. Runs after pd-autodiff.

    Before:
    ```mlir
    %qh = pd.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
    %kt = pd.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32> -> tensor<2x4x16x8xf32>
    %s = pd.batch_matmul %qh, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
    ```
    After:
    ```mlir
    %s = pd.batch_matmul %q, %k {lhs_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
}

def FoldSlicesIntoMatMulPass : Pass<"pd-fold-slices-into-matmul", "::mlir::ModuleOp"> {
  let summary = "Reads attention's Q, K and V in place from the fused QKV projection.";
  let description = [{
    A pd.slice taking one whole part of one axis (unit steps, every other
    axis whole, its size dividing the axis and its start), optionally
    reshaped into heads from the sliced axis on, that feeds a
    pd.batch_matmul becomes the matmul's lhs_select / rhs_select on a
    reshape (a view) of the sliced tensor that splits the axis into
    (parts, size): the GEMMs read Q, K and V through strides instead of
    copies, in the forward and the backward. A slice whose every user
    folded disappears. Runs after pd-autodiff and
    pd-fold-transposes-into-matmul.

    Before:
    ```mlir
    %q = pd.slice %qkv {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x192xf32> -> tensor<2x8x64xf32>
    %qh = pd.reshape %q : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
    %s = pd.batch_matmul %qh, %kh {lhs_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32> -> tensor<2x4x8x8xf32>
    ```
    After:
    ```mlir
    %qkv5 = pd.reshape %qkv : tensor<2x8x192xf32> -> tensor<2x8x3x4x16xf32>
    %s = pd.batch_matmul %qkv5, %kh {lhs_perm = array<i64: 0, 2, 1, 3>, lhs_select = array<i64: 2, 0>, rhs_perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x3x4x16xf32>, tensor<2x8x4x16xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
}

def MarkCausalGemmsPass : Pass<"pd-mark-causal-gemms", "::mlir::ModuleOp"> {
  let summary = "Lets attention's batched GEMMs skip what the causal mask zeroes.";
  let description = [{
    Under a causal pd.masked_softmax (a constant [T, T] mask keeping
    j <= i, or a band inside it that keeps every diagonal element: a
    sliding window, over scores [..., T, T]) the probabilities P and their
    gradient dS are lower triangular, and only the lower triangles of the
    scores S and of dP are read. This pass sets pd.batch_matmul's
    `triangle` on the GEMMs around it: `result_lower` on the single-use
    GEMM that computes S (or dP, the gradient the softmax's gradient
    reads), `lhs_lower` on GEMMs that multiply P or dS from the left
    (P V, dS K), `lhs_upper` on those that multiply their transposes
    (P^T dO, dS^T Q), and `causal` on the pd.masked_softmax_grad, which
    then reads dP's lower triangle only. The kernels skip the blocks
    above the diagonal: the six GEMMs do 55-65% of the dense work.
    Runs after pd-autodiff, pd-fold-transposes-into-matmul and
    pd-fold-slices-into-matmul. GEMMs that read P or dS through a
    permutation of their matrix dims or a select, or that already carry a
    triangle, are left dense. The scores and dP GEMMs are marked only for
    T >= `min-result-rows` (64): below it the triangle has at most one
    block under the diagonal. On libxsmm's kernels (runtime
    small_gemm.h) their row strips beat the dense GEMM from T = 64 on
    (bench/kernels/causal_gemm: 1.1x at T = 64, 1.3-1.5x at T = 128);
    on oneDNN's, which packs every strip, they lost at T = 128 and below.

    Before:
    ```mlir
    %s = pd.batch_matmul %q, %k {transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
    %p = pd.masked_softmax %s, %causal {scale = 2.500000e-01 : f32} : tensor<2x4x8x8xf32>, tensor<8x8xi1>
    %o = pd.batch_matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
    ```
    After:
    ```mlir
    %s = pd.batch_matmul %q, %k {transpose_rhs, triangle = #pd.triangle<result_lower>} : ...
    %p = pd.masked_softmax %s, %causal {scale = 2.500000e-01 : f32} : ...
    %o = pd.batch_matmul %p, %v {triangle = #pd.triangle<lhs_lower>} : ...
    ```
  }];
  let options = [
    Option<"minResultRows", "min-result-rows", "int64_t", "64",
           "Mark the GEMMs computing S and dP (result_lower) only for "
           "[T, T] scores with T at least this.">
  ];
}

def FuseElementwiseChainsPass : Pass<"pd-fuse-elementwise-chains", "::mlir::ModuleOp"> {
  let summary = "Evaluates trees of single-use elementwise ops in one pass over memory.";
  let description = [{
    A tree of elementwise ops (add, sub, mul, div, min, max, the unary
    math ops, relu, scale) whose intermediates have one reader each, all
    of the root's type and of one phase (forward or gradient), becomes one
    pd.fused_elementwise: its kernel runs the tree on blocks that stay in
    L1, reading the (at most four) inputs once and writing the result
    once. Inputs may be scalars or broadcast over the trailing dims;
    scalar constants become immediates. Runs after pd-autodiff.

    Before:
    ```mlir
    %s = pd.sigmoid %x : tensor<4x8xf32>
    %g = pd.mul %x, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %y = pd.mul %g, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
    After:
    ```mlir
    %y = pd.fused_elementwise %x, %u {periods = array<i64: 32, 32>, program = array<i64: 1, 6, 2, 0, 0, 0, 2, 3, 0, 2, 0, 2, 4, 3, 1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
}

#endif // PD_PASSES_GRADIENT
