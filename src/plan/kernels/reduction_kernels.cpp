#include "reduction_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "tessera/core/errors.hpp"

namespace tessera::kernels {
namespace {

// ---- walking an array in runs -----------------------------------------------------

// Calls fn(offset, state_offset, run_length, run_reduced, coords) for each run of
// `shape` along its last dimension, in C order: `offset` is the run's first element,
// `state_offset` the state of that element (C order over the dimensions that are not
// `reduced`), `coords` the run's coordinates (last one 0). `shape` is not empty.
template <class Fn>
void ForEachRun(const Shape& shape, const std::vector<bool>& reduced, Fn&& fn) {
  if (ShapeSize(shape) == 0) return;
  const std::size_t n = shape.size();
  std::vector<Index> state_stride(n, 0);
  Index stride = 1;
  for (std::size_t d = n; d-- > 0;) {
    if (reduced[d]) continue;
    state_stride[d] = stride;
    stride *= shape[d];
  }
  const Index inner = shape[n - 1];
  Shape coords(n, 0);
  Index offset = 0;
  Index state_offset = 0;
  while (true) {
    fn(offset, state_offset, inner, static_cast<bool>(reduced[n - 1]), coords);
    offset += inner;
    std::size_t d = n - 1;
    while (d > 0) {
      --d;
      state_offset += state_stride[d];
      if (++coords[d] < shape[d]) break;
      state_offset -= state_stride[d] * shape[d];
      coords[d] = 0;
      if (d == 0) return;
    }
    if (n == 1) return;
  }
}

// A 0-d array is walked as one element of a 1-d array.
struct Walk {
  Shape shape;
  std::vector<bool> reduced;
  Shape start;
  Shape full;
};
Walk MakeWalk(const Shape& shape, const std::vector<bool>& reduced, const Shape& start,
              const Shape& full) {
  if (shape.empty()) return {{1}, {false}, {0}, {1}};
  return {shape, reduced, start, full};
}

// Sum of n <= 1024 values in float64, in eight lanes.
template <class T>
[[gnu::always_inline]] inline double BlockSum(const T* x, Index n) {
  if (n < 8) {
    double sum = 0;
    for (Index i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
    return sum;
  }
  double lanes[8];
  for (int k = 0; k < 8; ++k) lanes[k] = static_cast<double>(x[k]);
  Index i = 8;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) lanes[k] += static_cast<double>(x[i + k]);
  }
  double sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
               ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; i < n; ++i) sum += static_cast<double>(x[i]);
  return sum;
}

// Sum of n values in float64: blocks of 1024 in eight lanes, the block sums combined
// pairwise (a binary counter: numpy's scheme, so the rounding error grows with log n).
template <class T>
[[gnu::always_inline]] inline double PairwiseSumOf(const T* x, Index n) {
  constexpr Index kBlock = 1024;
  if (n <= kBlock) return BlockSum(x, n);
  double sums[64];
  int levels[64];
  int top = 0;
  for (Index i = 0; i < n; i += kBlock) {
    double sum = BlockSum(x + i, std::min(kBlock, n - i));
    int level = 0;
    while (top > 0 && levels[top - 1] == level) {
      sum = sums[--top] + sum;
      ++level;
    }
    sums[top] = sum;
    levels[top++] = level;
  }
  double total = sums[--top];
  while (top > 0) total = sums[--top] + total;
  return total;
}

}  // namespace

// The float loops, also compiled for AVX2 and picked at load time where the CPU has it
// (the same arithmetic, so the same results). Outside the anonymous namespace: GCC
// reports multiversioned internal functions as unused, and clang refuses
// [[maybe_unused]] on them.
namespace simd {

__attribute__((target_clones("avx2", "default"))) double SumFloats(const float* x, Index n) {
  return PairwiseSumOf(x, n);
}
__attribute__((target_clones("avx2", "default"))) double SumDoubles(const double* x, Index n) {
  return PairwiseSumOf(x, n);
}

// sums[i] += x[i] in float64 (a reduction whose innermost dimension is kept).
__attribute__((target_clones("avx2", "default"))) void AddFloats(double* sums, const float* x,
                                                                 Index n) {
  for (Index i = 0; i < n; ++i) sums[i] += static_cast<double>(x[i]);
}
__attribute__((target_clones("avx2", "default"))) void AddDoubles(double* sums, const double* x,
                                                                  Index n) {
  for (Index i = 0; i < n; ++i) sums[i] += x[i];
}

}  // namespace simd

