// The table of elementwise ops: each op's name, aliases, arity and type rule, made from
// the rows of elementwise_ops.def (the one list of them), for code that looks ops up
// by name: the calculator's functions, the plan's node builders, tests walking every op.
//
//   for (const kernels::ElementwiseOp& op : kernels::ElementwiseOps()) { ... }
//   const kernels::ElementwiseOp* atan2 = kernels::FindElementwiseOp("arctan2");  // alias
//   atan2->arity;                                   // 2
//   kernels::TakesFloats(atan2->rule);              // true
//   atan2->complex_rule;                            // ComplexRule::kRealOnly
//
// Code that needs identifiers (enumerators, kernel structs, C++ functions) includes
// elementwise_ops.def itself with its own macros; everything else reads this table.
// All of it is constexpr data: thread-safe, nothing to initialize.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace tessera::kernels {

// Which dtypes an op takes, what its operands compute in and what it gives (numpy's
// rules; "promote" is ResultType of the operands, see core/type_promotion.hpp).
enum class TypeRule : std::uint8_t {
  kPromote,         // every dtype; the result has the promoted dtype (add, abs, floor)
  kPromoteNumbers,  // as kPromote, but not bool (negative, sign, subtract)
  kBoolAsInt8,      // as kPromote; bool computes in int8, numpy having no bool loop
                    // (square, floor_divide, remainder, pow)
  kFloat,           // each operand to FloatingResultType, then promote: a float result
                    // for every dtype (sqrt, exp, atan2)
  kTrueDivide,      // floats keep their dtype, everything else computes in float64
  kBoolResult,      // every dtype, operands promote, the result is bool (less, isnan)
  kBitwise,         // bool and integers only (bitwise_and, bitwise_invert)
  kShift,           // integers only; bool computes in int8 (bitwise_left_shift)
};

// What an op does with complex64 and complex128 operands (the standard's table of which
// functions take "numeric" and which "real-valued" dtypes).
enum class ComplexRule : std::uint8_t {
  kRealOnly,       // undefined for complex dtypes (floor, maximum, less, atan2)
  kComplex,        // takes them; the result has the operand's complex dtype, or bool
                   // where the type rule gives bool (exp, add, equal, isnan)
  kComplexToReal,  // takes them; the result is the real dtype of their components
                   // (abs, real, imag: complex64 -> float32)
};

constexpr bool TakesBool(TypeRule rule) { return rule != TypeRule::kPromoteNumbers; }
constexpr bool TakesFloats(TypeRule rule) {
  return rule != TypeRule::kBitwise && rule != TypeRule::kShift;
}
// Whether the result is bool whatever the operands (for kPromote and kBitwise it is
// bool when they are).
constexpr bool GivesBool(TypeRule rule) { return rule == TypeRule::kBoolResult; }
// Whether the result is a float whatever the operands.
constexpr bool GivesFloat(TypeRule rule) {
  return rule == TypeRule::kFloat || rule == TypeRule::kTrueDivide;
}

struct ElementwiseOp {
  std::string_view name;     // the array API name: "atan2"
  std::string_view aliases;  // numpy's other names, space-separated: "arctan2"; or ""
  int arity;                 // 1 or 2
  TypeRule rule;
  ComplexRule complex_rule;
  std::string_view doc;  // what it computes, one sentence: "The sine of x (radians)."
};

namespace detail {
// clang-format off
inline constexpr ElementwiseOp kElementwiseOps[] = {
#define TESSERA_UNARY_OP(name, Kernel, aliases, rule, complex, doc) \
  {#name, aliases, 1, TypeRule::rule, ComplexRule::complex, doc},
#define TESSERA_BINARY_OP(name, Kernel, aliases, rule, complex, doc) \
  {#name, aliases, 2, TypeRule::rule, ComplexRule::complex, doc},
#include "tessera/plan/internal/elementwise_ops.def"
};
// clang-format on
}  // namespace detail

// Every op, unary ones first, each arity in its enum's order (kernels::UnaryOp, BinaryOp).
constexpr std::span<const ElementwiseOp> ElementwiseOps() { return detail::kElementwiseOps; }

// Calls fn(alias) for each of op's aliases, in the order of its row.
template <class Fn>
constexpr void ForEachAlias(const ElementwiseOp& op, Fn&& fn) {
  std::string_view rest = op.aliases;
  while (!rest.empty()) {
    const std::size_t end = rest.find(' ');
    if (end != 0) fn(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
}

// The op called `name` or having it as an alias; nullptr when there is none.
constexpr const ElementwiseOp* FindElementwiseOp(std::string_view name) {
  for (const ElementwiseOp& op : ElementwiseOps()) {
    bool found = op.name == name;
    ForEachAlias(op, [&](std::string_view alias) { found = found || alias == name; });
    if (found) return &op;
  }
  return nullptr;
}

}  // namespace tessera::kernels
