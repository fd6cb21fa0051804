#include "vector_math.hpp"

#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "vector_math_isa.hpp"

namespace tessera::kernels {
namespace vector_detail {

const std::vector<InstructionSet>& SupportedInstructionSets() {
  static const std::vector<InstructionSet> sets = [] {
    std::vector<InstructionSet> found;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      found.push_back({"avx2", Avx2Unary, Avx2Binary, Avx2Cast});
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
      found.push_back({"avx512f", Avx512Unary, Avx512Binary, Avx512Cast});
    }
    return found;
  }();
  return sets;
}

}  // namespace vector_detail

namespace {

using vector_detail::InstructionSet;

// The widest set the CPU has, or the one TESSERA_VECTOR_MATH names when the CPU has it
// ("none": null; an unknown name or a wider set than the CPU has: the widest).
const InstructionSet* Chosen() {
  static const InstructionSet* const chosen = []() -> const InstructionSet* {
    const std::vector<InstructionSet>& sets = vector_detail::SupportedInstructionSets();
    const InstructionSet* widest = sets.empty() ? nullptr : &sets.back();
    const char* asked = std::getenv("TESSERA_VECTOR_MATH");
    if (asked == nullptr) return widest;
    if (std::string_view(asked) == "none") return nullptr;
    for (const InstructionSet& set : sets) {
      if (set.name == asked) return &set;
    }
    return widest;
  }();
  return chosen;
}

bool Covered(DType input) { return input == float32 || input == float64; }

// One element through a kernel just looked up: the pages of SLEEF's code and tables it
// runs are faulted in now (at a node's construction), not in the first task that runs
// it, where they would count as that task's unaccounted memory.
template <class Kernel>
Kernel Warmed(Kernel kernel) {
  alignas(64) double in[2] = {1.0, 1.0};
  alignas(64) double out[2] = {};
  if (kernel == nullptr) return kernel;
  if constexpr (std::is_same_v<Kernel, BinaryKernel>) {
    kernel(in, in, out, 1);
  } else {
    kernel(in, out, 1);
  }
  return kernel;
}

}  // namespace

UnaryKernel VectorUnaryKernel(UnaryOp op, DType input) {
  const InstructionSet* set = Chosen();
  return set != nullptr && Covered(input) ? Warmed(set->unary(op, input == float64)) : nullptr;
}

BinaryKernel VectorBinaryKernel(BinaryOp op, DType input) {
  const InstructionSet* set = Chosen();
  return set != nullptr && Covered(input) ? Warmed(set->binary(op, input == float64)) : nullptr;
}

CastKernel VectorCastKernel(DType from, DType to) {
  const InstructionSet* set = Chosen();
  return set != nullptr ? set->cast(from, to) : nullptr;
}

std::string_view VectorMathIsa() {
  const InstructionSet* set = Chosen();
  return set != nullptr ? set->name : "none";
}

}  // namespace tessera::kernels
