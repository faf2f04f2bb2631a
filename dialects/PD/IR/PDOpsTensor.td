//===- PDOpsTensor.td - pd tensor ops -----------------------*- tablegen -*-===//
//
// The tensor and shape ops: transpose, reshape, gather, broadcast_to,
// batched matmul, slice, concat, equal, cast and where. Included by
// PDOps.td; verifiers, folders, costs and gradients in PDOpsTensor.cpp.
//
//===----------------------------------------------------------------------===//

def PD_TransposeOp : PD_Op<"transpose", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Permutes the dimensions of a tensor.";
  let description = [{
    result.shape[i] = input.shape[perm[i]] (ONNX Transpose). A 2-D transpose
    that feeds a matmul is folded into its transpose flags at import.

    ```mlir
    %y = pd.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def PD_ReshapeOp : PD_Op<"reshape", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>]> {
  let summary = "Gives a tensor a new shape with the same elements.";
  let description = [{
    Row-major order is kept. ONNX Reshape, Flatten, Squeeze and Unsqueeze
    import to this op. It costs nothing: pd-allocate-buffers makes the
    result a view of its input's buffer (and the lowering emits no call)
    unless the result needs a home of its own (it is stashed or sent while
    its input lives elsewhere, or its input is a constant), in which case
    it is lowered to a copy.

    ```mlir
    %y = pd.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$input);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def PD_GatherOp : PD_Op<"gather", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gathers slices of a tensor along one axis by integer indices.";
  let description = [{
    ONNX Gather: with data of shape [A..., N, B...] gathered along `axis`
    (the position of N), result[a..., i..., b...] = data[a..., indices[i...],
    b...] and the result shape is [A..., indices.shape..., B...]. On axis 0
    of a [vocab, dim] table this is the embedding lookup. Negative indices
    count from the end; an index out of range is a run-time error naming it.
    Folds when data and indices are constants (shape computations), which is
    how non-float data is handled; run-time gathers copy elements of any
    type, and only float data is differentiable.

    ```mlir
    %e = pd.gather %table, %idx : tensor<64x32xf32>, tensor<2x8xi64> -> tensor<2x8x32xf32>
    %c = pd.gather %x, %i {axis = 1 : i64} : tensor<4x5x6xf32>, tensor<3xi64> -> tensor<4x3x6xf32>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$data, PD_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def PD_GatherGradOp : PD_Op<"gather_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of gather: scatter-adds slices of dY into a zero tensor.";
  let description = [{
    The result has the gathered data's shape: dData[a..., indices[i...],
    b...] += dY[a..., i..., b...], starting from zero; repeated indices
    accumulate.

    ```mlir
    %dt = pd.gather_grad %dy, %idx : tensor<2x8x32xf32>, tensor<2x8xi64> -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` type($grad) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_BroadcastToOp : PD_Op<"broadcast_to", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Broadcasts a tensor to a shape (numpy rules, ONNX Expand).";
  let description = [{
    The result shape must be the numpy broadcast of the input shape and
    itself: dimensions are right-aligned and each input dimension is equal
    to the result's or 1. Every result element copies the input element it
    broadcasts from. ONNX Expand imports to this op, and batched matmuls
    with broadcast batch dimensions materialise their operands with it.
    The gradient is pd.sum_to. Folds on constants.

    ```mlir
    %y = pd.broadcast_to %x : tensor<1x4xf32> -> tensor<3x2x4xf32>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$input);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def PD_BatchMatMulOp : PD_Op<"batch_matmul", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface, ["getBytes"]>]> {
  let summary = "Batched matrix product over equal leading dimensions.";
  let description = [{
    For each index of the leading (batch) dimensions, which both operands
    share: C = op(A) op(B) of the trailing 2-D matrices, op(X) = X or X^T as
    the flags say. ONNX MatMul of N-D operands (attention's Q K^T and P V)
    imports to this op.

    The operands and the result may be stored in another dim order, which
    the kernel reads and writes through strides (no copy): with `lhs_perm`
    A is pd.transpose(lhs, lhs_perm) (likewise `rhs_perm`), and with
    `result_perm` the result is pd.transpose(C, result_perm). Each stored
    operand keeps one of its matrix's two dims innermost and the result
    keeps C's columns innermost. pd-fold-transposes-into-matmul sets these
    after differentiation, from the transposes that split and merge
    attention heads.

    With `lhs_select = array<i64: axis, index>` the stored lhs has one dim
    more than the op's rank and the operand is its part at `index` along
    `axis` (that dim dropped; `lhs_perm` then orders the remaining dims);
    likewise `rhs_select`. The GEMMs read the part in place through the
    stored strides. pd-fold-slices-into-matmul sets these after
    differentiation, from the slices that split attention's fused QKV
    projection into Q, K and V.

    `triangle` says which blocks of a square matrix the kernel may skip
    (pd-mark-causal-gemms sets it around a causal pd.masked_softmax):
    `result_lower`, C is square and only its lower triangle (j <= i) is
    read, so the kernel leaves the blocks above the diagonal unwritten;
    `lhs_lower` / `lhs_upper`, op(A) is square and zero above / below its
    diagonal, so each row block of C sums over the nonzero part of its
    rows only. Attention's six GEMMs then do 55-65% of the dense work.

    Grouped-query attention shares each K and V head among `g` query
    heads. With `rhs_groups = g` the rhs's last batch dim (as read, after
    its perm) has 1/g of the op's entries: entry h of that dim reads rhs
    entry h / g, through a zero stride, where the export copies K and V g
    times (pd.broadcast_to). With `result_groups = g` the result's last
    batch dim likewise has 1/g of the entries and C's entry j is the sum
    of the products of entries j g .. j g + g - 1, accumulated in that
    order (K's and V's gradients, which the export sums with pd.sum_to).
    Both present, they are equal. pd-fold-broadcasts-into-matmul sets
    these after differentiation.

    ```mlir
    %s = pd.batch_matmul %q, %k {transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
    %t = pd.batch_matmul %qh, %kh {lhs_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32> -> tensor<2x4x8x8xf32>
    %u = pd.batch_matmul %qkv, %qkv {lhs_select = array<i64: 2, 0>, lhs_perm = array<i64: 0, 2, 1, 3>, rhs_select = array<i64: 2, 1>, rhs_perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x3x4x16xf32>, tensor<2x8x3x4x16xf32> -> tensor<2x4x8x8xf32>
    %g = pd.batch_matmul %q, %k {rhs_groups = 2 : i64, transpose_rhs} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x8xf32>
    %dk = pd.batch_matmul %ds, %q {result_groups = 2 : i64, transpose_lhs} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x2x8x16xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$lhs, PD_F32Tensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs,
                       OptionalAttr<DenseI64ArrayAttr>:$lhs_perm,
                       OptionalAttr<DenseI64ArrayAttr>:$rhs_perm,
                       OptionalAttr<DenseI64ArrayAttr>:$result_perm,
                       OptionalAttr<DenseI64ArrayAttr>:$lhs_select,
                       OptionalAttr<DenseI64ArrayAttr>:$rhs_select,
                       OptionalAttr<PD_TriangleAttr>:$triangle,
                       OptionalAttr<I64Attr>:$rhs_groups,
                       OptionalAttr<I64Attr>:$result_groups);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The shapes of A and B before the transpose flags (the stored
    /// operands' shapes, less a selected dim, in the perms' dim order).
    ::llvm::SmallVector<int64_t> getLogicalLhsShape();
    ::llvm::SmallVector<int64_t> getLogicalRhsShape();

    /// The FLOPs of the dense product (getFlops() counts those of the
    /// blocks a `triangle` leaves, which the kernel runs).
    int64_t getDenseFlops();
    /// The GEMMs it runs: the product of the op's batch dims.
    int64_t getProducts();
    /// The verifier's checks of rhs_groups and result_groups.
    ::mlir::LogicalResult verifyGroups();

    /// Rows or columns per block a `triangle` skips (the runtime's
    /// PDRT_CAUSAL_BLOCK, checked where the op is lowered).
    static constexpr int64_t kCausalBlock = 32;

    /// How one GEMM per batch index reads a stored matrix operand: the
    /// BLAS transpose flag, leading dimension and each batch dim's element
    /// stride.
    struct StridedMatrix {
      bool transpose;
      int64_t ld;
      ::llvm::SmallVector<int64_t> batchStrides;
    };
    /// The layout of an operand stored as `stored`, its part at a select
    /// ([axis, index], none: the whole) read in the dim order `perm`
    /// (none: as stored), op(X) = X^T when `transpose`; none when neither
    /// of its matrix dims is innermost in storage.
    static std::optional<StridedMatrix>
    stridedOperand(::llvm::ArrayRef<int64_t> stored,
                   std::optional<::llvm::ArrayRef<int64_t>> perm,
                   bool transpose,
                   std::optional<::llvm::ArrayRef<int64_t>> select = {});
    /// The element offset of a select's part in a row-major `stored`
    /// (0 without one).
    static int64_t selectOffset(::llvm::ArrayRef<int64_t> stored,
                                std::optional<::llvm::ArrayRef<int64_t>> select);
    /// The layout of a result stored as transpose(C, perm), or as that
    /// part of `stored` at a select ([axis, index]); none unless C's
    /// columns stay innermost.
    static std::optional<StridedMatrix>
    stridedResult(::llvm::ArrayRef<int64_t> stored,
                  std::optional<::llvm::ArrayRef<int64_t>> perm,
                  std::optional<::llvm::ArrayRef<int64_t>> select = {});

    /// Where the result is stored when pd-concat-in-place has it written
    /// into the pd.concat that reads it (`pd.concat_part` = [axis, index,
    /// parts]): part `index` along `axis` of `stored`, the result's shape
    /// with a dim of `parts` inserted at `axis`. None without the
    /// attribute.
    struct ResultPart {
      ::llvm::SmallVector<int64_t> stored;
      ::llvm::SmallVector<int64_t, 2> select;
    };
    std::optional<ResultPart> getResultPart();

    /// Whether the op runs as pdrt_batch_matmul_strided (a perm, select,
    /// triangle, group or concat part), not as the plain
    /// pdrt_batch_matmul.
    bool isStrided() {
      return getLhsPerm() || getRhsPerm() || getResultPerm() ||
             getLhsSelect() || getRhsSelect() || getTriangle() ||
             getRhsGroups() || getResultGroups() || getResultPart();
    }

    /// The entries of the op's last batch dim that share one rhs or
    /// result entry (rhs_groups or result_groups; 1 without either).
    int64_t getBatchGroups() {
      return getRhsGroups() ? (int64_t)*getRhsGroups()
             : getResultGroups() ? (int64_t)*getResultGroups() : 1;
    }
  }];
  let hasVerifier = 1;
}

def PD_SliceOp : PD_Op<"slice", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "A strided window of a tensor: start and step per dimension.";
  let description = [{
    result[i...] = input[starts + i * steps ...] for every dimension, the
    result shape giving the window's size. Steps are non-zero; a negative
    step walks backwards from its start. ONNX Slice and Split import to this
    op with their constant arguments resolved and clamped. Folds on constant
    inputs.

    ```mlir
    %q = pd.slice %qkv {starts = array<i64: 0, 0, 32>, steps = array<i64: 1, 1, 1>} : tensor<4x8x96xf32> -> tensor<4x8x32xf32>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$steps);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = [{
    /// The element offset of the window in its row-major input when the
    /// window is one contiguous run of it (every dim before some dim d of
    /// extent 1 in the window, dim d a run of step 1, every dim after it
    /// whole): pd-allocate-buffers then makes the result a view of the
    /// input's memory. None otherwise.
    std::optional<int64_t> getContiguousOffset();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def PD_SliceGradOp : PD_Op<"slice_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of slice: dY placed in a zero tensor of the input's shape.";
  let description = [{
    The result has the sliced input's shape; result[starts + i * steps] =
    grad[i], every other element is zero.

    ```mlir
    %dx = pd.slice_grad %dq {starts = array<i64: 0, 0, 32>, steps = array<i64: 1, 1, 1>} : tensor<4x8x32xf32> -> tensor<4x8x96xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$steps);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def PD_ConcatOp : PD_Op<"concat", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Concatenates tensors along one axis.";
  let description = [{
    ONNX Concat; shape computations on constants fold at import.

    ```mlir
    %c = pd.concat %a, %b {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
    ```
  }];
  let arguments = (ins Variadic<PD_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let extraClassDeclaration = [{
    /// The pd.batch_matmul computing each input, when every input is one's
    /// result (or a reshape chain of it, each value read once:
    /// getInPlaceOperandRoot), the inputs are of one shape, and each GEMM
    /// can write its input into this op's result through strides (the
    /// reshapes keep the dims before `axis`, and C's columns stay
    /// innermost): pd-concat-in-place has them write it there. Empty
    /// otherwise.
    ::llvm::SmallVector<BatchMatMulOp> getInPlaceParts();
    /// Whether each input is one contiguous run of the result (every dim
    /// before `axis` of extent 1): a row concat, such as the halves of a
    /// GEMM pd-split-matmul-rows split.
    bool hasContiguousInputs();
    /// The element offset of input `index` in the result of a concat with
    /// contiguous inputs.
    int64_t getInputOffset(unsigned index);
    /// For a concat with contiguous inputs, the value computing each input
    /// (getContiguousPartRoot), which pd-concat-in-place has written at its
    /// offset in this op's result; empty if an input has none.
    ::llvm::SmallVector<::mlir::Value> getContiguousParts();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def PD_CompareOp : PD_Op<"compare", [Pure]> {
  let summary = "Elementwise comparison or logic with numpy broadcasting.";
  let description = [{
    `predicate` is one of eq, lt, le, gt, ge (operands of one element type)
    or and, or, xor (bool operands); the result is a bool tensor. Not
    differentiable. Comparisons of constants fold at import; this op is
    what remains for run-time tensors (e.g. an attention mask input).

    ```mlir
    %m = pd.compare %a, %b {predicate = "lt"} : tensor<2x8xi64>, tensor<i64> -> tensor<2x8xi1>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$lhs, PD_AnyTensor:$rhs, StrAttr:$predicate);
  let results = (outs PD_BoolTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_NotOp : PD_Op<"not", [Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise logical negation of a bool tensor.";
  let description = [{
    ```mlir
    %n = pd.not %m : tensor<2x8xi1>
    ```
  }];
  let arguments = (ins PD_BoolTensor:$input);
  let results = (outs PD_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def PD_GatherElementsOp : PD_Op<"gather_elements", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gathers elements along one axis by an index tensor.";
  let description = [{
    ONNX GatherElements: indices have data's rank and the result their
    shape; result[i...] = data[i... with coordinate `axis` replaced by
    indices[i...]]. Negative indices count from the end; an index out of
    range is a run-time error naming it. Elements of any type are copied;
    float data is differentiable (pd.gather_elements_grad scatter-adds).

    ```mlir
    %g = pd.gather_elements %x, %i {axis = 1 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$data, RankedTensorOf<[I64]>:$indices, I64Attr:$axis);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_GatherElementsGradOp : PD_Op<"gather_elements_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of gather_elements: dy scatter-added into zeros.";
  let description = [{
    The result has the gathered data's shape; repeated indices accumulate.

    ```mlir
    %dx = pd.gather_elements_grad %dy, %i {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, RankedTensorOf<[I64]>:$indices, I64Attr:$axis);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` type($grad) `,` type($indices) `->` type($result)
  }];
}

def PD_CastOp : PD_Op<"cast", [Pure]> {
  let summary = "Converts the element type of a tensor.";
  let description = [{
    ONNX Cast between f32, i64, i32 and bool (float to integer truncates,
    anything to bool is != 0). It folds on constants (shape and mask
    computations); on run-time values it is a copy kernel and not
    differentiable (integer and bool values carry no gradient).

    ```mlir
    %b = pd.cast %m : tensor<8xi64> -> tensor<8xi1>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$input);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def PD_WhereOp : PD_Op<"where", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Elementwise select cond ? x : y with numpy broadcasting.";
  let description = [{
    The result shape is the numpy broadcast of the three operand shapes. The
    condition is a bool tensor, stored one byte per element at run time; in
    exported models it is usually a folded constant (a causal mask).

    ```mlir
    %a = pd.where %mask, %ninf, %att : tensor<1x1x8x8xi1>, tensor<f32>, tensor<4x2x8x8xf32> -> tensor<4x2x8x8xf32>
    ```
  }];
  let arguments = (ins PD_BoolTensor:$cond, PD_F32Tensor:$lhs,
                       PD_F32Tensor:$rhs);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_WhereGradOp : PD_Op<"where_grad", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of where for one branch: cond ? dy : 0 (or !cond).";
  let description = [{
    With `negate`, selects where the condition is false (the y branch).
    The result has dy's shape; pd.sum_to reduces it to the branch's shape.

    ```mlir
    %dx = pd.where_grad %dy, %mask {negate} : tensor<4x2x8x8xf32>, tensor<1x1x8x8xi1> -> tensor<4x2x8x8xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_BoolTensor:$cond,
                       UnitAttr:$negate);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $cond attr-dict `:` type($grad) `,` type($cond) `->` type($result)
  }];
  let hasVerifier = 1;
}
