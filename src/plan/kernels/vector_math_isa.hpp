// The per-instruction-set tables behind vector_math.hpp. Each set's kernels are defined
// in a file compiled for it alone (vector_math_avx2.cpp with -mavx2 -mfma,
// vector_math_avx512.cpp with -mavx512f -mavx512dq) and may only run on a CPU that has
// it: SupportedInstructionSets() lists those this CPU has. Internal to kernels/.
#pragma once

#include <string_view>
#include <vector>

#include "elementwise_kernels.hpp"

namespace tessera::kernels::vector_detail {

// nullptr where an op or a pair is not covered; `is_double`: float64 (else float32).
UnaryKernel Avx2Unary(UnaryOp op, bool is_double);
BinaryKernel Avx2Binary(BinaryOp op, bool is_double);
CastKernel Avx2Cast(DType from, DType to);
UnaryKernel Avx512Unary(UnaryOp op, bool is_double);
BinaryKernel Avx512Binary(BinaryOp op, bool is_double);
CastKernel Avx512Cast(DType from, DType to);

struct InstructionSet {
  std::string_view name;  // as TESSERA_VECTOR_MATH names it: "avx2", "avx512f"
  UnaryKernel (*unary)(UnaryOp op, bool is_double);
  BinaryKernel (*binary)(BinaryOp op, bool is_double);
  CastKernel (*cast)(DType from, DType to);
};

// The instruction sets this CPU has that vector math has kernels for, narrowest first
// (asked of the CPU once).
const std::vector<InstructionSet>& SupportedInstructionSets();

}  // namespace tessera::kernels::vector_detail
