//===- Passes.td - pdc compiler passes ---------------------*- tablegen -*-===//
//
// Every phase of pdc between import and codegen. Each pass has one .cpp in
// this folder and one test in test/Passes/<flag without pd->.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES
#define PD_PASSES

include "mlir/Pass/PassBase.td"

def FuseDecomposedOpsPass : Pass<"pd-fuse-decomposed-ops", "::mlir::ModuleOp"> {
  let summary = "Replaces decomposed LayerNorm, RMSNorm and GELU subgraphs by fused ops.";
  let description = [{
    ONNX exports before opset 17 spell LayerNorm out as ReduceMean, Sub,
    Pow (or Mul), ReduceMean, Add epsilon, Sqrt, Div, then Mul by gamma and
    Add beta. When every intermediate has no other user and the reduced
    axes are the trailing ones, the chain becomes one pd.layer_norm (gamma
    and beta are constant ones and zeros when the affine part is absent):
    one kernel forward and backward instead of sixteen, and only x stashed
    for the backward. GELU before opset 20, 0.5 * x * (1 + erf(x /
    sqrt(2))) in any association of its products, and its tanh
    approximation 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    become one pd.gelu each. RMSNorm, x / sqrt(mean(x^2) + eps) * weight
    (the inverse root as Div, Reciprocal or a division of x), becomes one
    pd.rms_norm.
    Runs before pd-autodiff.

    Before:
    ```mlir
    %s = pd.reduce_sum %x {axes = array<i64: 1>, keepdims} : ...
    %m = pd.scale %s, 1.250000e-01 : tensor<4x1xf32>
    %d = pd.sub %x, %m : ...
    %q = pd.pow %d, 2.000000e+00 : tensor<4x8xf32>
    %vs = pd.reduce_sum %q {axes = array<i64: 1>, keepdims} : ...
    %v = pd.scale %vs, 1.250000e-01 : tensor<4x1xf32>
    %e = pd.add %v, %eps : ...
    %r = pd.sqrt %e : tensor<4x1xf32>
    %n = pd.div %d, %r : ...
    %y = pd.mul %n, %g : ...
    %z = pd.add %y, %b : ...
    ```
    After:
    ```mlir
    %z = pd.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : ...
    ```
  }];
}

def FuseMatMulBiasPass : Pass<"pd-fuse-matmul-bias", "::mlir::ModuleOp"> {
  let summary = "Moves a Linear layer's bias add into its matmul's epilogue.";
  let description = [{
    add(bias, matmul) with a 1-D bias [N] broadcast over the rows of the
    [M, N] product, directly or through a reshape that keeps N as the last
    dim, becomes one pd.matmul with the bias operand: its kernel starts the
    product from the bias rows, so the output is written once instead of
    written and then read and written again by the add. The matmul and the
    reshape must have no other user. Runs before pd-autodiff.

    Before:
    ```mlir
    %p = pd.matmul %x, %w {transpose_rhs} : tensor<32x64xf32>, tensor<192x64xf32> -> tensor<32x192xf32>
    %r = pd.reshape %p : tensor<32x192xf32> -> tensor<2x16x192xf32>
    %y = pd.add %b, %r : tensor<192xf32>, tensor<2x16x192xf32> -> tensor<2x16x192xf32>
    ```
    After:
    ```mlir
    %p = pd.matmul %x, %w, %b {transpose_rhs} : tensor<32x64xf32>, tensor<192x64xf32>, tensor<192xf32> -> tensor<32x192xf32>
    %y = pd.reshape %p : tensor<32x192xf32> -> tensor<2x16x192xf32>
    ```
  }];
}

