//===- PDEnums.td - Enumerations of the pd dialect ---------*- tablegen -*-===//
//
// The enumerated data passes, the driver and the runtime share: arena
// regions, stage-function phases, pipeline schedules, optimizers, the GELU
// form and the unary math kinds. Each is an I32 enum with stringify/symbolize
// (generated into PDEnums.h.inc); PDOps.td wraps them in attributes.
//
//===----------------------------------------------------------------------===//

#ifndef PD_ENUMS
#define PD_ENUMS

include "mlir/IR/EnumAttr.td"

class PD_I32Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::pd";
  // The dialect's EnumAttr wrappers (PDOps.td) are the attributes.
  let genSpecializedAttr = 0;
}

// The regions of a stage's arena (runtime/include/pdrt/pdrt.h allocates
// them). A tensor's #pd.buffer names one.
def PD_Region : PD_I32Enum<"ArenaRegion", "a region of a stage's arena", [
  I32EnumAttrCase<"Weights", 0, "weights">,
  I32EnumAttrCase<"Grads", 1, "grads">,
  I32EnumAttrCase<"Stash", 2, "stash">,
  I32EnumAttrCase<"Workspace", 3, "workspace">,
  I32EnumAttrCase<"Comm", 4, "comm">,
  I32EnumAttrCase<"State", 5, "state">
]>;

// Which half of a stage's work a stage function is.
def PD_Phase : PD_I32Enum<"Phase", "a stage function's phase", [
  I32EnumAttrCase<"Forward", 0, "forward">,
  I32EnumAttrCase<"Backward", 1, "backward">
]>;

// The pipeline schedules (DESIGN.md section 3).
def PD_Schedule : PD_I32Enum<"Schedule", "a pipeline schedule", [
  I32EnumAttrCase<"TwoBW", 0, "2bw">,
  I32EnumAttrCase<"Flush", 1, "flush">,
  I32EnumAttrCase<"GPipe", 2, "gpipe">
]>;

// The optimizers the runtime implements; each sets how much state a
// parameter carries (momentum: one tensor, adam/adamw: two).
def PD_Optimizer : PD_I32Enum<"Optimizer", "an optimizer", [
  I32EnumAttrCase<"SGD", 0, "sgd">,
  I32EnumAttrCase<"Momentum", 1, "momentum">,
  I32EnumAttrCase<"Adam", 2, "adam">,
  I32EnumAttrCase<"AdamW", 3, "adamw">
]>;

// GELU's two forms (ONNX Gelu's `approximate`).
def PD_GeluApproximation : PD_I32Enum<"GeluApproximation",
    "the form of GELU", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Tanh", 1, "tanh">
]>;

// What pd-mark-causal-gemms proved of a square matrix of pd.batch_matmul
// under a causal mask, numbered as the runtime's pdrt_triangle
// (runtime/include/pdrt/pdrt_codes.h): the kernel skips the blocks it
// names. result_lower: only C's lower triangle (j <= i) is read, the rest
// may hold anything; lhs_lower: op(A)[i, k] = 0 for k > i; lhs_upper:
// op(A)[i, k] = 0 for k < i.
def PD_Triangle : PD_I32Enum<"Triangle", "a causal GEMM's skipped triangle", [
  I32EnumAttrCase<"ResultLower", 1, "result_lower">,
  I32EnumAttrCase<"LhsLower", 2, "lhs_lower">,
  I32EnumAttrCase<"LhsUpper", 3, "lhs_upper">
]>;

// The elementwise unary math functions, numbered as the runtime's
// pdrt_unary_kind (runtime/include/pdrt/pdrt_codes.h); the lowering checks
// the two tables agree at build time.
def PD_UnaryKind : PD_I32Enum<"UnaryKind", "an elementwise unary function", [
  I32EnumAttrCase<"Neg", 0, "neg">,
  I32EnumAttrCase<"Sqrt", 1, "sqrt">,
  I32EnumAttrCase<"Exp", 2, "exp">,
  I32EnumAttrCase<"Log", 3, "log">,
  I32EnumAttrCase<"Erf", 4, "erf">,
  I32EnumAttrCase<"Tanh", 5, "tanh">,
  I32EnumAttrCase<"Sigmoid", 6, "sigmoid">,
  I32EnumAttrCase<"Reciprocal", 7, "reciprocal">,
  I32EnumAttrCase<"Pow", 8, "pow">,
  I32EnumAttrCase<"Cos", 9, "cos">,
  I32EnumAttrCase<"Sin", 10, "sin">,
  I32EnumAttrCase<"Silu", 11, "silu">
]>;

#endif // PD_ENUMS
