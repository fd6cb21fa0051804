// Elementwise kernels: the per-dtype loops that fused elementwise chains run on tiles.
//
//   auto sig = kernels::ResolveBinary(kernels::BinaryOp::kAdd, int8, uint8);
//   // sig.input == int16 (both operands are cast to it), sig.output == int16
//   kernels::BinaryKernel add = kernels::GetBinaryKernel(kernels::BinaryOp::kAdd, sig.input);
//   add(a_tile, b_tile, out_tile, n);            // n elements, no aliasing except out == a
//
// Semantics follow numpy (the independent truth the tests compare against), with no
// undefined behaviour on any input:
// - integer add/subtract/multiply/negative/abs wrap modulo 2^bits (as numpy);
// - integer floor_divide/remainder by zero give 0 (numpy: 0 plus a warning);
//   floor_divide/remainder round toward -inf (Python/numpy), INT_MIN // -1 wraps;
// - divide is true division: integer operands are computed in float64 (numpy);
// - pow on integers with a negative exponent throws InvalidArgument, as numpy raises
//   ("Integers to negative integer powers are not allowed"); 0**0 == 1;
// - exp, log, sqrt, sin, ... on integer/bool inputs compute in FloatingResultType;
// - comparisons and logical ops produce bool; bitwise ops require bool or integers;
// - shifts by a count outside [0, bits) give 0 (or -1 for right shift of a negative);
// - casts (see GetCastKernel) from float to integer: NaN -> 0, values outside the
//   target range saturate to its min/max (numpy's result is platform-defined there);
//   anything nonzero (NaN included) -> true for bool.
// Kernels are plain loops over restrict pointers that the compiler vectorizes; `out`
// may alias the first input (in-place evaluation of a chain) but not partially.
#pragma once

#include <cstdint>
#include <string_view>

#include "tessera/core/dtype.hpp"

namespace tessera::kernels {

// The ops of elementwise_ops.def by arity, in its order: UnaryOp::kNegative, ...,
// BinaryOp::kAdd, ...; their names, aliases and type rules: elementwise_table.hpp.
enum class UnaryOp : std::uint8_t {
#define TESSERA_UNARY_OP(name, Kernel, aliases, rule, complex, doc) k##Kernel,
#include "tessera/plan/internal/elementwise_ops.def"
};
enum class BinaryOp : std::uint8_t {
#define TESSERA_BINARY_OP(name, Kernel, aliases, rule, complex, doc) k##Kernel,
#include "tessera/plan/internal/elementwise_ops.def"
};

// The array API name of an op: "negative", "add", "bitwise_left_shift", ...
std::string_view Name(UnaryOp op);
std::string_view Name(BinaryOp op);

// What an op computes in: both operands are cast to `input`, the result has `output`.
struct Signature {
  DType input;
  DType output;
};
// Throw InvalidArgument naming the op and the dtype(s) when the op is not defined for
// them (bitwise ops on floats, logical ops are defined for every dtype via != 0, ...).
Signature ResolveUnary(UnaryOp op, DType operand);
Signature ResolveBinary(BinaryOp op, DType a, DType b);

using UnaryKernel = void (*)(const void* in, void* out, std::int64_t n);
using BinaryKernel = void (*)(const void* a, const void* b, void* out, std::int64_t n);
using WhereKernel = void (*)(const bool* condition, const void* a, const void* b, void* out,
                             std::int64_t n);
using CastKernel = void (*)(const void* in, void* out, std::int64_t n);

// Kernels for a resolved signature's `input` dtype. Throw InvalidArgument as Resolve*.
UnaryKernel GetUnaryKernel(UnaryOp op, DType input);
BinaryKernel GetBinaryKernel(BinaryOp op, DType input);
// out[i] = condition[i] ? a[i] : b[i], all of `dtype`.
WhereKernel GetWhereKernel(DType dtype);
// numpy's astype(..., casting="unsafe") with the float->int rules above; from == to
// is a copy.
CastKernel GetCastKernel(DType from, DType to);

}  // namespace tessera::kernels
