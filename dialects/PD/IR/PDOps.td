//===- PDOps.td - The pd dialect ---------------------------*- tablegen -*-===//
//
// The pd dialect holds a training program at three levels: tensor math as
// imported from ONNX (matmul, add, relu, loss, ...), the training additions
// of pd-autodiff (gradient seeds and accumulators), and the schedule-level
// ops of the outlined stage functions (send, recv, input, report_loss).
//
//===----------------------------------------------------------------------===//

#ifndef PD_OPS
#define PD_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "dialects/PD/IR/PDInterfaces.td"
include "dialects/PD/IR/PDEnums.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def PD_Dialect : Dialect {
  let name = "pd";
  let summary = "The pdc training dialect: tensor math, gradients and stages.";
  let description = [{
    Ops on statically shaped tensors, imported from ONNX, differentiated by
    pd-autodiff and split into pipeline stages. Trainable parameters are
    module-level `pd.param` symbols read with `pd.param_ref`.
  }];
  let cppNamespace = "::mlir::pd";
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];

  // The state passes hand each other (docs/pass-contract.md says who
  // writes and who reads each). PDDialect::verifyOperationAttribute checks
  // every `pd.*` attribute against this list: an unknown one (a stale
  // attribute) or one of the wrong kind is an error.
  let discardableAttrs = (ins
    "::mlir::StringAttr":$model,          // module: the ONNX file (importer)
    "::mlir::IntegerAttr":$opset,         // module: its ai.onnx opset
    "::mlir::IntegerAttr":$num_stages,    // module: pipeline depth (partition)
    "::mlir::pd::ScheduleAttr":$schedule, // module: the schedule buffers are planned for
    "::mlir::pd::OptimizerAttr":$optimizer, // module: the optimizer state planned
    "::mlir::IntegerAttr":$op_id,         // op: position in the forward (autodiff)
    "::mlir::IntegerAttr":$grad_of,       // op: op_id of the forward op it differentiates
    "::mlir::IntegerAttr":$stage,         // op, param, stage function: its stage
    "::mlir::pd::PhaseAttr":$phase,       // stage function: forward or backward
    "::mlir::DenseI64ArrayAttr":$owners,  // param: the stages holding a copy (tied)
    "::mlir::IntegerAttr":$grad_offset,   // param, accumulate_grad: byte offset in grads
    "::mlir::UnitAttr":$accumulate,       // matmul: accumulates into its output
    "::mlir::UnitAttr":$recompute,        // backward function: reruns its stage's forward
    "::mlir::UnitAttr":$view,             // reshape: its result is its input's memory
    "::mlir::UnitAttr":$in_place_parts,   // concat: its operands' producers write its result
    "::mlir::DenseI64ArrayAttr":$concat_part, // batch_matmul: [axis, index, parts] of that result it writes
    "::mlir::DictionaryAttr":$params,     // forward function: parameter layout
    "::mlir::DictionaryAttr":$state,      // forward function: state layout
    "::mlir::DictionaryAttr":$regions,    // forward function: region sizes
    "::mlir::pd::BufferAttr":$buffer,     // value (op result or argument): its home
    "::mlir::ArrayAttr":$buffers,         // multi-result op: one buffer per result
    "::mlir::StringAttr":$input_name,     // main's argument: its ONNX graph input
    "::mlir::IntegerAttr":$profile_id,    // op: graph position timed by a profiling stage
    "::mlir::FloatAttr":$seconds          // op: its measured time (pdc --profile)
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
}

class PD_Op<string mnemonic, list<Trait> traits = []>
    : Op<PD_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// Enumerations as attributes: `#pd.region<workspace>`, `#pd.phase<forward>`,
// `#pd.schedule<"2bw">`, `#pd.optimizer<adam>`, `#pd.gelu<tanh>`,
// `#pd.unary_kind<exp>`.
class PD_EnumAttr<EnumAttrInfo info, string mnemonic>
    : EnumAttr<PD_Dialect, info, mnemonic> {
  let assemblyFormat = "`<` $value `>`";
}

