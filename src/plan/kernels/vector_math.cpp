#include "vector_math.hpp"

#include <cstdlib>
#include <string>
#include <type_traits>

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

// One element through a kernel just looked up: the pages of SLEEF's code and tables it
// runs are faulted in now (at a node's construction), not in the first task that runs
// it, where they would count as that task's unaccounted memory.
alignas(64) thread_local double warm_in[2] = {1.0, 1.0};
alignas(64) thread_local double warm_out[2] = {};

template <class Kernel>
Kernel Warmed(Kernel kernel) {
  if (kernel == nullptr) return kernel;
  if constexpr (std::is_same_v<Kernel, BinaryKernel>) {
    kernel(warm_in, warm_in, warm_out, 1);
  } else {
    kernel(warm_in, warm_out, 1);
  }
  return kernel;
}

}  // namespace

UnaryKernel VectorUnaryKernel(UnaryOp op, DType input) {
  if (!Covered(input)) return nullptr;
  switch (ChosenIsa()) {
    case Isa::kAvx512:
      return Warmed(vector_detail::Avx512Unary(op, input == float64));
    case Isa::kAvx2:
      return Warmed(vector_detail::Avx2Unary(op, input == float64));
    case Isa::kNone:
      break;
  }
  return nullptr;
}

BinaryKernel VectorBinaryKernel(BinaryOp op, DType input) {
  if (!Covered(input)) return nullptr;
  switch (ChosenIsa()) {
    case Isa::kAvx512:
      return Warmed(vector_detail::Avx512Binary(op, input == float64));
    case Isa::kAvx2:
      return Warmed(vector_detail::Avx2Binary(op, input == float64));
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