def FuseBiasIntoConsumersPass : Pass<"pd-fuse-bias-into-consumers", "::mlir::ModuleOp"> {
  let summary = "Moves a Linear layer's bias from its matmul into the op that reads the product.";
  let description = [{
    A pd.matmul with a bias whose only reader is a pd.gelu (directly or
    through single-use reshapes that keep the last dimension) gives the
    bias to the GELU, which computes gelu(z + bias) in the pass it makes
    anyway; one read by a pd.add_layer_norm over the last dimension (as
    either operand of its add) gives it to the norm as `rhs_bias`: sum =
    r + (z + bias). The matmul's kernel no longer fills its product with
    the bias rows before the GEMM. The GELU's gradient recomputes
    z + bias, and the bias gradient is its column sums
    (pd-fuse-bias-gradients); the norm's is the sum's gradient summed over
    the rows, as the matmul's was. Runs after pd-fuse-residual-layer-norm,
    before pd-autodiff.

    Before:
    ```mlir
    %z = pd.matmul %x, %w, %b {transpose_rhs} : tensor<32x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<32x256xf32>
    %r = pd.reshape %z : tensor<32x256xf32> -> tensor<2x16x256xf32>
    %h = pd.gelu %r : tensor<2x16x256xf32>
    ```
    After:
    ```mlir
    %z = pd.matmul %x, %w {transpose_rhs} : tensor<32x64xf32>, tensor<256x64xf32> -> tensor<32x256xf32>
    %r = pd.reshape %z : tensor<32x256xf32> -> tensor<2x16x256xf32>
    %h = pd.gelu %r, %b : tensor<2x16x256xf32>, tensor<256xf32>
    ```
  }];
}

def FuseResidualLayerNormPass : Pass<"pd-fuse-residual-layer-norm", "::mlir::ModuleOp"> {
  let summary = "Fuses a residual add and the layer (or RMS) norm of its sum into pd.add_layer_norm (pd.add_rms_norm).";
  let description = [{
    layer_norm(add(a, b)) with a, b and the sum of one shape becomes one
    pd.add_layer_norm giving the sum (for its other users, the residual
    stream) and the normalized value: one pass over the rows forward, and
    backward one pd.layer_norm_grad that adds the residual's gradient
    (`addend`) instead of a separate addition. rms_norm(add(a, b))
    (Llama, Mistral, Qwen) becomes pd.add_rms_norm the same way, its
    gradient one pd.rms_norm_grad with the `addend`. Parameter reads of
    the norm's scale and bias placed after the add move before it. Runs
    before pd-autodiff.

    Before:
    ```mlir
    %s = pd.add %x, %h : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %g = pd.param_ref @ln.weight : tensor<8xf32>
    %b = pd.param_ref @ln.bias : tensor<8xf32>
    %n = pd.layer_norm %s, %g, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : ...
    ```
    After:
    ```mlir
    %g = pd.param_ref @ln.weight : tensor<8xf32>
    %b = pd.param_ref @ln.bias : tensor<8xf32>
    %s, %n = pd.add_layer_norm %x, %h, %g, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : ...
    ```
  }];
}

def FuseAttentionSoftmaxPass : Pass<"pd-fuse-attention-softmax", "::mlir::ModuleOp"> {
  let summary = "Fuses attention's scale, mask and softmax (and torch's NaN guard) into pd.masked_softmax.";
  let description = [{
    softmax(where(mask, s * c, fill)) along the last axis, with c a scalar
    constant (or s / c), the mask a compile-time constant varying only over
    the trailing dims of the scores, and fill -inf or at most -1e9 (either
    Where polarity, or an additive mask of 0 and such fills), becomes one
    pd.masked_softmax: one kernel forward, which skips a causal row's
    masked tail, and one backward instead of three each. A scale alone or
    a mask alone fuses too. Exact: masked elements add exp(fill - max) = 0
    in float32 either way. torch's export of scaled_dot_product_attention
    fuses too: the softmax's guard Where(IsNaN(p), 0, p) becomes
    `zero_nan_rows`, and with it a boolean mask computed in the step (a
    padding mask, [B, 1, T, T] or [B, 1, 1, T], added as
    Where(mask, 0, -inf)) becomes the op's [G, R, N] mask (filled with
    torch's finfo.min, guard or not, with `uniform_empty_rows`); the
    scales the export puts on Q and on K^T move into the op's scale when
    the product feeds only this softmax, so that the head transposes
    before the product fold into the GEMM. Runs before pd-autodiff.

    Before:
    ```mlir
    %c = pd.constant dense<0.176776692> : tensor<f32>
    %s = pd.mul %qk, %c : tensor<2x2x16x16xf32>, tensor<f32> -> tensor<2x2x16x16xf32>
    %m = pd.constant dense<...> : tensor<1x1x16x16xi1>
    %f = pd.constant dense<0xFF800000> : tensor<f32>
    %t = pd.where %m, %f, %s : tensor<1x1x16x16xi1>, tensor<f32>, tensor<2x2x16x16xf32> -> tensor<2x2x16x16xf32>
    %p = pd.softmax %t {axis = 3 : i64} : tensor<2x2x16x16xf32>
    ```
    After:
    ```mlir
    %keep = pd.constant dense<...> : tensor<16x16xi1>
    %p = pd.masked_softmax %qk, %keep {scale = 0.176776692 : f32} : tensor<2x2x16x16xf32>, tensor<16x16xi1>
    ```
  }];
}

