// The loops and op lists the per-instruction-set files of vector math share. Included
// only by files compiled for their instruction set (vector_math_avx2.cpp, ...), which
// define a Lanes type for each element type:
//   struct Lanes { using T = float; using V = __m256; static constexpr int kWidth = 8;
//                  static V Load(const T*); static void Store(T*, V); static V Sqrt(V);
//                  // any lane whose r is not finite where its x is
//                  static bool AnyLost(V x, V r);
//                  // any lane with |x| > bound or NaN; x with those lanes set to 0
//                  static bool AnyAbove(V x, T bound); static V ZeroAbove(V x, T bound); };
// Internal to kernels/.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "elementwise_kernels.hpp"
#include "tessera/core/scalar.hpp"

// The SLEEF functions by op: X(Kernel, SLEEF name, accuracy suffix, <cmath> name, bound).
// SLEEF's sin, cos and tan reduce their arguments one way while every lane of a register
// is below 125 (float32) or 15 (float64), and a slower, more precise way for the whole
// register otherwise: a lane's result would then depend on its neighbours, and so on
// how the data is chunked. Lanes above the bound (and NaN and infinities) are left to
// glibc, so each lane's result depends on its own value alone.
// clang-format off
#define TESSERA_VECTOR_UNARY_OPS(X)                 \
  X(Exp, exp, u10, exp, kNoBound)                   \
  X(Expm1, expm1, u10, expm1, kNoBound)             \
  X(Log, log, u10, log, kNoBound)                   \
  X(Log1p, log1p, u10, log1p, kNoBound)             \
  X(Log2, log2, u10, log2, kNoBound)                \
  X(Log10, log10, u10, log10, kNoBound)             \
  X(Sin, sin, u10, sin, kTrigBound)                 \
  X(Cos, cos, u10, cos, kTrigBound)                 \
  X(Tan, tan, u10, tan, kTrigBound)                 \
  X(Asin, asin, u10, asin, kNoBound)                \
  X(Acos, acos, u10, acos, kNoBound)                \
  X(Atan, atan, u10, atan, kNoBound)                \
  X(Sinh, sinh, u10, sinh, kNoBound)                \
  X(Cosh, cosh, u10, cosh, kNoBound)                \
  X(Tanh, tanh, u10, tanh, kNoBound)                \
  X(Asinh, asinh, u10, asinh, kNoBound)             \
  X(Acosh, acosh, u10, acosh, kNoBound)             \
  X(Atanh, atanh, u10, atanh, kNoBound)
#define TESSERA_VECTOR_BINARY_OPS(X)                \
  X(Pow, pow, u10, pow)                             \
  X(Atan2, atan2, u10, atan2)                       \
  X(Hypot, hypot, u05, hypot)
// IEEE's correctly rounded arithmetic, on the register's full width (the baseline build
// vectorizes the scalar loops only 128 bits wide): X(Kernel, Lanes member).
#define TESSERA_VECTOR_ARITHMETIC_OPS(X)            \
  X(Add, Add)                                       \
  X(Subtract, Subtract)                             \
  X(Multiply, Multiply)                             \
  X(Divide, Divide)
// clang-format on

