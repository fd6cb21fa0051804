#include "tessera/core/type_promotion.hpp"

#include <cstdint>

namespace tessera {
namespace {

bool IsFloat(DType dtype) { return dtype.kind() == DTypeKind::kFloat; }

// The complex dtype whose components are `real` (float32 -> complex64, else complex128).
DType ComplexWithComponents(DType real) { return real == float32 ? complex64 : complex128; }

// The signed integer dtype of `itemsize` bytes (1, 2, 4 or 8).
DType SignedOfSize(std::int64_t itemsize) {
  switch (itemsize) {
    case 1:
      return int8;
    case 2:
      return int16;
    case 4:
      return int32;
    default:
      return int64;
  }
}

// The wider of two dtypes of the same kind.
DType Wider(DType a, DType b) { return a.itemsize() >= b.itemsize() ? a : b; }

// 0 for bool, 1 for integers, 2 for floats, 3 for complex: the order in which kinds
// absorb each other.
int KindRank(DTypeKind kind) {
  switch (kind) {
    case DTypeKind::kBool:
      return 0;
    case DTypeKind::kFloat:
      return 2;
    case DTypeKind::kComplex:
      return 3;
    default:
      return 1;
  }
}

int KindRank(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::kBool:
      return 0;
    case ScalarKind::kInt:
      return 1;
    case ScalarKind::kFloat:
      return 2;
    case ScalarKind::kComplex:
      break;
  }
  return 3;
}

}  // namespace

DType ResultType(DType a, DType b) {
  if (a == b) return a;
  if (a.kind() == DTypeKind::kBool) return b;
  if (b.kind() == DTypeKind::kBool) return a;
  if (a.is_complex() || b.is_complex()) {
    // numpy: the components promote as reals would (complex64 with int32 -> complex128).
    return ComplexWithComponents(ResultType(RealDType(a), RealDType(b)));
  }
  if (IsFloat(a) && IsFloat(b)) return Wider(a, b);
  if (IsFloat(a) || IsFloat(b)) {
    // float32 holds every 8- and 16-bit integer exactly; wider integers need float64.
    const DType real = IsFloat(a) ? a : b;
    const DType integer = IsFloat(a) ? b : a;
    return real == float32 && integer.itemsize() <= 2 ? float32 : float64;
  }
  if (a.kind() == b.kind()) return Wider(a, b);
  // One signed, one unsigned: the smallest signed type holding both, float64 past int64.
  const DType signed_type = a.kind() == DTypeKind::kSignedInt ? a : b;
  const DType unsigned_type = a.kind() == DTypeKind::kSignedInt ? b : a;
  if (signed_type.itemsize() > unsigned_type.itemsize()) return signed_type;
  if (unsigned_type.itemsize() == 8) return float64;
  return SignedOfSize(2 * unsigned_type.itemsize());
}

DType ResultTypeWithScalar(DType array, ScalarKind scalar) {
  if (KindRank(scalar) <= KindRank(array.kind())) return array;
  switch (scalar) {
    case ScalarKind::kComplex:
      return IsFloat(array) ? ComplexWithComponents(array) : complex128;
    case ScalarKind::kFloat:
      return float64;
    default:
      return int64;
  }
}

DType FloatingResultType(DType dtype) {
  if (IsFloat(dtype) || dtype.is_complex()) return dtype;
  return dtype.itemsize() <= 2 ? float32 : float64;
}

}  // namespace tessera