def FuseRotaryEmbeddingPass : Pass<"pd-fuse-rotary-embedding", "::mlir::ModuleOp"> {
  let summary = "Fuses the rotary position embedding (RoPE) into pd.rotary.";
  let description = [{
    x * cos + rotate_half(x) * sin with rotate_half(x) = concat(-x[h:],
    x[:h]) along the last axis (Hugging Face's apply_rotary_pos_emb: two
    slices, a neg, a concat, two multiplies and an add, each read only
    there) becomes one pd.rotary when the tables broadcast to x as one run
    of dims: one kernel forward and one backward (the adjoint rotation)
    instead of five (the products and the add one elementwise tree) and
    their gradients. Partial rotary (GPT-NeoX, Phi), concat(rotation(x[...,
    :R]), x[..., R:]) along the last axis, becomes one pd.rotary of x with
    the R-wide tables (which copies the columns past R). The heads'
    transpose before a rotation is left to pd-sink-transposes, which runs
    next. Runs before pd-autodiff.

    Before:
    ```mlir
    %lo = pd.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
    %hi = pd.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
    %n = pd.neg %hi : tensor<2x4x8x8xf32>
    %r = pd.concat %n, %lo {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
    %a = pd.mul %x, %cos : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
    %b = pd.mul %r, %sin : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<2x4x8x16xf32>
    %y = pd.add %a, %b : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
    ```
    After:
    ```mlir
    %y = pd.rotary %x, %cos, %sin : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
    ```
  }];
}

def SinkTransposesPass : Pass<"pd-sink-transposes", "::mlir::ModuleOp"> {
  let summary = "Moves transposes below the slices and rotations that read them.";
  let description = [{
    A transpose folds into the batched GEMM that reads it
    (pd-fold-transposes-into-matmul) only when nothing stands between
    them. Every slice of a transpose read only by slices becomes a
    transpose of a slice of its input (GPT-NeoX transposes its whole QKV
    projection before slicing Q, K and V off: the whole-tensor copy goes);
    a pd.rotary of a one-use transpose becomes a transpose of the rotation
    of its input when the tables reshape to that layout ([1, 1, T, D] over
    [B, H, T, D] is [1, T, 1, D] over [B, T, H, D]). Runs after
    pd-fuse-rotary-embedding and before pd-autodiff; bit for bit.

    Before:
    ```mlir
    %t = pd.transpose %qkv {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x48xf32> -> tensor<2x4x8x48xf32>
    %q = pd.slice %t {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x48xf32> -> tensor<2x4x8x16xf32>
    %y = pd.rotary %q, %cos, %sin : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
    ```
    After:
    ```mlir
    %q = pd.slice %qkv {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x8x4x48xf32> -> tensor<2x8x4x16xf32>
    %c = pd.reshape %cos : tensor<1x1x8x16xf32> -> tensor<1x8x1x16xf32>
    %s = pd.reshape %sin : tensor<1x1x8x16xf32> -> tensor<1x8x1x16xf32>
    %r = pd.rotary %q, %c, %s : tensor<2x8x4x16xf32>, tensor<1x8x1x16xf32>
    %y = pd.transpose %r {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
    ```
  }];
}

