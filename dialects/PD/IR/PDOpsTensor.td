//===- PDOpsTensor.td - pd tensor ops -----------------------*- tablegen -*-===//
//
// The tensor and shape ops: transpose, reshape, slice, concat, gather, where, batched matmul, ....
// Included by PDOps.td; gradients in PDGradientsTensor.cpp, costs and
// verifiers in PDOpsTensor.cpp.
//
//===----------------------------------------------------------------------===//