namespace {

// Adds x[i] to sums[i] when T is a float type (returns false otherwise).
template <class T>
bool AddDense(double* sums, const T* x, Index n) {
  if constexpr (std::is_same_v<T, float>) {
    simd::AddFloats(sums, x, n);
    return true;
  } else if constexpr (std::is_same_v<T, double>) {
    simd::AddDoubles(sums, x, n);
    return true;
  } else {
    (void)sums, (void)x, (void)n;
    return false;
  }
}

template <class T>
double PairwiseSum(const T* x, Index n) {
  if constexpr (std::is_same_v<T, float>) {
    return simd::SumFloats(x, n);
  } else if constexpr (std::is_same_v<T, double>) {
    return simd::SumDoubles(x, n);
  } else {
    return PairwiseSumOf(x, n);
  }
}

template <class T>
constexpr bool kFloat = std::is_floating_point_v<T>;

template <class T>
bool IsNaN(T x) {
  if constexpr (kFloat<T>) {
    return std::isnan(x);
  } else {
    (void)x;
    return false;
  }
}

template <class T>
bool NonZero(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return x;
  } else {
    return x != T{0};  // NaN != 0: true, as numpy
  }
}

// ---- the states of each reduction -------------------------------------------------
// Each Traits has: In (input type), Out (result type), State, Identity(), Add(state, x,
// index), AddRun(state, x, n, first_index, index_step) for a run reduced into one
// state, Merge(a, b) (b's elements follow a's), AfterValues(states, count,
// reduced_count), Finish(state, correction); kIndexed when Add needs indices, kTwoPass
// when from_values makes a second pass (BetweenPasses, Add2, AddRun2). Finish gets the
// ReductionFinish.

struct NoAfter {
  template <class State>
  static void AfterValues(State*, Index, Index) {}
  // Adds a run along a kept dimension to consecutive states in one loop (true), or
  // leaves it to Add (false).
  template <class State, class T>
  static bool AddKept(State*, const T*, Index) {
    return false;
  }
  static constexpr bool kIndexed = false;
  static constexpr bool kTwoPass = false;
};

// 64-bit accumulators: float64 for floats, wrapping uint64 for integers and bools.
template <class T>
using Accumulator = std::conditional_t<kFloat<T>, double, std::uint64_t>;

template <class T>
Accumulator<T> Widen(T x) {
  if constexpr (kFloat<T>) {
    return static_cast<double>(x);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
  } else {
    return static_cast<std::uint64_t>(x);
  }
}

template <class R, class Acc>
R Narrow(Acc acc) {
  if constexpr (std::is_same_v<R, bool>) {
    return acc != 0;
  } else {
    return static_cast<R>(acc);  // modulo 2^bits for integers (C++20)
  }
}

template <class T, class R>
struct SumTraits : NoAfter {
  using In = T;
  using Out = R;
  struct State {
    Accumulator<T> v;
  };
  static State Identity() { return {0}; }
  static void Add(State& s, T x, Index) { s.v += Widen(x); }
  static void AddRun(State& s, const T* x, Index n, Index, Index) {
    if constexpr (kFloat<T>) {
      s.v += PairwiseSum(x, n);
    } else {
      Accumulator<T> sum = 0;
      for (Index i = 0; i < n; ++i) sum += Widen(x[i]);
      s.v += sum;
    }
  }
  static bool AddKept(State* s, const T* x, Index n) {
    if constexpr (kFloat<T>) {
      return AddDense(&s->v, x, n);  // State is one double
    } else {
      (void)s, (void)x, (void)n;
      return false;
    }
  }
  static void Merge(State& a, const State& b) { a.v += b.v; }
  static Out Finish(const State& s, const ReductionFinish&) { return Narrow<R>(s.v); }
};

