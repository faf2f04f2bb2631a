//===- PassesStages.td - Stages, buffers, lowering ---------*- tablegen -*-===//
//
// Part of Passes.td (its comment: one .cpp and one test per pass).
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_STAGES
#define PD_PASSES_STAGES

include "mlir/Pass/PassBase.td"

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

#endif // PD_PASSES_STAGES
