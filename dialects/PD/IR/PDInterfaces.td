//===- PDInterfaces.td - Interfaces of the pd dialect ------*- tablegen -*-===//
//
// Op interfaces that drive pdc's passes: GradientOpInterface (each op builds
// its own vector-Jacobian product for pd-autodiff) and CostOpInterface (each
// op reports its FLOPs and bytes for stage partitioning and the planner).
//
//===----------------------------------------------------------------------===//

#ifndef PD_INTERFACES
#define PD_INTERFACES

include "mlir/IR/OpBase.td"

def PD_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let description = [{
    An op that can be differentiated in reverse mode. Given the gradients of
    its results (a null Value where no gradient flows), the op builds the
    vector-Jacobian product with `builder` and appends one gradient per
    operand to `operandGrads` (a null Value for operands that are not
    differentiable, such as integer labels).
  }];
  let cppNamespace = "::mlir::pd";
  let methods = [
    InterfaceMethod<
      "Builds the gradients of the operands from the gradients of the results.",
      "::mlir::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

def PD_CostOpInterface : OpInterface<"CostOpInterface"> {
  let description = [{
    An op with a static cost estimate: floating-point operations and bytes
    moved for one execution at its static shapes. Stage partitioning balances
    the sum of forward and backward costs across stages.
  }];
  let cppNamespace = "::mlir::pd";
  let methods = [
    InterfaceMethod<"Returns the floating-point operations of one execution.",
      "int64_t", "getFlops", (ins)>,
    InterfaceMethod<"Returns the bytes read and written by one execution.",
      "int64_t", "getBytes", (ins), [{}], [{
        int64_t bytes = 0;
        for (::mlir::Value v : $_op->getOperands())
          bytes += ::mlir::pd::getTensorBytes(v.getType());
        for (::mlir::Value v : $_op->getResults())
          bytes += ::mlir::pd::getTensorBytes(v.getType());
        return bytes;
      }]>
  ];
}

#endif // PD_INTERFACES