def PD_RegionAttr : PD_EnumAttr<PD_Region, "region">;
def PD_PhaseAttr : PD_EnumAttr<PD_Phase, "phase">;
def PD_OptimizerAttr : PD_EnumAttr<PD_Optimizer, "optimizer">;
def PD_GeluApproximationAttr : PD_EnumAttr<PD_GeluApproximation, "gelu">;
def PD_UnaryKindAttr : PD_EnumAttr<PD_UnaryKind, "unary_kind">;
def PD_TriangleAttr : PD_EnumAttr<PD_Triangle, "triangle">;

// "2bw" is not an MLIR keyword, so schedules are written as strings.
def PD_ScheduleParameter : EnumParameter<PD_Schedule> {
  let parser = [{[&]() -> ::mlir::FailureOr<::mlir::pd::Schedule> {
    std::string name;
    ::llvm::SMLoc loc = $_parser.getCurrentLocation();
    if (::mlir::failed($_parser.parseKeywordOrString(&name)))
      return ::mlir::failure();
    if (auto value = ::mlir::pd::symbolizeSchedule(name))
      return *value;
    return $_parser.emitError(loc) << "unknown schedule '" << name
                                   << "' (2bw, flush or gpipe)";
  }()}];
  let printer = [{$_printer << '"' << ::mlir::pd::stringifySchedule($_self)
                            << '"'}];
}
def PD_ScheduleAttr : PD_EnumAttr<PD_Schedule, "schedule"> {
  let parameters = (ins PD_ScheduleParameter:$value);
}