namespace tessera::kernels::vector_detail {

// Where SLEEF is given a lane: |x| at most `single` (float32) or `twice` (float64).
struct Bound {
  float single;
  double twice;
};
inline constexpr Bound kNoBound{std::numeric_limits<float>::infinity(),
                                std::numeric_limits<double>::infinity()};
inline constexpr Bound kTrigBound{125.0f, 15.0};

template <class T>
constexpr T BoundFor(Bound bound) {
  if constexpr (sizeof(T) == 4) {
    return bound.single;
  } else {
    return bound.twice;
  }
}

// One register of out = fn(in). glibc (kScalar) answers the lanes outside the bound
// (SLEEF computes 0 there instead) and those whose result is not finite though their
// input is: SLEEF overflows a little early at the top of some ranges (log1p, asinh and
// acosh of FLT_MAX and DBL_MAX give inf). Such lanes are rare in real data (besides
// large trig arguments: a real overflow, the log of a negative number); each costs a
// glibc call.
template <class Lanes, auto kFn, auto kScalar, Bound kBound>
void UnaryRegister(const typename Lanes::T* in, typename Lanes::T* out) {
  using T = typename Lanes::T;
  constexpr T kLimit = BoundFor<T>(kBound);
  constexpr bool kBounded = kLimit < std::numeric_limits<T>::infinity();
  const typename Lanes::V x = Lanes::Load(in);
  const bool outside = kBounded && Lanes::AnyAbove(x, kLimit);
  const typename Lanes::V r = kFn(outside ? Lanes::ZeroAbove(x, kLimit) : x);
  if (!outside && !Lanes::AnyLost(x, r)) return Lanes::Store(out, r);
  T xs[Lanes::kWidth];
  T rs[Lanes::kWidth];
  Lanes::Store(xs, x);
  Lanes::Store(rs, r);
  for (int lane = 0; lane < Lanes::kWidth; ++lane) {
    const bool above = kBounded && !(std::fabs(xs[lane]) <= kLimit);
    if (above || (!std::isfinite(rs[lane]) && std::isfinite(xs[lane]))) {
      rs[lane] = kScalar(xs[lane]);
    }
  }
  Lanes::Store(out, Lanes::Load(rs));
}

// out[i] = fn(in[i]): whole registers, then the tail through a padded register (out
// may alias in: each register is loaded before it is stored).
template <class Lanes, auto kFn, auto kScalar, Bound kBound = kNoBound>
void UnaryLoop(const void* in, void* out, std::int64_t n) {
  using T = typename Lanes::T;
  const T* source = static_cast<const T*>(in);
  T* target = static_cast<T*>(out);
  std::int64_t i = 0;
  for (; i + Lanes::kWidth <= n; i += Lanes::kWidth) {
    UnaryRegister<Lanes, kFn, kScalar, kBound>(source + i, target + i);
  }
  if (i < n) {
    T lanes[Lanes::kWidth] = {};
    std::copy(source + i, source + n, lanes);
    UnaryRegister<Lanes, kFn, kScalar, kBound>(lanes, lanes);
    std::copy(lanes, lanes + (n - i), target + i);
  }
}

// One register of out = fn(a, b), glibc's answer where the result is not finite though
// both inputs are (pow(DBL_MAX, 1) gives inf).
template <class Lanes, auto kFn, auto kScalar>
void BinaryRegister(const typename Lanes::T* a, const typename Lanes::T* b,
                    typename Lanes::T* out) {
  using T = typename Lanes::T;
  const typename Lanes::V x = Lanes::Load(a);
  const typename Lanes::V y = Lanes::Load(b);
  const typename Lanes::V r = kFn(x, y);
  if (!Lanes::AnyLost(x, r) && !Lanes::AnyLost(y, r)) return Lanes::Store(out, r);
  T xs[Lanes::kWidth];
  T ys[Lanes::kWidth];
  T rs[Lanes::kWidth];
  Lanes::Store(xs, x);
  Lanes::Store(ys, y);
  Lanes::Store(rs, r);
  for (int lane = 0; lane < Lanes::kWidth; ++lane) {
    if (!std::isfinite(rs[lane]) && std::isfinite(xs[lane]) && std::isfinite(ys[lane])) {
      rs[lane] = kScalar(xs[lane], ys[lane]);
    }
  }
  Lanes::Store(out, Lanes::Load(rs));
}

// One register of out = a op b, for the correctly rounded arithmetic (nothing to redo).
template <class Lanes, auto kFn>
void ArithmeticRegister(const typename Lanes::T* a, const typename Lanes::T* b,
                        typename Lanes::T* out) {
  Lanes::Store(out, kFn(Lanes::Load(a), Lanes::Load(b)));
}

// out[i] = a[i] op b[i] by kRegister(a, b, out) on whole registers, then the tail
// through padded ones (out may alias a: each register is loaded before it is stored).
template <class Lanes, auto kRegister>
void EachRegisterOfTwo(const void* a, const void* b, void* out, std::int64_t n) {
  using T = typename Lanes::T;
  const T* left = static_cast<const T*>(a);
  const T* right = static_cast<const T*>(b);
  T* target = static_cast<T*>(out);
  std::int64_t i = 0;
  for (; i + Lanes::kWidth <= n; i += Lanes::kWidth) kRegister(left + i, right + i, target + i);
  if (i < n) {
    T left_lanes[Lanes::kWidth] = {};
    T right_lanes[Lanes::kWidth] = {};
    std::copy(left + i, left + n, left_lanes);
    std::copy(right + i, right + n, right_lanes);
    kRegister(left_lanes, right_lanes, left_lanes);
    std::copy(left_lanes, left_lanes + (n - i), target + i);
  }
}

// out[i] = fn(a[i], b[i]), glibc answering where SLEEF falls short (BinaryRegister).
template <class Lanes, auto kFn, auto kScalar>
void BinaryLoop(const void* a, const void* b, void* out, std::int64_t n) {
  EachRegisterOfTwo<Lanes, &BinaryRegister<Lanes, kFn, kScalar>>(a, b, out, n);
}

// out[i] = a[i] op b[i] for add, subtract, multiply and divide.
template <class Lanes, auto kFn>
void ArithmeticLoop(const void* a, const void* b, void* out, std::int64_t n) {
  EachRegisterOfTwo<Lanes, &ArithmeticRegister<Lanes, kFn>>(a, b, out, n);
}

// astype from float to integer, with GetCastKernel's rules: kRegister(in, out) converts
// one register of From to To; the tail goes element by element as the scalar loop does.
template <class From, class To, int kWidth, auto kRegister>
void CastLoop(const void* in, void* out, std::int64_t n) {
  const From* source = static_cast<const From*>(in);
  To* target = static_cast<To*>(out);
  std::int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) kRegister(source + i, target + i);
  for (; i < n; ++i) target[i] = CastElement<To>(source[i]);
}

template <class Lanes>
typename Lanes::V SqrtOf(typename Lanes::V v) {
  return Lanes::Sqrt(v);
}

}  // namespace tessera::kernels::vector_detail
