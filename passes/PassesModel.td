//===- PassesModel.td - Rewrites of the imported model -----*- tablegen -*-===//
//
// Part of Passes.td (its comment: one .cpp and one test per pass).
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_MODEL
#define PD_PASSES_MODEL

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

#endif // PD_PASSES_MODEL
