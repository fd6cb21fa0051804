// The per-instruction-set tables behind vector_math.hpp: each is defined in a file
// compiled for its instruction set (vector_math_avx2.cpp with -mavx2 -mfma,
// vector_math_avx512.cpp with -mavx512f -mavx512dq) and may only be called on a CPU that has it.
// Internal to kernels/.
#pragma once

#include "elementwise_kernels.hpp"

namespace tessera::kernels::vector_detail {

// nullptr when the op is not covered; `is_double`: float64 (else float32).
UnaryKernel Avx2Unary(UnaryOp op, bool is_double);
BinaryKernel Avx2Binary(BinaryOp op, bool is_double);
UnaryKernel Avx512Unary(UnaryOp op, bool is_double);
BinaryKernel Avx512Binary(BinaryOp op, bool is_double);
// nullptr when the pair is not covered.
CastKernel Avx2Cast(DType from, DType to);
CastKernel Avx512Cast(DType from, DType to);

}  // namespace tessera::kernels::vector_detail