def SplitSlicedMatMulsPass : Pass<"pd-split-sliced-matmuls", "::mlir::ModuleOp"> {
  let summary = "Gives each column block a fused projection is sliced into its own GEMM.";
  let description = [{
    A 2-D pd.matmul with `transpose_rhs` (a Linear layer, weight [N, K])
    read once, directly or through one reshape that keeps the last dim,
    by pd.slice ops that take column blocks tiling its N columns (Phi-3's
    qkv_proj and gate_up_proj) becomes one pd.matmul per block, each
    reading the block's rows of the weight (and of a bias) through a
    pd.slice of leading rows, a view. The slices' copies go forward, and
    the concat of their gradients backward. Left alone where batched GEMMs
    are the blocks' only readers (through reshapes and transposes):
    pd-fold-slices-into-matmul reads those in place. Runs before
    pd-autodiff.

    Before:
    ```mlir
    %y = pd.matmul %x, %w {transpose_rhs} : tensor<32x64xf32>, tensor<256x64xf32> -> tensor<32x256xf32>
    %r = pd.reshape %y : tensor<32x256xf32> -> tensor<2x16x256xf32>
    %g = pd.slice %r {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x16x256xf32> -> tensor<2x16x128xf32>
    %u = pd.slice %r {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<2x16x256xf32> -> tensor<2x16x128xf32>
    ```
    After:
    ```mlir
    %wg = pd.slice %w {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<256x64xf32> -> tensor<128x64xf32>
    %yg = pd.matmul %x, %wg {transpose_rhs} : tensor<32x64xf32>, tensor<128x64xf32> -> tensor<32x128xf32>
    %g = pd.reshape %yg : tensor<32x128xf32> -> tensor<2x16x128xf32>
    %wu = pd.slice %w {starts = array<i64: 128, 0>, steps = array<i64: 1, 1>} : tensor<256x64xf32> -> tensor<128x64xf32>
    %yu = pd.matmul %x, %wu {transpose_rhs} : tensor<32x64xf32>, tensor<128x64xf32> -> tensor<32x128xf32>
    %u = pd.reshape %yu : tensor<32x128xf32> -> tensor<2x16x128xf32>
    ```
  }];
}

def SplitMatMulRowsPass : Pass<"pd-split-matmul-rows", "::mlir::ModuleOp"> {
  let summary = "Splits 2-D matmuls by rows so that a pipeline cut can fall inside one.";
  let description = [{
    A stage cut falls between ops, so a pipeline is balanced only to within
    the op at the cut. Each listed `pd.matmul` (2-D, its left operand not
    transposed) becomes two matmuls over the first `rows` and the remaining
    rows of its left operand (`pd.slice`s) and a `pd.concat` of their
    products; the second half reads the weight (and a bias) through a new
    `pd.param_ref`, so that a cut between the halves ties the parameter
    between the two stages. The planner chooses the matmuls and the rows
    (docs/planner.md); `op-ids` are their positions in the function's
    body, which are the `pd.op_id`s pd-autodiff gives them. Runs before
    pd-autodiff.

    Before:
    ```mlir
    %w = pd.param_ref @w : tensor<6x4xf32>
    %y = pd.matmul %x, %w {transpose_rhs} : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
    ```
    After (`op-ids=1 rows=3`):
    ```mlir
    %x1 = pd.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<3x4xf32>
    %x2 = pd.slice %x {starts = array<i64: 3, 0>, steps = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<5x4xf32>
    %y1 = pd.matmul %x1, %w {transpose_rhs} : tensor<3x4xf32>, tensor<6x4xf32> -> tensor<3x6xf32>
    %w2 = pd.param_ref @w : tensor<6x4xf32>
    %y2 = pd.matmul %x2, %w2 {transpose_rhs} : tensor<5x4xf32>, tensor<6x4xf32> -> tensor<5x6xf32>
    %y = pd.concat %y1, %y2 {axis = 0 : i64} : (tensor<3x6xf32>, tensor<5x6xf32>) -> tensor<8x6xf32>
    ```
  }];
  let options = [
    Option<"funcName", "func-name", "std::string", "\"main\"",
           "The function that computes the loss.">,
    ListOption<"opIds", "op-ids", "int64_t",
               "Positions of the matmuls in the function's body">,
    ListOption<"rows", "rows", "int64_t",
               "Rows of each matmul's first half">,
  ];
}

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

