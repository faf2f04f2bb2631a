//===- PDOpsNN.td - pd nn ops -----------------------*- tablegen -*-===//
//
// The neural-network math: unary math, reductions, softmax, layer norm, dropout.
// Included by PDOps.td; gradients in PDGradientsNN.cpp, costs and
// verifiers in PDOpsNN.cpp.
//
//===----------------------------------------------------------------------===//
