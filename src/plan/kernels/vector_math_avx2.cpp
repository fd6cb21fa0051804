// Vector math for AVX2 with FMA (vector_math_isa.hpp): compiled with -mavx2 -mfma, run
// only where the CPU has both.
#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "vector_math_isa.hpp"
#include "vector_math_loops.hpp"

namespace tessera::kernels::vector_detail {
namespace {

struct Float8 {
  using T = float;
  using V = __m256;
  static constexpr int kWidth = 8;
  static V Load(const T* p) { return _mm256_loadu_ps(p); }
  static void Store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V Sqrt(V v) { return _mm256_sqrt_ps(v); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Subtract(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Multiply(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Divide(V a, V b) { return _mm256_div_ps(a, b); }
  static bool AnyLost(V x, V r) {
    const V sign = _mm256_set1_ps(-0.0f);
    const V inf = _mm256_set1_ps(std::numeric_limits<T>::infinity());
    const V ax = _mm256_andnot_ps(sign, x);
    const V lost = _mm256_and_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, r), inf, _CMP_NLT_UQ),
                                 _mm256_cmp_ps(ax, inf, _CMP_LT_OQ));
    return _mm256_movemask_ps(lost) != 0;
  }
  static V Above(V x, T bound) {
    const V ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    return _mm256_cmp_ps(ax, _mm256_set1_ps(bound), _CMP_NLE_UQ);
  }
  static bool AnyAbove(V x, T bound) { return _mm256_movemask_ps(Above(x, bound)) != 0; }
  static V ZeroAbove(V x, T bound) { return _mm256_andnot_ps(Above(x, bound), x); }
};

struct Double4 {
  using T = double;
  using V = __m256d;
  static constexpr int kWidth = 4;
  static V Load(const T* p) { return _mm256_loadu_pd(p); }
  static void Store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V Sqrt(V v) { return _mm256_sqrt_pd(v); }
  static V Add(V a, V b) { return _mm256_add_pd(a, b); }
  static V Subtract(V a, V b) { return _mm256_sub_pd(a, b); }
  static V Multiply(V a, V b) { return _mm256_mul_pd(a, b); }
  static V Divide(V a, V b) { return _mm256_div_pd(a, b); }
  static bool AnyLost(V x, V r) {
    const V sign = _mm256_set1_pd(-0.0);
    const V inf = _mm256_set1_pd(std::numeric_limits<T>::infinity());
    const V ax = _mm256_andnot_pd(sign, x);
    const V lost = _mm256_and_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, r), inf, _CMP_NLT_UQ),
                                 _mm256_cmp_pd(ax, inf, _CMP_LT_OQ));
    return _mm256_movemask_pd(lost) != 0;
  }
  static V Above(V x, T bound) {
    const V ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
    return _mm256_cmp_pd(ax, _mm256_set1_pd(bound), _CMP_NLE_UQ);
  }
  static bool AnyAbove(V x, T bound) { return _mm256_movemask_pd(Above(x, bound)) != 0; }
  static V ZeroAbove(V x, T bound) { return _mm256_andnot_pd(Above(x, bound), x); }
};

// One register of float32 -> int32 with GetCastKernel's rules (see
// vector_math_avx512.cpp).
void Float32ToInt32(const float* in, std::int32_t* out) {
  const __m256 x = _mm256_loadu_ps(in);
  __m256i r = _mm256_cvttps_epi32(x);
  r = _mm256_blendv_epi8(
      r, _mm256_set1_epi32(std::numeric_limits<std::int32_t>::max()),
      _mm256_castps_si256(_mm256_cmp_ps(x, _mm256_set1_ps(2147483648.0f), _CMP_GE_OQ)));
  r = _mm256_and_si256(r, _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_ORD_Q)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), r);
}

}  // namespace

UnaryKernel Avx2Unary(UnaryOp op, bool is_double) {
  switch (op) {
#define TESSERA_CASE(Kernel, name, ulp, std_name, bound)                            \
  case UnaryOp::k##Kernel:                                                          \
    return is_double ? &UnaryLoop<Double4, Sleef_##name##d4_##ulp##avx2,            \
                                  [](double x) { return std::std_name(x); }, bound> \
                     : &UnaryLoop<Float8, Sleef_##name##f8_##ulp##avx2,             \
                                  [](float x) { return std::std_name(x); }, bound>;
    TESSERA_VECTOR_UNARY_OPS(TESSERA_CASE)
#undef TESSERA_CASE
    case UnaryOp::kSqrt:
      return is_double ? &UnaryLoop<Double4, SqrtOf<Double4>, [](double x) { return std::sqrt(x); }>
                       : &UnaryLoop<Float8, SqrtOf<Float8>, [](float x) { return std::sqrt(x); }>;
    default:
      return nullptr;
  }
}

BinaryKernel Avx2Binary(BinaryOp op, bool is_double) {
  switch (op) {
#define TESSERA_CASE(Kernel, name, ulp, std_name)                                          \
  case BinaryOp::k##Kernel:                                                                \
    return is_double ? &BinaryLoop<Double4, Sleef_##name##d4_##ulp##avx2,                  \
                                   [](double x, double y) { return std::std_name(x, y); }> \
                     : &BinaryLoop<Float8, Sleef_##name##f8_##ulp##avx2,                   \
                                   [](float x, float y) { return std::std_name(x, y); }>;
    TESSERA_VECTOR_BINARY_OPS(TESSERA_CASE)
#undef TESSERA_CASE
#define TESSERA_CASE(Kernel, member)                              \
  case BinaryOp::k##Kernel:                                       \
    return is_double ? &ArithmeticLoop<Double4, &Double4::member> \
                     : &ArithmeticLoop<Float8, &Float8::member>;
    TESSERA_VECTOR_ARITHMETIC_OPS(TESSERA_CASE)
#undef TESSERA_CASE
    default:
      return nullptr;
  }
}

CastKernel Avx2Cast(DType from, DType to) {
  if (from == float32 && to == int32) return &CastLoop<float, std::int32_t, 8, Float32ToInt32>;
  return nullptr;
}

}  // namespace tessera::kernels::vector_detail
