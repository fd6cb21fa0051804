// GEMM kernels: C += op(A) * op(B) on one dtype, the inner product of a contraction
// task (plan/contract_op.hpp).
//
//   kernels::GemmKernel gemm = kernels::GetGemmKernel(float64);   // dispatch once
//   gemm({.m = 2, .n = 3, .k = 4}, a, b, c);   // c (2 x 3) += a (2 x 4) * b (4 x 3)
//
// All matrices are dense and row-major: A is m x k (k x m when trans_a), B is k x n
// (n x k when trans_b), C is m x n; none alias. float32 and float64 call OpenBLAS
// (cblas_sgemm / cblas_dgemm), accumulating in their own precision; OpenBLAS is set to
// one thread per call, since the executor already runs tasks in parallel. Integers
// accumulate with wrap-around modulo 2^bits, as numpy's matmul does (no undefined
// behaviour); bool computes C |= A and B (numpy: logical or of logical ands).
// Kernels are thread-safe.
#pragma once

#include <cstddef>

#include "tessera/core/dtype.hpp"
#include "tessera/core/shape.hpp"

namespace tessera::kernels {

struct GemmShape {
  Index m = 0;
  Index n = 0;
  Index k = 0;
  bool trans_a = false;
  bool trans_b = false;
};

using GemmKernel = void (*)(const GemmShape& shape, const std::byte* a, const std::byte* b,
                            std::byte* c);

// The kernel for operands and result of `dtype` (every Tessera dtype has one).
GemmKernel GetGemmKernel(DType dtype);

}  // namespace tessera::kernels