def PartitionStagesPass : Pass<"pd-partition-stages", "::mlir::ModuleOp"> {
  let summary = "Assigns every op of the training function to a pipeline stage.";
  let description = [{
    Splits the forward ops of the differentiated function (in program order)
    into `num-stages` contiguous stages whose costs are balanced: the cost of
    a forward op is the FLOPs of the op plus those of its gradient ops
    (CostOpInterface), and the split minimises the most expensive stage.
    Gradient ops follow the op they differentiate; parameter reads and
    constants follow their users. A parameter read on several stages (a
    tied embedding and LM head, one `pd.param_ref` per use) is tied: each of
    those stages owns a copy; one read feeding several stages is an error.
    Sets `pd.stage` on every op and
    `pd.num_stages` on the module. Deciding only: pd-outline-stages rewrites.

    With `cuts` the split is given instead (pdc passes the planner's, which
    also weighs memory traffic and the transfers at each cut): the
    `pd.op_id` of the compute op (a forward op with operands) that starts
    each stage after the first, in increasing order.

    ```mlir
    %h = pd.matmul %x, %w1 {pd.op_id = 2, pd.stage = 0 : i64} : ...
    %y = pd.matmul %h, %w2 {pd.op_id = 5, pd.stage = 1 : i64} : ...
    ```
  }];
  let options = [
    Option<"numStages", "num-stages", "int64_t", "1",
           "Number of pipeline stages.">,
    Option<"funcName", "func-name", "std::string", "\"main\"",
           "The differentiated training function.">,
    ListOption<"cuts", "cuts", "int64_t",
               "pd.op_id of the compute op starting each stage after the "
               "first (default: balance FLOPs)">
  ];
}

def OutlineStagesPass : Pass<"pd-outline-stages", "::mlir::ModuleOp"> {
  let summary = "Splits the training function into per-stage forward and backward functions.";
  let description = [{
    For each stage s creates `@stage<s>_forward` (returning the values its
    backward needs: the explicit stash) and `@stage<s>_backward` (taking
    them). Values that cross stages become `pd.send`/`pd.recv` pairs on
    channels numbered uniquely in the module; a value used k > 1 stages
    later (a skip connection) goes point to point from its producer to each
    consumer stage, not through the stages between; graph inputs become
    `pd.input` in each stage that reads them; parameter reads and constants are
    re-materialised where used; the loss becomes `pd.report_loss`.

    ```mlir
    func.func @stage0_forward() -> tensor<4x8xf32> attributes {pd.stage = 0 : i64, pd.phase = "forward"} {
      %x = pd.input 0 "x" : tensor<4x8xf32>
      ...
      pd.send %h to 1 channel 0 : tensor<4x16xf32>
      return %x : tensor<4x8xf32>
    }
    ```
  }];
  let options = [
    Option<"funcName", "func-name", "std::string", "\"main\"",
           "The partitioned training function.">
  ];
}

