// Vector math for AVX-512F with DQ (vector_math_isa.hpp): compiled with -mavx512f
// -mavx512dq, run only where the CPU has both.
#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "vector_math_isa.hpp"
#include "vector_math_loops.hpp"

namespace tessera::kernels::vector_detail {
namespace {

struct Float16 {
  using T = float;
  using V = __m512;
  static constexpr int kWidth = 16;
  static V Load(const T* p) { return _mm512_loadu_ps(p); }
  static void Store(T* p, V v) { _mm512_storeu_ps(p, v); }
  // The masked form, every lane kept: GCC 12's _mm512_sqrt_ps passes an undefined
  // source that -Wuninitialized reports.
  static V Sqrt(V v) { return _mm512_mask_sqrt_ps(v, static_cast<__mmask16>(0xFFFF), v); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Subtract(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Multiply(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Divide(V a, V b) { return _mm512_div_ps(a, b); }
  static bool AnyLost(V x, V r) {
    const V inf = _mm512_set1_ps(std::numeric_limits<T>::infinity());
    const V ax = _mm512_abs_ps(x);
    const auto lost = _mm512_cmp_ps_mask(_mm512_abs_ps(r), inf, _CMP_NLT_UQ) &
                      _mm512_cmp_ps_mask(ax, inf, _CMP_LT_OQ);
    return lost != 0;
  }
  static __mmask16 Above(V x, T bound) {
    return _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(bound), _CMP_NLE_UQ);
  }
  static bool AnyAbove(V x, T bound) { return Above(x, bound) != 0; }
  static V ZeroAbove(V x, T bound) {
    return _mm512_mask_mov_ps(x, Above(x, bound), _mm512_setzero_ps());
  }
};

struct Double8 {
  using T = double;
  using V = __m512d;
  static constexpr int kWidth = 8;
  static V Load(const T* p) { return _mm512_loadu_pd(p); }
  static void Store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V Sqrt(V v) { return _mm512_mask_sqrt_pd(v, static_cast<__mmask8>(0xFF), v); }
  static V Add(V a, V b) { return _mm512_add_pd(a, b); }
  static V Subtract(V a, V b) { return _mm512_sub_pd(a, b); }
  static V Multiply(V a, V b) { return _mm512_mul_pd(a, b); }
  static V Divide(V a, V b) { return _mm512_div_pd(a, b); }
  static bool AnyLost(V x, V r) {
    const V inf = _mm512_set1_pd(std::numeric_limits<T>::infinity());
    const V ax = _mm512_abs_pd(x);
    const auto lost = _mm512_cmp_pd_mask(_mm512_abs_pd(r), inf, _CMP_NLT_UQ) &
                      _mm512_cmp_pd_mask(ax, inf, _CMP_LT_OQ);
    return lost != 0;
  }
  static __mmask8 Above(V x, T bound) {
    return _mm512_cmp_pd_mask(_mm512_abs_pd(x), _mm512_set1_pd(bound), _CMP_NLE_UQ);
  }
  static bool AnyAbove(V x, T bound) { return Above(x, bound) != 0; }
  static V ZeroAbove(V x, T bound) {
    return _mm512_mask_mov_pd(x, Above(x, bound), _mm512_setzero_pd());
  }
};

// float -> int with GetCastKernel's rules, one register at a time (CastLoop): truncation
// gives the integer "indefinite" value (the type's minimum) out of range, which is right
// below the range; lanes at or above 2^(bits-1) take the maximum, NaN lanes 0. The
// zero-masked conversions, every number lane kept: GCC 12's plain ones pass an undefined
// source that -Wmaybe-uninitialized reports.
void Float32ToInt32(const float* in, std::int32_t* out) {
  const __m512 x = _mm512_loadu_ps(in);
  const __m512i r = _mm512_maskz_cvttps_epi32(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), x);
  _mm512_storeu_si512(out, _mm512_mask_mov_epi32(
                               r, _mm512_cmp_ps_mask(x, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ),
                               _mm512_set1_epi32(std::numeric_limits<std::int32_t>::max())));
}

// Eight float64 lanes to int64 by the rule (NaN -> 0, the maximum from 2^63 up).
__m512i Float64ToInt64Lanes(__m512d x) {
  const __m512i most = _mm512_set1_epi64(std::numeric_limits<std::int64_t>::max());
  __m512i r = _mm512_maskz_cvttpd_epi64(_mm512_cmp_pd_mask(x, x, _CMP_ORD_Q), x);
  return _mm512_mask_mov_epi64(
      r, _mm512_cmp_pd_mask(x, _mm512_set1_pd(9223372036854775808.0), _CMP_GE_OQ), most);
}

void Float64ToInt64(const double* in, std::int64_t* out) {
  _mm512_storeu_si512(out, Float64ToInt64Lanes(_mm512_loadu_pd(in)));
}

// Through int64, then narrowed with signed saturation: the int32 range's ends.
void Float64ToInt32(const double* in, std::int32_t* out) {
  const __m256i narrow =
      _mm512_mask_cvtsepi64_epi32(_mm256_setzero_si256(), static_cast<__mmask8>(0xFF),
                                  Float64ToInt64Lanes(_mm512_loadu_pd(in)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), narrow);
}

}  // namespace

UnaryKernel Avx512Unary(UnaryOp op, bool is_double) {
  switch (op) {
#define TESSERA_CASE(Kernel, name, ulp, std_name, bound)                            \
  case UnaryOp::k##Kernel:                                                          \
    return is_double ? &UnaryLoop<Double8, Sleef_##name##d8_##ulp##avx512f,         \
                                  [](double x) { return std::std_name(x); }, bound> \
                     : &UnaryLoop<Float16, Sleef_##name##f16_##ulp##avx512f,        \
                                  [](float x) { return std::std_name(x); }, bound>;
    TESSERA_VECTOR_UNARY_OPS(TESSERA_CASE)
#undef TESSERA_CASE
    case UnaryOp::kSqrt:
      return is_double ? &UnaryLoop<Double8, SqrtOf<Double8>, [](double x) { return std::sqrt(x); }>
                       : &UnaryLoop<Float16, SqrtOf<Float16>, [](float x) { return std::sqrt(x); }>;
    default:
      return nullptr;
  }
}

BinaryKernel Avx512Binary(BinaryOp op, bool is_double) {
  switch (op) {
#define TESSERA_CASE(Kernel, name, ulp, std_name)                                          \
  case BinaryOp::k##Kernel:                                                                \
    return is_double ? &BinaryLoop<Double8, Sleef_##name##d8_##ulp##avx512f,               \
                                   [](double x, double y) { return std::std_name(x, y); }> \
                     : &BinaryLoop<Float16, Sleef_##name##f16_##ulp##avx512f,              \
                                   [](float x, float y) { return std::std_name(x, y); }>;
    TESSERA_VECTOR_BINARY_OPS(TESSERA_CASE)
#undef TESSERA_CASE
#define TESSERA_CASE(Kernel, member)                              \
  case BinaryOp::k##Kernel:                                       \
    return is_double ? &ArithmeticLoop<Double8, &Double8::member> \
                     : &ArithmeticLoop<Float16, &Float16::member>;
    TESSERA_VECTOR_ARITHMETIC_OPS(TESSERA_CASE)
#undef TESSERA_CASE
    default:
      return nullptr;
  }
}

CastKernel Avx512Cast(DType from, DType to) {
  if (from == float32 && to == int32) return &CastLoop<float, std::int32_t, 16, Float32ToInt32>;
  if (from == float64 && to == int32) return &CastLoop<double, std::int32_t, 8, Float64ToInt32>;
  if (from == float64 && to == int64) return &CastLoop<double, std::int64_t, 8, Float64ToInt64>;
  return nullptr;
}

}  // namespace tessera::kernels::vector_detail
