//===- PDOpsNN.td - pd nn ops -----------------------*- tablegen -*-===//
//
// The neural-network math: unary math, GELU, reductions, softmax, layer norm,
// dropout.
// Included by PDOps.td; gradients in PDGradientsNN.cpp, costs and
// verifiers in PDOpsNN.cpp.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def PD_ReduceSumOp : PD_Op<"reduce_sum", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Sums a tensor over the given axes.";
  let description = [{
    `axes` are non-negative and sorted; with `keepdims` the reduced axes stay
    as size 1, otherwise they are dropped. ONNX ReduceSum imports to this op,
    ReduceMean to this op followed by pd.scale.

    ```mlir
    %s = pd.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def PD_BroadcastAxesOp : PD_Op<"broadcast_axes", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Repeats a tensor along the given axes of the result.";
  let description = [{
    The inverse of pd.reduce_sum's shape change and its gradient: the result
    has the operand's shape with `axes` inserted (or, when the operand kept
    them as size 1, expanded); every element along those axes is a copy.

    ```mlir
    %b = pd.broadcast_axes %s {axes = array<i64: 1>} : tensor<4xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise math
//===----------------------------------------------------------------------===//

def PD_DivOp : PD_BroadcastBinaryOp<"div", "division">;
/// ONNX Pow with a tensor exponent (a constant scalar one is pd.pow).
def PD_PowBroadcastOp : PD_BroadcastBinaryOp<"pow_broadcast", "power lhs^rhs">;
/// ONNX Min and Max of two tensors (more inputs chain); NaN propagates.
def PD_MinOp : PD_BroadcastBinaryOp<"min", "minimum">;
def PD_MaxOp : PD_BroadcastBinaryOp<"max", "maximum">;

def PD_MinMaxGradOp : PD_Op<"minmax_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of pd.min or pd.max for one operand, before sum_to.";
  let description = [{
    PyTorch's rule for torch.minimum/maximum: the operand `which` (0 = lhs,
    1 = rhs) gets `grad` where it is strictly the selected one, half of it
    on ties and 0 elsewhere. The result has the forward's output shape;
    the VJP reduces it to the operand's shape with pd.sum_to.

    ```mlir
    %d = pd.minmax_grad %dy, %a, %b {is_max = true, which = 0 : i64}
        : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$lhs,
                       PD_F32Tensor:$rhs, BoolAttr:$is_max, I64Attr:$which);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $lhs `,` $rhs attr-dict `:` type($grad) `,` type($lhs) `,`
    type($rhs) `->` type($result)
  }];
}

/// Unary math. `kind` is the pdrt_unary code of runtime/include/pdrt/pdrt_nn.h.
class PD_UnaryMathOp<string mnemonic, string kind, string math>
    : PD_Op<mnemonic, [Pure, SameOperandsAndResultType,
        DeclareOpInterfaceMethods<PD_GradientOpInterface>,
        DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Elementwise " # math # ".";
  let description = [{
    ```mlir
    %y = pd.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let extraClassDeclaration = [{
    /// The unary function (the runtime's pdrt_unary kind).
    static constexpr ::mlir::pd::UnaryKind kKind =
        ::mlir::pd::UnaryKind::}] # kind # [{;
  }];
}

def PD_NegOp : PD_UnaryMathOp<"neg", "Neg", "negation -x">;
def PD_SqrtOp : PD_UnaryMathOp<"sqrt", "Sqrt", "square root">;
def PD_ExpOp : PD_UnaryMathOp<"exp", "Exp", "exponential">;
def PD_LogOp : PD_UnaryMathOp<"log", "Log", "natural logarithm">;
def PD_ErfOp : PD_UnaryMathOp<"erf", "Erf", "error function">;
def PD_TanhOp : PD_UnaryMathOp<"tanh", "Tanh", "hyperbolic tangent">;
def PD_SigmoidOp : PD_UnaryMathOp<"sigmoid", "Sigmoid", "logistic sigmoid 1/(1+exp(-x))">;
def PD_ReciprocalOp : PD_UnaryMathOp<"reciprocal", "Reciprocal", "reciprocal 1/x">;
def PD_CosOp : PD_UnaryMathOp<"cos", "Cos", "cosine">;
def PD_SinOp : PD_UnaryMathOp<"sin", "Sin", "sine">;
// x * sigmoid(x), as exporters spell SiLU (EfficientNet, YOLO; a gated
// MLP's goes on to pd.swiglu), fused by pd-fuse-decomposed-ops: one pass
// instead of two kernels, and a gradient from x alone in one (three before).
def PD_SiluOp : PD_UnaryMathOp<"silu", "Silu", "SiLU x * sigmoid(x)">;

