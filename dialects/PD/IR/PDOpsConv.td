//===- PDOpsConv.td - pd conv ops -----------------------*- tablegen -*-===//
//
// The convolutional ops: conv, batch norm, pooling.
// Included by PDOps.td; gradients in PDGradientsConv.cpp, costs and
// verifiers in PDOpsConv.cpp.
//
//===----------------------------------------------------------------------===//