template <class T, class R>
struct ProdTraits : NoAfter {
  using In = T;
  using Out = R;
  struct State {
    Accumulator<T> v;
  };
  static State Identity() { return {1}; }
  static void Add(State& s, T x, Index) { s.v *= Widen(x); }
  static void AddRun(State& s, const T* x, Index n, Index, Index) {
    for (Index i = 0; i < n; ++i) s.v *= Widen(x[i]);
  }
  static void Merge(State& a, const State& b) { a.v *= b.v; }
  static Out Finish(const State& s, const ReductionFinish&) { return Narrow<R>(s.v); }
};

// Is `x` a better extreme than `best` (strictly: ties keep the first)? NaN wins.
template <class T, bool kMax>
bool Beats(T x, T best) {
  if constexpr (kFloat<T>) {
    if (std::isnan(best)) return false;
    if (std::isnan(x)) return true;
  }
  return kMax ? x > best : x < best;
}

template <class T, bool kMax>
T ExtremeIdentity() {
  if constexpr (std::is_same_v<T, bool>) {
    return !kMax;
  } else if constexpr (kFloat<T>) {
    return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  } else {
    return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
}

template <class T, bool kMax>
struct ExtremeTraits : NoAfter {
  using In = T;
  using Out = T;
  struct State {
    T v;
  };
  static State Identity() { return {ExtremeIdentity<T, kMax>()}; }
  static void Add(State& s, T x, Index) {
    if (Beats<T, kMax>(x, s.v)) s.v = x;
  }
  static void AddRun(State& s, const T* x, Index n, Index, Index) {
    for (Index i = 0; i < n; ++i) Add(s, x[i], 0);
  }
  static void Merge(State& a, const State& b) { Add(a, b.v, 0); }
  static Out Finish(const State& s, const ReductionFinish&) { return s.v; }
};

template <class T, bool kMax>
struct ArgExtremeTraits : NoAfter {
  using In = T;
  using Out = std::int64_t;
  static constexpr bool kIndexed = true;
  struct State {
    T v;
    std::int64_t i;  // -1: no element yet
  };
  static State Identity() { return {ExtremeIdentity<T, kMax>(), -1}; }
  static void Add(State& s, T x, Index index) {
    if (s.i < 0 || Beats<T, kMax>(x, s.v)) s = {x, index};
  }
  static void AddRun(State& s, const T* x, Index n, Index first, Index step) {
    for (Index k = 0; k < n; ++k) Add(s, x[k], first + k * step);
  }
  static void Merge(State& a, const State& b) {
    if (b.i < 0) return;
    if (a.i < 0 || Beats<T, kMax>(b.v, a.v)) {
      a = b;
      return;
    }
    // Equal values, or both NaN: the smaller index.
    const bool same = (IsNaN(a.v) && IsNaN(b.v)) || (!IsNaN(a.v) && !IsNaN(b.v) && a.v == b.v);
    if (same && b.i < a.i) a = b;
  }
  static Out Finish(const State& s, const ReductionFinish&) { return s.i; }
};

template <class T, bool kAll>
struct TruthTraits : NoAfter {
  using In = T;
  using Out = bool;
  struct State {
    std::uint8_t v;
  };
  static State Identity() { return {kAll ? std::uint8_t{1} : std::uint8_t{0}}; }
  static void Add(State& s, T x, Index) {
    if constexpr (kAll) {
      s.v &= static_cast<std::uint8_t>(NonZero(x));
    } else {
      s.v |= static_cast<std::uint8_t>(NonZero(x));
    }
  }
  static void AddRun(State& s, const T* x, Index n, Index, Index) {
    for (Index i = 0; i < n; ++i) Add(s, x[i], 0);
  }
  static void Merge(State& a, const State& b) {
    if constexpr (kAll) {
      a.v &= b.v;
    } else {
      a.v |= b.v;
    }
  }
  static Out Finish(const State& s, const ReductionFinish&) { return s.v != 0; }
};

template <class T>
struct CountNonzeroTraits : NoAfter {
  using In = T;
  using Out = std::int64_t;
  struct State {
    std::int64_t v;
  };
  static State Identity() { return {0}; }
  static void Add(State& s, T x, Index) { s.v += NonZero(x) ? 1 : 0; }
  static void AddRun(State& s, const T* x, Index n, Index, Index) {
    std::int64_t count = 0;
    for (Index i = 0; i < n; ++i) count += NonZero(x[i]) ? 1 : 0;
    s.v += count;
  }
  static void Merge(State& a, const State& b) { a.v += b.v; }
  static Out Finish(const State& s, const ReductionFinish&) { return s.v; }
};

template <class T, class R>
struct MeanTraits : NoAfter {
  using In = T;
  using Out = R;
  struct State {
    double sum;
  };
  static State Identity() { return {0}; }
  static void Add(State& s, T x, Index) { s.sum += static_cast<double>(x); }
  static void AddRun(State& s, const T* x, Index n, Index, Index) { s.sum += PairwiseSum(x, n); }
  static bool AddKept(State* s, const T* x, Index n) { return AddDense(&s->sum, x, n); }
  static void Merge(State& a, const State& b) { a.sum += b.sum; }
  static Out Finish(const State& s, const ReductionFinish& how) {
    return static_cast<R>(s.sum / how.reduced_count);  // 0 / 0: NaN, as numpy
  }
};

// Partial moments: count, mean and the sum of squared deviations from it (M2).
template <class T, class R, bool kStd>
struct MomentTraits : NoAfter {
  using In = T;
  using Out = R;
  static constexpr bool kTwoPass = true;
  struct State {
    double count;
    double mean;  // the sum during the first pass
    double m2;
  };
  static State Identity() { return {0, 0, 0}; }
  static void Add(State& s, T x, Index) { s.mean += static_cast<double>(x); }
  static void AddRun(State& s, const T* x, Index n, Index, Index) { s.mean += PairwiseSum(x, n); }
  static void BetweenPasses(State* states, Index count, Index reduced_count) {
    for (Index i = 0; i < count; ++i) {
      states[i].count = static_cast<double>(reduced_count);
      states[i].mean = reduced_count > 0 ? states[i].mean / states[i].count : 0;
    }
  }
  static void Add2(State& s, T x, Index) {
    const double d = static_cast<double>(x) - s.mean;
    s.m2 += d * d;
  }
  static void AddRun2(State& s, const T* x, Index n, Index, Index) {
    double m2 = 0;
    for (Index i = 0; i < n; ++i) {
      const double d = static_cast<double>(x[i]) - s.mean;
      m2 += d * d;
    }
    s.m2 += m2;
  }
  // Chan, Golub and LeVeque's combination of two partial moments.
  static void Merge(State& a, const State& b) {
    if (b.count == 0) return;
    if (a.count == 0) {
      a = b;
      return;
    }
    const double count = a.count + b.count;
    const double delta = b.mean - a.mean;
    a.mean += delta * (b.count / count);
    a.m2 += b.m2 + delta * delta * (a.count * b.count / count);
    a.count = count;
  }
  static Out Finish(const State& s, const ReductionFinish& how) {
    const double variance = s.m2 / std::max(s.count - how.correction, 0.0);
    return static_cast<R>(kStd ? std::sqrt(variance) : variance);
  }
};

// ---- the three kernel entry points ------------------------------------------------

// One pass over the values: Add/AddRun, or Add2/AddRun2 when `kSecond`.
template <class Tr, bool kSecond>
void ValuesPass(const Walk& walk, int index_axis, const typename Tr::In* data,
                typename Tr::State* states) {
  const auto add = [](typename Tr::State& s, typename Tr::In x, Index index) {
    if constexpr (kSecond) {
      Tr::Add2(s, x, index);
    } else {
      Tr::Add(s, x, index);
    }
  };
  const auto add_run = [](typename Tr::State& s, const typename Tr::In* x, Index n, Index first,
                          Index step) {
    if constexpr (kSecond) {
      Tr::AddRun2(s, x, n, first, step);
    } else {
      Tr::AddRun(s, x, n, first, step);
    }
  };
  const std::size_t last = walk.shape.size() - 1;
  const Shape full_strides = CStrides(walk.full);
  ForEachRun(
      walk.shape, walk.reduced,
      [&](Index offset, Index state_offset, Index length, bool run_reduced, const Shape& coords) {
        Index first = 0;
        Index step = 0;
        if constexpr (Tr::kIndexed) {
          if (index_axis >= 0) {
            const auto axis = static_cast<std::size_t>(index_axis);
            first = walk.start[axis] + coords[axis];
            step = axis == last ? 1 : 0;
          } else {
            for (std::size_t d = 0; d < walk.shape.size(); ++d)
              first += (walk.start[d] + coords[d]) * full_strides[d];
            step = 1;
          }
        }
        const typename Tr::In* x = data + offset;
        if (run_reduced) {
          add_run(states[state_offset], x, length, first, step);
        } else {
          typename Tr::State* s = states + state_offset;
          if (kSecond || !Tr::AddKept(s, x, length)) {
            for (Index j = 0; j < length; ++j) add(s[j], x[j], first + j * step);
          }
        }
      });
}

template <class Tr>
void FromValues(const NDArray& values, const std::vector<bool>& reduced, const Shape& start,
                const Shape& full_shape, int index_axis, std::byte* out) {
  using State = typename Tr::State;
  const Walk walk = MakeWalk(values.shape(), reduced, start, full_shape);
  Index count = 1;
  Index reduced_count = 1;
  for (std::size_t d = 0; d < walk.shape.size(); ++d)
    (walk.reduced[d] ? reduced_count : count) *= walk.shape[d];
  auto* states = reinterpret_cast<State*>(out);
  std::fill_n(states, count, Tr::Identity());
  const typename Tr::In* data = values.data<typename Tr::In>().data();
  ValuesPass<Tr, false>(walk, index_axis, data, states);
  if constexpr (Tr::kTwoPass) {
    Tr::BetweenPasses(states, count, reduced_count);
    ValuesPass<Tr, true>(walk, index_axis, data, states);
  }
  Tr::AfterValues(states, count, reduced_count);
}

template <class Tr>
void FromPartials(const NDArray& partials, const std::vector<bool>& reduced, std::byte* out) {
  using State = typename Tr::State;
  Shape shape(partials.shape().begin(), partials.shape().end() - 1);
  const Walk walk = MakeWalk(shape, reduced, shape, shape);
  Index count = 1;
  for (std::size_t d = 0; d < walk.shape.size(); ++d)
    if (!walk.reduced[d]) count *= walk.shape[d];
  auto* states = reinterpret_cast<State*>(out);
  std::fill_n(states, count, Tr::Identity());
  const auto* data = reinterpret_cast<const State*>(partials.bytes().data());
  ForEachRun(walk.shape, walk.reduced,
             [&](Index offset, Index state_offset, Index length, bool run_reduced, const Shape&) {
               const State* p = data + offset;
               if (run_reduced) {
                 for (Index j = 0; j < length; ++j) Tr::Merge(states[state_offset], p[j]);
               } else {
                 for (Index j = 0; j < length; ++j) Tr::Merge(states[state_offset + j], p[j]);
               }
             });
}

template <class Tr>
void Merge(std::byte* into, const std::byte* from, Index count) {
  auto* a = reinterpret_cast<typename Tr::State*>(into);
  const auto* b = reinterpret_cast<const typename Tr::State*>(from);
  for (Index i = 0; i < count; ++i) Tr::Merge(a[i], b[i]);
}

template <class Tr>
void Finish(const std::byte* in, Index count, const ReductionFinish& how, std::byte* out) {
  const auto* states = reinterpret_cast<const typename Tr::State*>(in);
  auto* results = reinterpret_cast<typename Tr::Out*>(out);
  for (Index i = 0; i < count; ++i) results[i] = Tr::Finish(states[i], how);
}

template <class Tr>
ReductionKernel Make() {
  static_assert(std::is_trivially_copyable_v<typename Tr::State>);
  return {static_cast<Index>(sizeof(typename Tr::State)), &FromValues<Tr>, &FromPartials<Tr>,
          &Merge<Tr>, &Finish<Tr>};
}

template <template <class, class> class Tr, class T>
ReductionKernel MakeFloating(DType result) {
  if (result == float32) return Make<Tr<T, float>>();
  if (result == float64) return Make<Tr<T, double>>();
  throw InvalidArgument("mean/var/std compute in float32 or float64, not " +
                        std::string(result.name()));
}

// ---- complex sums, products and means ---------------------------------------------

// A complex accumulator in double precision (std::complex<double>'s two doubles,
// trivially copyable whatever the library).
struct ComplexState {
  double re;
  double im;
};

// Sum of n complex values in double precision, halved recursively (pairwise, as numpy
// sums complex arrays) down to runs of 16.
template <class T>
ComplexState ComplexPairwiseSum(const T* x, Index n) {
  if (n <= 16) {
    ComplexState sum{0, 0};
    for (Index i = 0; i < n; ++i) {
      sum.re += static_cast<double>(x[i].real());
      sum.im += static_cast<double>(x[i].imag());
    }
    return sum;
  }
  const Index half = n / 2;
  const ComplexState a = ComplexPairwiseSum(x, half);
  const ComplexState b = ComplexPairwiseSum(x + half, n - half);
  return {a.re + b.re, a.im + b.im};
}

template <class R>
R ComplexResult(ComplexState s) {
  using Component = typename R::value_type;
  return R(static_cast<Component>(s.re), static_cast<Component>(s.im));
}

// sum (kMean false) and mean of a complex type T into the complex type R.
template <class T, class R, bool kMean>
struct ComplexSumTraits : NoAfter {
  using In = T;
  using Out = R;
  using State = ComplexState;
  static State Identity() { return {0, 0}; }
  static void Add(State& s, T x, Index) {
    s.re += static_cast<double>(x.real());
    s.im += static_cast<double>(x.imag());
  }
  static void AddRun(State& s, const T* x, Index n, Index, Index) {
    const ComplexState sum = ComplexPairwiseSum(x, n);
    s.re += sum.re;
    s.im += sum.im;
  }
  static void Merge(State& a, const State& b) {
    a.re += b.re;
    a.im += b.im;
  }
  static Out Finish(const State& s, const ReductionFinish& how) {
    if constexpr (kMean) {
      const auto count = static_cast<double>(how.reduced_count);  // 0 / 0: NaN, as numpy
      return ComplexResult<R>({s.re / count, s.im / count});
    } else {
      return ComplexResult<R>(s);
    }
  }
};

template <class T>
struct ComplexProdTraits : NoAfter {
  using In = T;
  using Out = T;
  using State = ComplexState;
  static State Identity() { return {1, 0}; }
  static void Add(State& s, T x, Index) {
    Merge(s, {static_cast<double>(x.real()), static_cast<double>(x.imag())});
  }
  static void AddRun(State& s, const T* x, Index n, Index, Index) {
    for (Index i = 0; i < n; ++i) Add(s, x[i], 0);
  }
  // numpy's multiplication (the textbook formula).
  static void Merge(State& a, const State& b) {
    a = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  static Out Finish(const State& s, const ReductionFinish&) { return ComplexResult<T>(s); }
};

// The kernel of `op` for complex T: sums, products and means, and the truth tests;
// ReductionResultType has refused the ordered reductions, var and std.
template <class T>
ReductionKernel ComplexReductionKernel(ReductionOp op, DType result) {
  switch (op) {
    case ReductionOp::kSum:
      return Make<ComplexSumTraits<T, T, false>>();
    case ReductionOp::kProd:
      return Make<ComplexProdTraits<T>>();
    case ReductionOp::kMean:
      if (result == complex64) return Make<ComplexSumTraits<T, std::complex<float>, true>>();
      return Make<ComplexSumTraits<T, std::complex<double>, true>>();
    case ReductionOp::kAll:
      return Make<TruthTraits<T, true>>();
    case ReductionOp::kAny:
      return Make<TruthTraits<T, false>>();
    case ReductionOp::kCountNonzero:
      return Make<CountNonzeroTraits<T>>();
    default:
      throw InvalidArgument(std::string(ReductionName(op)) + " is not defined for " +
                            std::string(DTypeOf<T>().name()) +
                            ": complex numbers have no order; reduce abs(x), real(x) or "
                            "imag(x)");
  }
}

template <class T, class R>
using VarTraits = MomentTraits<T, R, false>;
template <class T, class R>
using StdTraits = MomentTraits<T, R, true>;

// The kernel of `op` for a real (or bool) element type T into `result`.
template <class T>
ReductionKernel RealReductionKernel(ReductionOp op, DType result, bool same) {
  switch (op) {
    case ReductionOp::kSum:
      if (result == int64 && !same) return Make<SumTraits<T, std::int64_t>>();
      if (result == uint64 && !same) return Make<SumTraits<T, std::uint64_t>>();
      return Make<SumTraits<T, T>>();
    case ReductionOp::kProd:
      if (result == int64 && !same) return Make<ProdTraits<T, std::int64_t>>();
      if (result == uint64 && !same) return Make<ProdTraits<T, std::uint64_t>>();
      return Make<ProdTraits<T, T>>();
    case ReductionOp::kMin:
      return Make<ExtremeTraits<T, false>>();
    case ReductionOp::kMax:
      return Make<ExtremeTraits<T, true>>();
    case ReductionOp::kArgMin:
      return Make<ArgExtremeTraits<T, false>>();
    case ReductionOp::kArgMax:
      return Make<ArgExtremeTraits<T, true>>();
    case ReductionOp::kAll:
      return Make<TruthTraits<T, true>>();
    case ReductionOp::kAny:
      return Make<TruthTraits<T, false>>();
    case ReductionOp::kCountNonzero:
      return Make<CountNonzeroTraits<T>>();
    case ReductionOp::kMean:
      return MakeFloating<MeanTraits, T>(result);
    case ReductionOp::kVar:
      return MakeFloating<VarTraits, T>(result);
    case ReductionOp::kStd:
      return MakeFloating<StdTraits, T>(result);
  }
  throw InvalidArgument("unknown reduction");
}

}  // namespace

ReductionKernel GetReductionKernel(ReductionOp op, DType input, DType result) {
  const bool same = input == result;
  const bool sum_or_prod = op == ReductionOp::kSum || op == ReductionOp::kProd;
  // numpy's default promotion: bool and integer sums and products in 64 bits.
  const bool promoted = sum_or_prod && input.kind() != DTypeKind::kFloat && !input.is_complex() &&
                        (result == int64 || result == uint64);
  const bool keeps_input = sum_or_prod || op == ReductionOp::kMin || op == ReductionOp::kMax;
  if (keeps_input && !same && !promoted) {
    throw InvalidArgument(std::string(ReductionName(op)) + " of " + std::string(input.name()) +
                          " into " + std::string(result.name()) +
                          ": cast the input to the result dtype first");
  }
  return VisitDType(input, [&](auto tag) -> ReductionKernel {
    using T = typename decltype(tag)::type;
    if constexpr (kIsComplex<T>) {
      if (op == ReductionOp::kMean && !result.is_complex()) {
        throw InvalidArgument("mean of " + std::string(input.name()) + " into " +
                              std::string(result.name()) +
                              ": the mean of complex numbers is complex; request complex64 or "
                              "complex128");
      }
      return ComplexReductionKernel<T>(op, result);
    } else {
      return RealReductionKernel<T>(op, result, same);
    }
  });
}

}  // namespace tessera::kernels