def RecomputeForwardPass : Pass<"pd-recompute-forward", "::mlir::ModuleOp"> {
  let summary = "Stashes only a stage's inputs and reruns its forward before its backward.";
  let description = [{
    Full activation recomputation of the listed stages. The stage's forward
    returns (stashes) only the `pd.input` and `pd.recv` values its backward
    needs, instead of every activation; the backward starts by recomputing,
    from those inputs and the same weight version, the forward ops whose
    values it reads, and is marked `pd.recompute`. The stash of stage k,
    d - k microbatches deep under 1F1B, shrinks to its inputs; the
    recomputed activations live in the backward's workspace, one
    microbatch at a time.

    Recomputation is exact: every op is deterministic, dropout redraws the
    same mask (its key is the microbatch and the op's `rng_id`), and a
    recomputed `pd.batch_norm` drops its running statistics so they are
    updated once per microbatch, by the forward. An op with another side
    effect cannot be recomputed and is an error.

    ```mlir
    // before                                  // after
    func.func @stage0_forward() -> (tensor<4x16xf32>, tensor<4x8xf32>)
      %x = pd.input 0 "x"                      %x = pd.input 0 "x"
      ...                                      ...
      return %r, %x                            return %x
    func.func @stage0_backward(%r, %x)        func.func @stage0_backward(%x) {pd.recompute}
                                               %h = pd.matmul %x, %w ... (recomputed)
                                               %r = pd.relu ...
      %g = pd.relu_grad %dy, %r                %g = pd.relu_grad %dy, %r
    ```
  }];
  let options = [
    ListOption<"stages", "stages", "int64_t",
               "The stages whose activations are recomputed">
  ];
}

def InsertProfileMarksPass : Pass<"pd-insert-profile-marks", "::mlir::ModuleOp"> {
  let summary = "Times every costed op of a profiling stage.";
  let description = [{
    pdc --profile compiles the model as one stage whose ops carry
    `pd.profile_id` (their position in the differentiated training
    function). This pass puts a `pd.profile_mark` with that id before each
    such op that has a cost (PD_CostOpInterface), and one with id -1 before
    each stage function's return; it removes the ids. Run by
    `run --profile-ops`, the stage then reports each op's time: from its
    mark to the next, which includes the uncosted ops after it (a
    gradient's accumulation) as they run in a real stage.

    ```mlir
    %y = pd.matmul %x, %w {pd.profile_id = 7 : i64} : ...
    // becomes
    pd.profile_mark 7
    %y = pd.matmul %x, %w : ...
    ```

    With `every-op` (pdc --instrument-ops, on the allocated stage
    functions of a real plan) the ops need no ids: every op that does work
    gets a mark, numbered 0, 1, ... over the module in function order, so
    that a real run times its GEMMs, elementwise kernels, sends, receives
    and stash copies each on its own. Views (reshapes marked `pd.view`),
    parameter reads and constants, which cost nothing, get none.
  }];
  let options = [
    Option<"everyOp", "every-op", "bool", /*default=*/"false",
           "Number and mark every op that does work, not only those with "
           "a pd.profile_id">
  ];
}

def FuseBiasGradientsPass : Pass<"pd-fuse-bias-gradients", "::mlir::ModuleOp"> {
  let summary = "Sums a bias gradient in the pass of the GELU or layer-norm gradient it reads.";
  let description = [{
    A `pd.sum_to` of a `pd.gelu_grad` result (through reshapes that keep
    the last dimension) down to its last dimension is the gradient of the
    bias added before the GELU: the GELU gradient gets it as a second
    result, computed while each row is in cache instead of read back from
    memory. Likewise a sum of a `pd.layer_norm_grad`'s input_grad over a
    norm of the last dimension (the gradient of a bias that
    pd-fuse-bias-into-consumers moved into pd.add_layer_norm) becomes its
    `input_grad_sum` result. Bit for bit the unfused results. With
    `same-forward-op`, on the differentiated @main: the pairs whose ops
    differentiate one forward op (the bias moved into its consumer by
    pd-fuse-bias-into-consumers), which partitioning keeps on one stage, so
    the planner prices and the profiling stage times the fused op; without
    it, on the outlined stage functions, where both ops are known to be on
    one stage.

    Before:
    ```mlir
    %dh = pd.gelu_grad %dg, %h : tensor<2x4x8xf32>
    %v = pd.reshape %dh : tensor<2x4x8xf32> -> tensor<8x8xf32>
    %db = pd.sum_to %v : tensor<8x8xf32> -> tensor<8xf32>
    ```
    After:
    ```mlir
    %dh, %db = pd.gelu_grad %dg, %h : tensor<2x4x8xf32> -> tensor<8xf32>
    ```
  }];
  let options = [
    Option<"sameForwardOp", "same-forward-op", "bool", "false",
           "Fuse only pairs that differentiate the same forward op (equal "
           "pd.grad_of), which no stage cut separates: for the "
           "differentiated @main, before partitioning">,
  ];
}

def ConcatInPlacePass : Pass<"pd-concat-in-place", "::mlir::ModuleOp"> {
  let summary = "Has the batched GEMMs whose results a concat joins write them into its result.";
  let description = [{
    A `pd.concat` whose every input is a `pd.batch_matmul`'s result (or a
    reshape chain of it), each value read once, that the GEMMs can write
    in place through strides (ConcatOp::getInPlaceParts: attention's dQ,
    dK and dV joined into the gradient of the fused QKV projection), and
    whose result is neither sent nor returned (it then lives in the
    workspace), gets `pd.in_place_parts`, and each GEMM `pd.concat_part =
    array<i64: axis, index, parts>`: it stores its result as part `index`
    of a tensor of its stored shape with a dim of `parts` inserted at
    `axis`, which is the concat's result. pd-allocate-buffers homes the
    parts in the concat's workspace slot, live from the first part's GEMM
    on, and the lowering emits no call for the concat: the copy of every
    input into the result goes. Runs on the stage functions; not in a
    profiling stage, which times the ops the planner prices (the
    planner's stage model applies the same rule).

    ```mlir
    %dq = pd.batch_matmul %ds, %qkv {pd.concat_part = array<i64: 2, 0, 3>, result_perm = array<i64: 0, 2, 1, 3>, ...} : ... -> tensor<8x128x4x64xf32>
    %dk = ... {pd.concat_part = array<i64: 2, 1, 3>, ...}
    %dv = ... {pd.concat_part = array<i64: 2, 2, 3>, ...}
    %c = pd.concat %q2, %k2, %v2 {axis = 2 : i64, pd.in_place_parts} : (tensor<8x128x256xf32>, ...) -> tensor<8x128x768xf32>
    ```
  }];
}

def InterleaveBatchedOpsPass : Pass<"pd-interleave-batched-ops", "::mlir::ModuleOp"> {
  let summary = "Runs attention's batched kernels entry by entry.";
  let description = [{
    On the allocated stage functions: a run of strided `pd.batch_matmul`s
    (a perm, select, triangle or concat part) and `pd.masked_softmax` /
    `pd.masked_softmax_grad`s, with only views, constants and parameter
    reads between them, whose GEMMs have the same number of batch entries
    (at least 2) and whose softmaxes' rows divide into them, gets
    `pd.interleave_begin` before it and `pd.interleave_end` after it.
    The runtime records the group's calls and runs them batch entry by
    batch entry: attention's backward (dP = dO V^T, dS, dK, dV, dQ) then
    works on one (batch, head)'s scores while they are in L2, instead of
    streaming all of them through memory once per kernel. The runtime
    checks, once per group and set of addresses, that every byte two calls
    share (one writing) lies in the same rows of the same entry, and runs
    the group whole and in order otherwise; this pass only finds the runs.
    A profiling stage's `pd.profile_mark`s do not break a run (the
    runtime times each recorded call on the mark passed before it), so
    `pdc --profile` prices the kernels as the stages run them.

    ```mlir
    %dp = pd.batch_matmul %do, %qkv {..., triangle = #pd.triangle<result_lower>} : ...
    %ds = pd.masked_softmax_grad %dp, %p {causal, ...} : ...
    %dk = pd.batch_matmul %ds, %qkv {pd.concat_part = ..., ...} : ...
    // becomes
    pd.interleave_begin
    %dp = ...
    %ds = ...
    %dk = ...
    pd.interleave_end
    ```
  }];
}

def AccumulateInPlacePass : Pass<"pd-accumulate-in-place", "::mlir::ModuleOp"> {
  let summary = "Computes weight gradients of matmuls and embeddings straight into their accumulators.";
  let description = [{
    A `pd.matmul` without a bias or a `pd.gather_grad` whose only use is the
    `pd.accumulate_grad` of a parameter gets `pd.accumulate`: the matmul
    adds its product into its output (C += A B) instead of overwriting it,
    the gather_grad adds its rows into the output as it is instead of
    zeroing it first, so pd-allocate-buffers homes it in the parameter's
    gradient accumulator and the accumulation costs neither a workspace
    tensor nor a separate pass over the gradient (the lowering emits no
    call for such an accumulate_grad). An embedding's gradient then touches
    the rows its indices name, not the whole table.

    ```mlir
    %g = pd.matmul %x, %dy {pd.accumulate, transpose_lhs} : ...
    pd.accumulate_grad @w, %g : tensor<8x16xf32>
    %e = pd.gather_grad %dout, %ids {pd.accumulate} : ...
    pd.accumulate_grad @wte, %e : tensor<512x64xf32>
    ```
  }];
}

def AllocateBuffersPass : Pass<"pd-allocate-buffers", "::mlir::ModuleOp"> {
  let summary = "Gives every tensor of every stage a home in the stage's arena.";
  let description = [{
    The 2BW memory plan of each stage, exact to the byte. Parameters get a
    slot in each weight version (two under `2bw`, one under `flush` and
    `gpipe`), a gradient accumulator and optimizer state (`momentum`: one
    tensor, `adam`/`adamw`: two); values the backward reads from the forward
    go to the stash slot of their microbatch (d-k slots on stage k under 1F1B,
    `microbatches` under gpipe); sent values that are not stashed go to the
    comm region (forward and backward apart, so a send overlaps the other
    phase); a matmul or gather_grad marked `pd.accumulate`
    (pd-accumulate-in-place) is homed in its parameter's gradient
    accumulator; the logits of a stashed `pd.softmax_cross_entropy_with_grad`
    gradient share its stash slot when that op alone reads them
    (`getInPlaceLogits`: the kernel writes the gradient over them), and so
    do the scores of a stashed `pd.masked_softmax` (`getInPlaceInput`);
    every
    other value goes to the workspace, packed by liveness (mlir::Liveness,
    first-fit).
    Constants stay out of the arena. The `pd.state` an op of a stage's
    forward updates (BatchNormalization running statistics) gets one
    copy in that stage's `state` region (not versioned, no gradient or
    optimizer state), its offset in the forward's `pd.state = {name =
    offset}`.
    Every stage that reads a parameter owns a copy (weights, gradient,
    optimizer state), so the layout is per stage: each stage's forward
    function gets `pd.params = {name = array<i64: weight, grad, optimizer>}`
    (byte offsets) and the region sizes in `pd.regions`; each `pd.param`
    lists its owner stages in `pd.owners` (more than one: tied);
    `pd.accumulate_grad` gets its `pd.grad_offset`; results get
    `pd.buffer = #pd.buffer<region, offset>`.

    ```mlir
    %2 = pd.matmul %0, %1 {pd.buffer = #pd.buffer<workspace, 0>, transpose_rhs} : ...
    ```
  }];
  let options = [
    Option<"schedule", "schedule", "::mlir::pd::Schedule",
           "::mlir::pd::Schedule::TwoBW",
           "Pipeline schedule: 2bw, flush or gpipe.",
           "::mlir::pd::scheduleChoices()">,
    Option<"microbatches", "microbatches", "int64_t", "0",
           "Microbatches per batch (m); 0 means the number of stages.">,
    Option<"optimizer", "optimizer", "::mlir::pd::Optimizer",
           "::mlir::pd::Optimizer::SGD",
           "Optimizer: sgd, momentum, adam or adamw.",
           "::mlir::pd::optimizerChoices()">
  ];
}

def LowerToRuntimePass : Pass<"pd-lower-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lowers one stage's buffer-assigned functions to runtime calls in the LLVM dialect.";
  let description = [{
    Turns `@stage<s>_forward` and `@stage<s>_backward` into
    `llvm.func @pd_stage_forward(%ctx, %weights, %grads, %stash, %workspace,
    %comm)` and `@pd_stage_backward(...)` (the C ABI of
    runtime/include/pdrt/pdrt.h): each tensor's address is its region base
    plus its `pd.buffer` offset, each op becomes a call of its `pdrt_*`
    kernel, broadcast descriptors and constants become internal globals.
    State a forward updates is addressed from `pdrt_state_region(%ctx)`
    plus its offset in the function's `pd.state`.
    Everything else in the module (other stages, parameters, state) is
    removed.

    ```mlir
    %p = llvm.getelementptr %workspace[256] : (!llvm.ptr) -> !llvm.ptr, i8
    llvm.call @pdrt_relu(%ctx, %x, %p, %n) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    ```
  }];
  let options = [
    Option<"stage", "stage", "int64_t", "0", "The stage to lower.">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // PD_PASSES
