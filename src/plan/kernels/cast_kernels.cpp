// Data movement kernels: astype (GetCastKernel) and where (GetWhereKernel).
#include <cstdint>

#include "elementwise_kernels.hpp"
#include "tessera/core/scalar.hpp"
#include "vector_math.hpp"

namespace tessera::kernels {
namespace {

template <class From, class To>
void CastLoop(const void* in, void* out, std::int64_t n) {
  const From* __restrict source = static_cast<const From*>(in);
  To* __restrict target = static_cast<To*>(out);
  for (std::int64_t i = 0; i < n; ++i) target[i] = CastElement<To>(source[i]);
}

// `where` moves bits: one loop per item size serves every dtype of that size.
template <class Bits>
void WhereLoop(const bool* condition, const void* a, const void* b, void* out, std::int64_t n) {
  // bool is one byte holding 0 or 1; reading it as bytes lets the loop widen it.
  const auto* __restrict take_a = reinterpret_cast<const std::uint8_t*>(condition);
  const Bits* __restrict left = static_cast<const Bits*>(a);
  const Bits* __restrict right = static_cast<const Bits*>(b);
  Bits* __restrict target = static_cast<Bits*>(out);
  for (std::int64_t i = 0; i < n; ++i) {
    // A bit blend rather than a branch: all ones where the condition holds. The compiler
    // vectorizes it for every width (it does not widen a bool into a select mask).
    const auto mask = static_cast<Bits>(Bits{0} - static_cast<Bits>(take_a[i]));
    target[i] = static_cast<Bits>((left[i] & mask) | (right[i] & static_cast<Bits>(~mask)));
  }
}

// complex128's 16 bytes: the blend of WhereLoop on each 8-byte half.
void WhereLoop16(const bool* condition, const void* a, const void* b, void* out, std::int64_t n) {
  const auto* __restrict take_a = reinterpret_cast<const std::uint8_t*>(condition);
  const auto* __restrict left = static_cast<const std::uint64_t*>(a);
  const auto* __restrict right = static_cast<const std::uint64_t*>(b);
  auto* __restrict target = static_cast<std::uint64_t*>(out);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t mask = std::uint64_t{0} - static_cast<std::uint64_t>(take_a[i]);
    for (std::int64_t half = 2 * i; half < 2 * i + 2; ++half) {
      target[half] = (left[half] & mask) | (right[half] & ~mask);
    }
  }
}

}  // namespace

CastKernel GetCastKernel(DType from, DType to) {
  if (const CastKernel vector = VectorCastKernel(from, to)) return vector;
  return VisitDType(from, [&](auto from_tag) {
    return VisitDType(to, [](auto to_tag) -> CastKernel {
      return &CastLoop<typename decltype(from_tag)::type, typename decltype(to_tag)::type>;
    });
  });
}

WhereKernel GetWhereKernel(DType dtype) {
  switch (dtype.itemsize()) {
    case 1:
      return &WhereLoop<std::uint8_t>;
    case 2:
      return &WhereLoop<std::uint16_t>;
    case 4:
      return &WhereLoop<std::uint32_t>;
    case 8:
      return &WhereLoop<std::uint64_t>;
    default:
      return &WhereLoop16;
  }
}

}  // namespace tessera::kernels
