#include "vector_math.hpp"

#include <cstdlib>
#include <string>

#include "vector_math_isa.hpp"

namespace tessera::kernels {
namespace {

enum class Isa { kNone, kAvx2, kAvx512 };

Isa CpuIsa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
  return Isa::kNone;
}

// The CPU's, lowered by TESSERA_VECTOR_MATH (an unknown value is ignored).
Isa ChosenIsa() {
  static const Isa chosen = [] {
    const Isa cpu = CpuIsa();
    const char* asked = std::getenv("TESSERA_VECTOR_MATH");
    if (asked == nullptr) return cpu;
    const std::string name = asked;
    const Isa wanted = name == "none"      ? Isa::kNone
                       : name == "avx2"    ? Isa::kAvx2
                       : name == "avx512f" ? Isa::kAvx512
                                           : cpu;
    return static_cast<int>(wanted) < static_cast<int>(cpu) ? wanted : cpu;
  }();
  return chosen;
}

bool Covered(DType input) { return input == float32 || input == float64; }

}  // namespace

UnaryKernel VectorUnaryKernel(UnaryOp op, DType input) {
  if (!Covered(input)) return nullptr;
  switch (ChosenIsa()) {
    case Isa::kAvx512:
      return vector_detail::Avx512Unary(op, input == float64);
    case Isa::kAvx2:
      return vector_detail::Avx2Unary(op, input == float64);
    case Isa::kNone:
      break;
  }
  return nullptr;
}

BinaryKernel VectorBinaryKernel(BinaryOp op, DType input) {
  if (!Covered(input)) return nullptr;
  switch (ChosenIsa()) {
    case Isa::kAvx512:
      return vector_detail::Avx512Binary(op, input == float64);
    case Isa::kAvx2:
      return vector_detail::Avx2Binary(op, input == float64);
    case Isa::kNone:
      break;
  }
  return nullptr;
}

CastKernel VectorCastKernel(DType from, DType to) {
  switch (ChosenIsa()) {
    case Isa::kAvx512:
      return vector_detail::Avx512Cast(from, to);
    case Isa::kAvx2:
      return vector_detail::Avx2Cast(from, to);
    case Isa::kNone:
      break;
  }
  return nullptr;
}

std::string_view VectorMathIsa() {
  switch (ChosenIsa()) {
    case Isa::kAvx512:
      return "avx512f";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kNone:
      break;
  }
  return "none";
}

}  // namespace tessera::kernels
