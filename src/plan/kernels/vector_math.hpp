// Vector math: elementwise kernels on whole SIMD registers (SLEEF, libsleef-dev), for
// the CPU the process runs on.
//
//   if (UnaryKernel exp = VectorUnaryKernel(UnaryOp::kExp, float32)) exp(in, out, n);
//
// GetUnaryKernel, GetBinaryKernel and GetCastKernel ask here first and fall back to
// their scalar loops. The instruction set is chosen once, at run time, from what the CPU
// reports: AVX-512F with DQ, else AVX2 with FMA, else none. The build targets baseline
// x86-64, and each instruction set's kernels run only on a CPU that has it.
// TESSERA_VECTOR_MATH=none|avx2|avx512f lowers the choice (never above what the CPU
// has), for comparisons and tests.
//
// Covered: float32 and float64 inputs of exp, expm1, log, log1p, log2, log10, sin, cos,
// tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh (SLEEF's 1.0-ulp
// functions, which keep C99's special values), sqrt (the CPU's correctly rounded
// instruction), pow and atan2 (1.0 ulp), hypot (0.5 ulp), and add, subtract, multiply
// and divide on the full register width (bit for bit the scalar operators). numpy's own
// SIMD versions are documented within 4 ulp; the tests hold these within 5 ulp of
// numpy's results (3 at most, measured) and 2 of glibc's. A lane's result depends on its
// value alone, never on its neighbours in the register, so results do not change with
// chunking (vector_math_loops.hpp: where SLEEF would branch on the whole register, glibc
// answers). Each kernel runs once, on one element, when it is looked up (a node's
// construction), so the library pages it needs are in before any task runs it.
// Thread-safe.
#pragma once

#include <string_view>

#include "elementwise_kernels.hpp"

namespace tessera::kernels {

// nullptr when (op, input) is not covered or the CPU has no vector unit used here.
UnaryKernel VectorUnaryKernel(UnaryOp op, DType input);
BinaryKernel VectorBinaryKernel(BinaryOp op, DType input);
// astype from float32 to int32 (AVX2 and AVX-512) and from float64 to int32 and int64
// (AVX-512), with GetCastKernel's rules: NaN -> 0, saturation at the integer range; bit
// for bit the scalar loop's results. nullptr for other pairs.
CastKernel VectorCastKernel(DType from, DType to);

// The instruction set the vector kernels use in this process: "avx512f", "avx2" or
// "none".
std::string_view VectorMathIsa();

}  // namespace tessera::kernels