def PD_PowOp : PD_Op<"pow", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Elementwise power x^p with a constant exponent.";
  let description = [{
    ONNX Pow with a compile-time constant scalar exponent.

    ```mlir
    %y = pd.pow %x, 2.000000e+00 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, F32Attr:$exponent);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input `,` $exponent attr-dict `:` type($result)";
  let extraClassDeclaration = [{
    /// The pdrt_unary kind code (the exponent is its `alpha`).
    static constexpr ::mlir::pd::UnaryKind kPowKind =
        ::mlir::pd::UnaryKind::Pow;
  }];
}

def PD_UnaryGradOp : PD_Op<"unary_grad", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of an elementwise unary op: dx = dy * f'(x).";
  let description = [{
    `kind` is the forward op's function (`pow`, whose exponent is `alpha`,
    for pd.pow); `input` and `output` are the forward's x and y (rules use
    whichever is cheaper, e.g. exp' = y, tanh' = 1 - y^2).

    ```mlir
    %dx = pd.unary_grad %dy, %x, %y {kind = #pd.unary_kind<exp>} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$input,
                       PD_F32Tensor:$output, PD_UnaryKindAttr:$kind,
                       DefaultValuedAttr<F32Attr, "0.0f">:$alpha);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $input `,` $output attr-dict `:` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

def PD_GeluOp : PD_Op<"gelu", [Pure, AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Elementwise Gaussian error linear unit.";
  let description = [{
    With `approximate = #pd.gelu<none>` (the default): y = 0.5 x (1 + erf(x / sqrt(2))); with
    `#pd.gelu<tanh>`: y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    ONNX Gelu (opset 20) imports to this op; one kernel computes it, one
    its gradient (pd.gelu_grad). With a `bias` (a vector the size of the
    last dimension, moved here from the Linear layer before the GELU by
    pd-fuse-bias-into-consumers) the op computes gelu(x + bias), the bias
    broadcast over the rows, in the same pass.

    ```mlir
    %y = pd.gelu %x {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
    %y = pd.gelu %x, %b : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, Optional<PD_F32Tensor>:$bias,
                       DefaultValuedAttr<PD_GeluApproximationAttr,
                           "::mlir::pd::GeluApproximation::None">:$approximate);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat =
      "$input (`,` $bias^)? attr-dict `:` type($result) (`,` type($bias)^)?";
  let hasVerifier = 1;
}

def PD_DropoutOp : PD_Op<"dropout", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Training-mode dropout with a counter-based random mask.";
  let description = [{
    y = keep ? x / (1 - ratio) : 0, with keep = (u >= ratio) for a uniform
    u in [0, 1) drawn from Philox4x32-10 keyed by (run seed, step,
    microbatch, `rng_id`, element index): the same key gives the same mask
    wherever it is evaluated, so the gradient (this op again, applied to
    dy with the same `rng_id`) and a recomputed forward stash nothing.
    `rng_id` numbers the random ops of the model in import order. ONNX
    Dropout in training mode with a ratio in (0, 1) imports to this op.

    ```mlir
    %y = pd.dropout %x {ratio = 1.000000e-01 : f32, rng_id = 0 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, F32Attr:$ratio, I64Attr:$rng_id);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def PD_GeluGradOp : PD_Op<"gelu_grad", [Pure,
    AllTypesMatch<["grad", "input", "result"]>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of pd.gelu: dx = dy * gelu'(x).";
  let description = [{
    Recomputes gelu'(x) from the forward's input x, with the same
    `approximate` form as the forward; with an `input_bias` (the forward's
    `bias`) from x + input_bias, the bias broadcast over the rows. With a
    second result (made by pd-fuse-bias-gradients) it also sums dx over
    every dimension but the last, in the same pass: the gradient of the
    bias the Linear layer before the GELU added (what a pd.sum_to of dx to
    the last dimension computes, bit for bit: rows added in order, in
    float).

    ```mlir
    %dx = pd.gelu_grad %dy, %x : tensor<4x8xf32>
    %dx, %db = pd.gelu_grad %dy, %x : tensor<4x8xf32> -> tensor<8xf32>
    %dx, %db = pd.gelu_grad %dy, %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$input,
                       Optional<PD_F32Tensor>:$input_bias,
                       DefaultValuedAttr<PD_GeluApproximationAttr,
                           "::mlir::pd::GeluApproximation::None">:$approximate);
  let results = (outs PD_F32Tensor:$result,
                      Optional<PD_F32Tensor>:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input (`,` $input_bias^)? attr-dict `:` type($result) (`,` type($input_bias)^)? (`->` type($bias_grad)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// SwiGLU: the gated MLP of Llama, Mistral, Qwen
//===----------------------------------------------------------------------===//

def PD_SwigluOp : PD_Op<"swiglu", [Pure, AllTypesMatch<["gate", "up", "result"]>,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gated SiLU: y = silu(gate) * up, elementwise.";
  let description = [{
    silu(g) = g * sigmoid(g). pd-fuse-decomposed-ops forms it from a
    `pd.mul` of a `pd.silu` read by nothing else and a tensor of the same
    type (the gated MLP's gate and up projections): one pass over the two
    projections instead of two kernels, silu(gate) neither written nor
    stashed (the gradient, pd.swiglu_grad, recomputes it from the gate).

    ```mlir
    %y = pd.swiglu %gate, %up : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$gate, PD_F32Tensor:$up);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def PD_SwigluGradOp : PD_Op<"swiglu_grad", [Pure,
    AllTypesMatch<["grad", "gate", "up", "gate_grad", "up_grad"]>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of pd.swiglu, both operands in one pass.";
  let description = [{
    With s = sigmoid(gate): gate_grad = dy * up * s (1 + gate (1 - s)),
    up_grad = dy * silu(gate). gate_grad may take the slot of dy.

    ```mlir
    %dg, %du = pd.swiglu_grad %dy, %gate, %up : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$gate,
                       PD_F32Tensor:$up);
  let results = (outs PD_F32Tensor:$gate_grad, PD_F32Tensor:$up_grad);
  let assemblyFormat = [{
    $grad `,` $gate `,` $up attr-dict `:` type($grad)
  }];
}

//===----------------------------------------------------------------------===//
// GeGLU: the gated MLP of Gemma
//===----------------------------------------------------------------------===//

def PD_GegluOp : PD_Op<"geglu", [Pure, AllTypesMatch<["gate", "up", "result"]>,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gated GELU: y = gelu(gate) * up, elementwise.";
  let description = [{
    gelu as pd.gelu computes it (`approximate`: the erf form or the tanh
    approximation, Gemma's gelu_pytorch_tanh). pd-fuse-decomposed-ops
    forms it from a `pd.mul` of a `pd.gelu` (without a bias) read by
    nothing else and a tensor of the same type (the gated MLP's gate and
    up projections): one pass over the two projections instead of two
    kernels, gelu(gate) neither written nor stashed (the gradient,
    pd.geglu_grad, recomputes it from the gate).

    ```mlir
    %y = pd.geglu %gate, %up {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$gate, PD_F32Tensor:$up,
                       DefaultValuedAttr<PD_GeluApproximationAttr,
                           "::mlir::pd::GeluApproximation::None">:$approximate);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def PD_GegluGradOp : PD_Op<"geglu_grad", [Pure,
    AllTypesMatch<["grad", "gate", "up", "gate_grad", "up_grad"]>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of pd.geglu, both operands in one pass.";
  let description = [{
    gate_grad = dy * up * gelu'(gate), up_grad = dy * gelu(gate).
    gate_grad may take the slot of dy.

    ```mlir
    %dg, %du = pd.geglu_grad %dy, %gate, %up {approximate = #pd.gelu<tanh>} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$gate,
                       PD_F32Tensor:$up,
                       DefaultValuedAttr<PD_GeluApproximationAttr,
                           "::mlir::pd::GeluApproximation::None">:$approximate);
  let results = (outs PD_F32Tensor:$gate_grad, PD_F32Tensor:$up_grad);
  let assemblyFormat = [{
    $grad `,` $gate `,` $up attr-dict `:` type($grad)
  }];
}

//===----------------------------------------------------------------------===//
// Rotary position embedding: Llama, Mistral, Qwen, GPT-NeoX
//===----------------------------------------------------------------------===//

def PD_RotaryOp : PD_Op<"rotary", [Pure,
    AllTypesMatch<["input", "result"]>, AllTypesMatch<["cos", "sin"]>,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Rotary position embedding: x cos + rotate_half(x) sin.";
  let description = [{
    Along the first R dims of the last axis (R = 2 h even: the tables'
    last dim, the input's whole last axis or, partial rotary as in
    GPT-NeoX and Phi, a leading part of it): y = x * cos + r * sin with r =
    rotate_half(x) = concat(-x[h:R], x[:h]), that is y[i] = x[i] cos[i] -
    x[i + h] sin[i] and y[i + h] = x[i + h] cos[i + h] + x[i] sin[i + h]
    for i < h; y[j] = x[j] for R <= j. With `adjoint` it is the transposed
    map, x cos + rotate_half^T(x sin) with rotate_half^T(z) = concat(z[h:],
    -z[:h]): y[i] = x[i] cos[i] + x[i + h] sin[i + h], y[i + h] = x[i + h]
    cos[i + h] - x[i] sin[i] (y[j] = x[j] past R); the gradient of the one
    is the other.

    `cos` and `sin` (one type) broadcast to x's first R columns (numpy
    rules), and their leading dims that are not broadcast form one run: the
    table is then [rows, R] for the x rows viewed as [rows', D], x row r
    reading table row (r / repeat) mod rows, repeat being the product of
    x's dims after the run. A [1, 1, T, R] table over [B, H, T, D] (Hugging
    Face's layout) and a [1, T, 1, R] one over [B, T, H, D] both are.
    pd-fuse-rotary-embedding forms it from the exported slices, neg,
    concat, two multiplies and an add (and, partial, the slices and the
    concat around them).

    ```mlir
    %y = pd.rotary %x, %cos, %sin : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
    %dx = pd.rotary %dy, %cos, %sin {adjoint} : tensor<2x8x4x16xf32>, tensor<1x8x1x16xf32>
    %p = pd.rotary %x, %c, %s : tensor<2x4x8x16xf32>, tensor<1x1x8x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, PD_F32Tensor:$cos,
                       PD_F32Tensor:$sin, UnitAttr:$adjoint);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// How a [..., R] table of shape `table` indexes the rows of an x of
    /// shape `x`: {table rows, repeat} (see the description), or nullopt
    /// if it does not broadcast to x's first R columns as one run (R even,
    /// at most x's last dim).
    static std::optional<std::pair<int64_t, int64_t>>
    tableLayout(::llvm::ArrayRef<int64_t> x, ::llvm::ArrayRef<int64_t> table);
  }];
}

//===----------------------------------------------------------------------===//
// Softmax and layer normalization
//===----------------------------------------------------------------------===//

def PD_SoftmaxOp : PD_Op<"softmax", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Softmax (or log-softmax with `log`) along one axis.";
  let description = [{
    y = exp(x - max) / sum(exp(x - max)) along `axis` (non-negative);
    with `log`, y = x - max - log(sum(exp(x - max))).

    ```mlir
    %y = pd.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, I64Attr:$axis, UnitAttr:$log);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def PD_SoftmaxGradOp : PD_Op<"softmax_grad", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of softmax from its output.";
  let description = [{
    softmax: dx = y * (dy - sum(dy * y)); log-softmax: dx = dy - exp(y) *
    sum(dy), sums along `axis`.

    ```mlir
    %dx = pd.softmax_grad %dy, %y {axis = 1 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$output, I64Attr:$axis,
                       UnitAttr:$log);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
}

def PD_MaskedSoftmaxOp : PD_Op<"masked_softmax", [Pure,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Attention's scale, mask and softmax in one kernel.";
  let description = [{
    Along the last axis: y = softmax(t) with t = `scale` * x where the mask
    keeps an element and -inf where it does not, so masked elements get
    y = 0; a row that keeps no element gets y = 0 (the verifier rejects a
    constant mask with such a row). The mask (true = keep) is for the rows
    of x viewed as [rows, N]: an i1 [R, N] matrix, row r using mask row
    r mod R, so that one causal [T, T] mask serves every batch and head; or
    an i1 [G, R, N] tensor of G blocks, the rows splitting into G equal
    runs, run g using block g and its row r mod R: a padding mask computed
    in the step, one [T, N] or [1, N] block per batch entry, broadcast over
    the heads. Without a mask only the scale applies. With
    `zero_nan_rows` a row whose softmax is NaN (a NaN or +inf score) is 0,
    as softmax followed by Where(IsNaN(y), 0, y) gives (torch's export of
    scaled_dot_product_attention); its gradient there is 0 (the unfused
    ops' is NaN). With `uniform_empty_rows` a row that keeps no element is
    1 / N everywhere instead of 0: the softmax of a row of one finite fill
    (a mask filled with torch's finfo.min, which absorbs any score), whose
    gradient (pd.masked_softmax_grad's formula) is the unfused ops' too. pd-fuse-attention-softmax forms this op from
    softmax(where(mask, -inf, x * scale)) and its variants; the kernel
    skips the masked tail of a row whose kept elements are a prefix (the
    causal and padding masks) and its gradient (pd.masked_softmax_grad)
    needs no mask. With `diagonal_blocks` (set by pd-mark-causal-gemms
    when every reader of y is a GEMM that skips the blocks above the
    diagonal, or the causal gradient) the kernel writes each row of the
    [..., T, T] result only up to the end of its diagonal block of
    BatchMatMulOp::kCausalBlock columns: the zeros past it would never be
    read.

    ```mlir
    %y = pd.masked_softmax %x, %mask {scale = 1.250000e-01 : f32} : tensor<2x4x8x8xf32>, tensor<8x8xi1>
    %z = pd.masked_softmax %x, %pad {scale = 1.250000e-01 : f32, zero_nan_rows} : tensor<2x4x8x8xf32>, tensor<2x1x8xi1>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, Optional<PD_BoolTensor>:$mask,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                       UnitAttr:$diagonal_blocks, UnitAttr:$zero_nan_rows,
                       UnitAttr:$uniform_empty_rows);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $input (`,` $mask^)? attr-dict `:` type($input) (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The value whose buffer a stashed result may share, so that the
    /// scores' producer writes into the stash slot and the kernel (which
    /// reads each element before writing it) normalises them in place:
    /// getInPlaceOperandRoot of the input.
    ::mlir::Value getInPlaceInput();
  }];
}

def PD_MaskedSoftmaxGradOp : PD_Op<"masked_softmax_grad", [Pure,
    SameOperandsAndResultType, DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of pd.masked_softmax from its output.";
  let description = [{
    dx = scale * y * (dy - sum(dy * y)) along the last axis; masked
    elements have y = 0 and so get dx = 0. With `causal` (set by
    pd-mark-causal-gemms) the rows are those of [T, T] matrices under the
    causal mask or a band inside it: row i of each keeps at most its first
    i + 1 elements, dy is read there only (its tail may hold anything) and
    dx is zero after them; with
    `diagonal_blocks` too (every reader of dx skips the blocks above the
    diagonal) dx is written only up to the end of each row's diagonal
    block, as pd.masked_softmax writes y.

    ```mlir
    %dx = pd.masked_softmax_grad %dy, %y {scale = 1.250000e-01 : f32} : tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$output,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                       UnitAttr:$causal, UnitAttr:$diagonal_blocks);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def PD_LayerNormOp : PD_Op<"layer_norm", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Layer normalization over the trailing axes from `axis`.";
  let description = [{
    With the input viewed as [rows, cols] (cols = product of the dims from
    `axis`): y = (x - mean) / sqrt(var + epsilon) * scale + bias, with the
    biased variance of each row; scale and bias have the trailing shape.
    ONNX LayerNormalization (opset 17) imports to this op.

    ```mlir
    %y = pd.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, PD_F32Tensor:$scale,
                       PD_F32Tensor:$bias, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` type($input) `,` type($scale) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_LayerNormGradOp : PD_Op<"layer_norm_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradients of layer_norm for its input, scale and bias.";
  let description = [{
    Recomputes each row's mean and 1/std from x (nothing is stashed beyond
    the forward's input), then dbias = sum_rows dy, dscale = sum_rows dy*xhat,
    dx = rstd * (dy*scale - mean(dy*scale) - xhat * mean(dy*scale*xhat)).
    With an `addend` (the residual stream's gradient, see
    pd.add_layer_norm) dx also adds it, in the same pass. With an
    `input_grad_sum` result (the norm over the last dimension alone) the
    rows of dx are also summed into it, in row order, as pd.sum_to would:
    the gradient of a bias added to the norm's input (pd.add_layer_norm's
    `rhs_bias`), folded in by pd-fuse-bias-gradients.

    ```mlir
    %dx, %dg, %db = pd.layer_norm_grad %dy, %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
    %dx, %dg, %db, %ds = pd.layer_norm_grad %dy, %x, %g, %da {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$input,
                       PD_F32Tensor:$scale, Optional<PD_F32Tensor>:$addend,
                       I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs PD_F32Tensor:$input_grad, PD_F32Tensor:$scale_grad,
                      PD_F32Tensor:$bias_grad,
                      Optional<PD_F32Tensor>:$input_grad_sum);
  let assemblyFormat = [{
    $grad `,` $input `,` $scale (`,` $addend^)? attr-dict `:` type($grad) `,` type($input) `,` type($scale) (`,` type($addend)^)? `->` type($input_grad) `,` type($scale_grad) `,` type($bias_grad) (`,` type($input_grad_sum)^)?
  }];
  let hasVerifier = 1;
}

def PD_AddLayerNormOp : PD_Op<"add_layer_norm", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "A residual add and the layer norm of its sum, in one pass.";
  let description = [{
    sum = lhs + rhs (same shapes) and y = layer_norm(sum) as pd.layer_norm
    does, a row at a time while the row is in cache; both results are
    kept (the residual stream goes on with the sum). pd-fuse-residual-
    layer-norm forms it from a transformer block's add and the layer norm
    that follows; its gradient is one pd.layer_norm_grad that also adds
    the sum's own gradient. With a `rhs_bias` (the bias of the Linear layer
    that computed rhs, moved here by pd-fuse-bias-into-consumers; the norm
    must then be over the last dimension alone) sum = lhs + (rhs +
    rhs_bias), the bias broadcast over the rows.

    ```mlir
    %s, %y = pd.add_layer_norm %a, %b, %g, %beta {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
    %s, %y = pd.add_layer_norm %a, %b, %g, %beta, %c {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$lhs, PD_F32Tensor:$rhs,
                       PD_F32Tensor:$scale, PD_F32Tensor:$bias,
                       Optional<PD_F32Tensor>:$rhs_bias, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs PD_F32Tensor:$sum, PD_F32Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $scale `,` $bias (`,` $rhs_bias^)? attr-dict `:` type($lhs) `,` type($rhs) `,` type($scale) `,` type($bias) (`,` type($rhs_bias)^)? `->` type($sum) `,` type($result)
  }];
  let hasVerifier = 1;
}

def PD_FusedElementwiseOp : PD_Op<"fused_elementwise", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "A chain of elementwise ops evaluated in one pass.";
  let description = [{
    Runs `program` (the runtime's pdrt_chain_kind instructions, five words
    each: kind, code, destination register, operands) on blocks of
    elements: registers 0..N-1 hold the N inputs, every later register is
    written once, and the last instruction's register is the result.
    Input i is read at element e as input_i[e mod periods[i]] (the
    result's size: the whole tensor; 1: a scalar; the row length: a
    vector broadcast over rows). pd-fuse-elementwise-chains forms it, after
    differentiation, from chains of single-use elementwise ops; the chain's
    intermediates never reach memory.

    ```mlir
    %y = pd.fused_elementwise %x, %u {periods = array<i64: 32, 32>, program = array<i64: 1, 6, 2, 0, 0, 0, 2, 3, 0, 2, 0, 2, 4, 3, 1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Variadic<PD_F32Tensor>:$inputs,
                       DenseI64ArrayAttr:$periods, DenseI64ArrayAttr:$program);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasVerifier = 1;
}

def PD_RMSNormOp : PD_Op<"rms_norm", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "RMS normalization over the trailing axes from `axis`.";
  let description = [{
    With the input viewed as [rows, cols] (cols = product of the dims from
    `axis`): y = x / sqrt(mean(x^2) + epsilon) * scale; scale has the
    trailing shape. Llama's RMSNorm (Pow, ReduceMean, Add, Sqrt, Div or
    Reciprocal, Mul, fused by pd-fuse-decomposed-ops) and ONNX
    RMSNormalization (opset 23) import to this op.

    ```mlir
    %y = pd.rms_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-06 : f32} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, PD_F32Tensor:$scale,
                       I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `,` type($scale) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_RMSNormGradOp : PD_Op<"rms_norm_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradients of rms_norm for its input and scale.";
  let description = [{
    Recomputes each row's rstd = 1/sqrt(mean(x^2) + eps) from x (nothing is
    stashed beyond the forward's input), then dscale = sum_rows dy*x*rstd,
    dx = rstd * (dy*scale - x * rstd^2 * mean(dy*scale*x)). With an
    `addend` (the residual stream's gradient, see pd.add_rms_norm) dx also
    adds it, in the same pass.

    ```mlir
    %dx, %dg = pd.rms_norm_grad %dy, %x, %g {axis = 1 : i64, epsilon = 1.0e-06 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<8xf32>
    %dx2, %dg2 = pd.rms_norm_grad %dy, %x, %g, %ds {axis = 1 : i64, epsilon = 1.0e-06 : f32} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$input,
                       PD_F32Tensor:$scale, Optional<PD_F32Tensor>:$addend,
                       I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs PD_F32Tensor:$input_grad, PD_F32Tensor:$scale_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $scale (`,` $addend^)? attr-dict `:` type($grad) `,` type($input) `,` type($scale) (`,` type($addend)^)? `->` type($input_grad) `,` type($scale_grad)
  }];
  let hasVerifier = 1;
}

def PD_AddRMSNormOp : PD_Op<"add_rms_norm", [Pure,
    AllTypesMatch<["lhs", "rhs", "sum", "result"]>,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "A residual add and the RMS norm of its sum, in one pass.";
  let description = [{
    sum = lhs + rhs (same shapes) and y = rms_norm(sum) as pd.rms_norm
    does, a row at a time while the row is in cache: both results are
    kept (the residual stream goes on with the sum), with the bits of the
    add and the norm apart. pd-fuse-residual-layer-norm forms it from a
    Llama block's residual add and the RMS norm that follows; its gradient
    is one pd.rms_norm_grad that also adds the sum's own gradient.

    ```mlir
    %s, %y = pd.add_rms_norm %a, %b, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$lhs, PD_F32Tensor:$rhs,
                       PD_F32Tensor:$scale, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs PD_F32Tensor:$sum, PD_F32Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $scale attr-dict `:` type($lhs) `,` type($scale)
  }];
  let hasVerifier = 1;
}
