// vector_library_bench: the measurement behind choosing SLEEF over Highway for the vector
// math kernels (src/plan/kernels/vector_math.hpp, docs/performance.md). For exp, log and
// sin on float32 and float64, time per element on a 4096-element tile, at AVX-512F where
// AVX-512 (Skylake's set, which Highway's AVX3 target needs), and the largest error
// against glibc over 1,000,000 values spread over every magnitude.
//
//   ninja -C build vector_library_bench && build/bench/vector_library_bench
//
// Built only where Debian's libhwy-dev (Highway, header-only) is installed; Highway is not
// a dependency of Tessera. Both libraries' functions are compiled for one instruction set
// here (this file is built with -march=skylake-avx512, and refuses to run on a CPU
// without it): a comparison, not a dispatcher.
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>
#include <sleef.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace hn = hwy::HWY_NAMESPACE;

namespace {

template <class T>
std::int64_t Ulps(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<std::int64_t>::max();
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  auto ordered = [](T x) {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<Bits>(x));
    return bits < 0 ? std::numeric_limits<Bits>::min() - bits : bits;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

template <class T>
std::vector<T> Values(double low, double high, std::size_t count) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> exponent(-30, std::log10(high));
  std::vector<T> values(count);
  for (T& value : values) {
    const double magnitude = std::pow(10.0, exponent(rng));
    value = static_cast<T>(low < 0 && rng() % 2 ? -magnitude : magnitude);
  }
  return values;
}

template <class T, class Fn>
double NanosecondsPerElement(Fn&& fn) {
  const std::vector<T> in = Values<T>(0, 10, 4096);
  std::vector<T> out(in.size());
  constexpr int kRounds = 20000;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < kRounds; ++round) fn(in.data(), out.data(), in.size());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return seconds / kRounds / static_cast<double>(in.size()) * 1e9;
}

template <class T, class Fn>
std::int64_t WorstUlps(double low, double high, Fn&& fn, T (*reference)(T)) {
  const std::vector<T> in = Values<T>(low, high, 1'000'000);
  std::vector<T> out(in.size());
  fn(in.data(), out.data(), in.size());
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const T want = reference(in[i]);
    if (std::isinf(want) && out[i] == want) continue;
    worst = std::max(worst, Ulps(out[i], want));
  }
  return worst;
}

// out = fn(in) over whole registers of Highway's widest vector here.
template <class T, class HwyFn>
void HighwayLoop(const T* in, T* out, std::size_t n, HwyFn fn) {
  const hn::ScalableTag<T> d;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t i = 0; i + lanes <= n; i += lanes)
    hn::StoreU(fn(d, hn::LoadU(d, in + i)), d, out + i);
}

template <class T, class V, auto kFn>
void SleefLoop(const T* in, T* out, std::size_t n) {
  constexpr std::size_t kLanes = sizeof(V) / sizeof(T);
  for (std::size_t i = 0; i + kLanes <= n; i += kLanes) {
    V x;
    std::memcpy(&x, in + i, sizeof(V));
    const V r = kFn(x);
    std::memcpy(out + i, &r, sizeof(V));
  }
}

template <class T, class SleefFn, class HwyFn>
void Row(const char* name, double low, double high, T (*reference)(T), SleefFn sleef, HwyFn hwy) {
  auto highway = [&](const T* in, T* out, std::size_t n) { HighwayLoop<T>(in, out, n, hwy); };
  std::printf("| %s %s | %.2f ns | %lld | %.2f ns | %lld |\n", name,
              sizeof(T) == 4 ? "float32" : "float64", NanosecondsPerElement<T>(sleef),
              static_cast<long long>(WorstUlps<T>(low, high, sleef, reference)),
              NanosecondsPerElement<T>(highway),
              static_cast<long long>(WorstUlps<T>(low, high, highway, reference)));
}

}  // namespace

int main() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq") ||
      !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl")) {
    std::fprintf(stderr,
                 "vector_library_bench compares the AVX-512 versions: this CPU lacks them\n");
    return 2;
  }
  std::printf("Highway's target: %s, %zu float32 lanes\n\n", hwy::TargetName(HWY_STATIC_TARGET),
              hn::Lanes(hn::ScalableTag<float>()));
  std::printf("| function | SLEEF (u10) | SLEEF worst ulp | Highway | Highway worst ulp |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  Row<float>(
      "exp", -80, 80, +[](float x) { return std::exp(x); },
      &SleefLoop<float, __m512, Sleef_expf16_u10avx512f>,
      [](auto d, auto x) { return hn::Exp(d, x); });
  Row<double>(
      "exp", -700, 700, +[](double x) { return std::exp(x); },
      &SleefLoop<double, __m512d, Sleef_expd8_u10avx512f>,
      [](auto d, auto x) { return hn::Exp(d, x); });
  Row<float>(
      "log", 0, 3e38, +[](float x) { return std::log(x); },
      &SleefLoop<float, __m512, Sleef_logf16_u10avx512f>,
      [](auto d, auto x) { return hn::Log(d, x); });
  Row<double>(
      "log", 0, 1e308, +[](double x) { return std::log(x); },
      &SleefLoop<double, __m512d, Sleef_logd8_u10avx512f>,
      [](auto d, auto x) { return hn::Log(d, x); });
  Row<float>(
      "sin", -1e5, 1e5, +[](float x) { return std::sin(x); },
      &SleefLoop<float, __m512, Sleef_sinf16_u10avx512f>,
      [](auto d, auto x) { return hn::Sin(d, x); });
  Row<double>(
      "sin", -1e5, 1e5, +[](double x) { return std::sin(x); },
      &SleefLoop<double, __m512d, Sleef_sind8_u10avx512f>,
      [](auto d, auto x) { return hn::Sin(d, x); });
  return 0;
}