def PD_BufferAttr : AttrDef<PD_Dialect, "Buffer"> {
  let mnemonic = "buffer";
  let summary = "The home of a tensor in a stage's arena: region and offset.";
  let description = [{
    Assigned by pd-allocate-buffers. `region` is one of `weights`, `grads`,
    `stash`, `workspace`, `comm` or `state`; `offset` is in bytes from the
    start of that region (for `stash`, from the start of the microbatch's
    slot).

    ```mlir
    %0 = pd.relu %x {pd.buffer = #pd.buffer<workspace, 256>} : tensor<4x8xf32>
    ```
  }];
  let parameters = (ins EnumParameter<PD_Region>:$region, "int64_t":$offset);
  let assemblyFormat = "`<` $region `,` $offset `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def PD_F32Tensor : RankedTensorOf<[F32]>;
def PD_IndexTensor : RankedTensorOf<[I64, I32]>;
def PD_AnyTensor : RankedTensorOf<[F32, I64, I32, I1]>;
def PD_BoolTensor : RankedTensorOf<[I1]>;
// Constants may also be f64: exporters compute scales in DOUBLE and cast
// them to FLOAT; the importer folds such chains, nothing else takes f64.
def PD_ConstantTensor : RankedTensorOf<[F32, F64, I64, I32, I1]>;

//===----------------------------------------------------------------------===//
// Parameters, inputs and constants
//===----------------------------------------------------------------------===//

def PD_ParamOp : PD_Op<"param", [Symbol]> {
  let summary = "Declares a trainable parameter (an ONNX initializer).";
  let description = [{
    A module-level symbol for one trainable tensor. Its initial value stays in
    the ONNX file (or its external data) named by `onnx_name`; the runtime
    loads it. Functions read it with `pd.param_ref`.

    `init_from` names the initializer holding the initial value when there is
    none named `onnx_name`: an eval-mode torch export keeps one of several
    equal initializers and copies it with `onnx_name = Identity(init_from)`
    for the others (every LayerNorm weight is all ones); each copy is its
    own parameter, and `--save-onnx` writes it as an initializer of its own.

    ```mlir
    pd.param @fc1.weight {onnx_name = "fc1.weight"} : tensor<16x8xf32>
    pd.param @ln2.weight {init_from = "ln1.weight", onnx_name = "ln2.weight"} : tensor<8xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<PD_F32Tensor>:$type,
                       StrAttr:$onnx_name,
                       OptionalAttr<StrAttr>:$init_from);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
}

def PD_StateOp : PD_Op<"state", [Symbol]> {
  let summary = "Declares a persistent tensor that is not trained.";
  let description = [{
    A module-level symbol for state that ops update in the forward pass but
    that gets no gradient and no optimizer step: the running mean and
    variance of a training-mode BatchNormalization. Its initial value is the
    ONNX initializer `onnx_name`; the stage that owns the updating op keeps
    it in its `state` region (one copy, not versioned under 2bw), and
    `--save-onnx` writes it back.

    ```mlir
    pd.state @bn1.running_mean {onnx_name = "bn1.running_mean"} : tensor<8xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<PD_F32Tensor>:$type,
                       StrAttr:$onnx_name);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
}

def PD_ParamRefOp : PD_Op<"param_ref",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads the current value of a parameter.";
  let description = [{
    Yields the weights of `param` that the current microbatch uses (under 2BW
    the version chosen by the runtime's version rule).

    ```mlir
    %w = pd.param_ref @fc1.weight : tensor<16x8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

def PD_InputOp : PD_Op<"input", [Pure]> {
  let summary = "Reads graph input `index` for the current microbatch.";
  let description = [{
    In a stage function: the rows of graph input `name` (the model's
    `index`-th input) that belong to the current microbatch. The stage that
    consumes an input reads it; inputs are not passed down the pipeline.

    ```mlir
    %x = pd.input 0 "x" : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins I64Attr:$index, StrAttr:$name);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "$index $name attr-dict `:` type($result)";
}

def PD_ConstantOp : PD_Op<"constant", [Pure, ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor.";
  let description = [{
    ```mlir
    %c = pd.constant dense<1.0> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs PD_ConstantTensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Tensor math
//===----------------------------------------------------------------------===//

def PD_MatMulOp : PD_Op<"matmul", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Matrix product alpha * op(lhs) * op(rhs) (+ bias) of 2-D tensors.";
  let description = [{
    `op(x)` is `x` or its transpose as `transpose_lhs`/`transpose_rhs` say.
    With a `bias` [N], every row of the [M, N] result gets it added: the
    kernel starts the product from the bias (a Linear layer's epilogue),
    which pd-fuse-matmul-bias forms from a matmul and the add that follows.
    ONNX MatMul and Gemm import to this op.

    ```mlir
    %y = pd.matmul %x, %w {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
    %z = pd.matmul %x, %w, %b {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$lhs, PD_F32Tensor:$rhs,
                       Optional<PD_F32Tensor>:$bias,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs,
                       DefaultValuedAttr<F32Attr, "1.0f">:$alpha);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $bias^)? attr-dict `:` type($lhs) `,` type($rhs)
    (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

class PD_BroadcastBinaryOp<string mnemonic, string math>
    : PD_Op<mnemonic, [Pure,
        DeclareOpInterfaceMethods<PD_GradientOpInterface>,
        DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Elementwise " # math # " with numpy broadcasting.";
  let description = [{
    The result shape is the numpy broadcast of the operand shapes.

    ```mlir
    %y = pd.}] # mnemonic # [{ %a, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$lhs, PD_F32Tensor:$rhs);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_AddOp : PD_BroadcastBinaryOp<"add", "addition">;
def PD_SubOp : PD_BroadcastBinaryOp<"sub", "subtraction">;
def PD_MulOp : PD_BroadcastBinaryOp<"mul", "multiplication">;

def PD_ReluOp : PD_Op<"relu", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Elementwise max(x, 0).";
  let description = [{
    ```mlir
    %y = pd.relu %x : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def PD_ReluGradOp : PD_Op<"relu_grad", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of relu: dy where the forward output y > 0, else 0.";
  let description = [{
    ```mlir
    %dx = pd.relu_grad %dy, %y : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$grad, PD_F32Tensor:$output);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
}

def PD_ScaleOp : PD_Op<"scale", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Elementwise multiplication by a constant: factor * x.";
  let description = [{
    ```mlir
    %y = pd.scale %x, 5.000000e-01 : tensor<16xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input, F32Attr:$factor);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input `,` $factor attr-dict `:` type($result)";
}

def PD_SumToOp : PD_Op<"sum_to", [Pure,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Sums a tensor over its broadcast dimensions down to a shape.";
  let description = [{
    The inverse of numpy broadcasting, used by gradients of broadcasting ops:
    the result shape must broadcast to the operand shape, and each result
    element is the sum of the operand elements that broadcast from it.

    ```mlir
    %db = pd.sum_to %dy : tensor<4x16xf32> -> tensor<16xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$input);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The op whose gradient rows this op sums to their last dimension,
    /// through reshapes that keep that dimension, when that op can compute
    /// the sum itself: a pd.gelu_grad without a bias gradient yet, or a
    /// pd.layer_norm_grad over the last dimension without an
    /// input_grad_sum yet (summing its input_grad). A bias gradient
    /// pd-fuse-bias-gradients folds into that op (the stage model predicts
    /// the same). Null otherwise.
    ::mlir::Operation *getSummedProducer();
  }];
}

def PD_SoftmaxCrossEntropyLossOp : PD_Op<"softmax_cross_entropy", [Pure,
    DeclareOpInterfaceMethods<PD_GradientOpInterface>,
    DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Softmax cross-entropy of logits [N, C] against labels [N].";
  let description = [{
    With a scalar result: loss = -(1/K) * sum_i log softmax(logits_i)[labels_i],
    over the K rows whose label is not `ignore_index` (ONNX
    SoftmaxCrossEntropyLoss with reduction "mean"). With a result [N]: each
    row's -log softmax(logits_i)[labels_i], 0 for ignored rows (reduction
    "none"; "sum" is its pd.reduce_sum).

    ```mlir
    %l = pd.softmax_cross_entropy %logits, %labels : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$logits, PD_IndexTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
}

def PD_SoftmaxCrossEntropyLossGradOp : PD_Op<"softmax_cross_entropy_grad",
    [Pure, DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Gradient of softmax_cross_entropy with respect to the logits.";
  let description = [{
    dlogits_i = dloss * (softmax(logits_i) - onehot(labels_i)) / K for the K
    rows whose label is not `ignore_index`, and 0 for the others; with a
    per-row gradient dloss [N] (reduction "none"), dloss_i replaces
    dloss / K.

    ```mlir
    %d = pd.softmax_cross_entropy_grad %dl, %logits, %labels : tensor<f32>, tensor<4x10xf32>, tensor<4xi64> -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$grad, PD_F32Tensor:$logits,
                       PD_IndexTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs PD_F32Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $labels attr-dict `:` type($grad) `,` type($logits) `,` type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Training ops (produced by pd-autodiff)
//===----------------------------------------------------------------------===//

def PD_SoftmaxCrossEntropyWithGradOp : PD_Op<"softmax_cross_entropy_with_grad",
    [Pure, DeclareOpInterfaceMethods<PD_CostOpInterface>]> {
  let summary = "Mean softmax cross-entropy and its seeded gradient in one pass.";
  let description = [{
    The loss of pd.softmax_cross_entropy (reduction "mean") and, from the
    same exponentials, the gradient the backward would compute from the
    training objective's seed (pd.grad_seed, read from the runtime):
    dlogits_i = seed * (softmax(logits_i) - onehot(labels_i)) / K, 0 for
    ignored rows. Formed by pd-fuse-cross-entropy-gradient when the loss
    is the objective; a forward op whose gradient result is stashed for
    the backward in place of the logits.

    ```mlir
    %l, %d = pd.softmax_cross_entropy_with_grad %logits, %labels : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>, tensor<4x10xf32>
    ```
  }];
  let arguments = (ins PD_F32Tensor:$logits, PD_IndexTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs 0DTensorOf<[F32]>:$loss, PD_F32Tensor:$dlogits);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->` type($loss) `,` type($dlogits)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The value whose buffer the gradient may share, so that the kernel
    /// writes it over the logits (pd-allocate-buffers and the planner's
    /// stage model; getInPlaceOperandRoot of the logits).
    ::mlir::Value getInPlaceLogits();
  }];
}

def PD_GradSeedOp : PD_Op<"grad_seed", [Pure]> {
  let summary = "The gradient of the training objective with respect to the loss.";
  let description = [{
    The runtime's scale of one microbatch's loss in the global batch's mean:
    1 / (microbatches * replicas).

    ```mlir
    %s = pd.grad_seed : tensor<f32>
    ```
  }];
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def PD_AccumulateGradOp : PD_Op<"accumulate_grad",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Adds a gradient into a parameter's gradient accumulator.";
  let description = [{
    ```mlir
    pd.accumulate_grad @fc1.weight, %dw : tensor<16x8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, PD_F32Tensor:$grad);
  let assemblyFormat = "$param `,` $grad attr-dict `:` type($grad)";
  let extraClassDeclaration = [{
    /// The op that can compute the gradient straight into the accumulator
    /// (pd-accumulate-in-place; the planner's stage model asks the same):
    /// its producer when this op is its only user and it is a pd.matmul
    /// without a bias (C += A B) or a pd.gather_grad (rows added into the
    /// accumulator as it is); null otherwise.
    ::mlir::Operation *getInPlaceProducer();
  }];
}

//===----------------------------------------------------------------------===//
// Schedule-level ops (produced by pd-outline-stages)
//===----------------------------------------------------------------------===//

def PD_SendOp : PD_Op<"send"> {
  let summary = "Sends a tensor to another pipeline stage.";
  let description = [{
    Non-blocking for the sender; the runtime completes the send before the
    buffer is written again. Channel ids are unique per stage pair and
    direction, and messages on a channel arrive in order.

    ```mlir
    pd.send %h to 1 channel 0 : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins PD_AnyTensor:$value, I64Attr:$peer, I64Attr:$channel);
  let assemblyFormat = "$value `to` $peer `channel` $channel attr-dict `:` type($value)";
}

def PD_RecvOp : PD_Op<"recv"> {
  let summary = "Receives a tensor from another pipeline stage.";
  let description = [{
    ```mlir
    %h = pd.recv from 0 channel 0 : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins I64Attr:$peer, I64Attr:$channel);
  let results = (outs PD_AnyTensor:$result);
  let assemblyFormat = "`from` $peer `channel` $channel attr-dict `:` type($result)";
}

def PD_ProfileMarkOp : PD_Op<"profile_mark"> {
  let summary = "Starts timing op `id` of a profiling stage (-1: the end).";
  let description = [{
    Inserted by pd-insert-profile-marks before every costed op of a
    profiling stage (pdc --profile), or before every op that does work in
    the stages of a plan compiled with pdc --instrument-ops. With
    `run --profile-ops`, the runtime adds the time from one mark to the
    next to the marked op's total.

    ```mlir
    pd.profile_mark 12
    ```
  }];
  let arguments = (ins I64Attr:$id);
  let assemblyFormat = "$id attr-dict";
}

def PD_InterleaveBeginOp : PD_Op<"interleave_begin"> {
  let summary = "Starts a group of batched kernels run entry by entry.";
  let description = [{
    Inserted by pd-interleave-batched-ops before a run of batched GEMMs
    and attention softmaxes over the same batch entries; the runtime
    records their calls until `pd.interleave_end`, then runs them batch
    entry by batch entry (pdrt_interleave_begin).

    ```mlir
    pd.interleave_begin
    %dp = pd.batch_matmul ...
    %ds = pd.masked_softmax_grad %dp, %p ...
    pd.interleave_end
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def PD_InterleaveEndOp : PD_Op<"interleave_end"> {
  let summary = "Runs the group since `pd.interleave_begin` entry by entry.";
  let assemblyFormat = "attr-dict";
}

def PD_ReportLossOp : PD_Op<"report_loss"> {
  let summary = "Reports the microbatch loss to the runtime's loss log.";
  let description = [{
    ```mlir
    pd.report_loss %l : tensor<f32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$loss);
  let assemblyFormat = "$loss attr-dict `:` type($loss)";
}

//===----------------------------------------------------------------------===//
// Op families, one file each
//===----------------------------------------------------------------------===//

include "dialects/PD/IR/PDOpsTensor.td"
include "dialects/PD/IR/PDOpsNN.td"
include "dialects/PD/IR/PDOpsConv.td"

#endif // PD_OPS
