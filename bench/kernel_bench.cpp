// kernel_bench: throughput of the elementwise kernels on one tile of 4096 elements (the
// size a fused chain evaluates at a time; 16-32 KiB stays in L1).
//
//   build-dir/bench/kernel_bench --benchmark_min_time=0.2
//
// "per_element" is the time per output element (the inverse of items_per_second).
// TESSERA_VECTOR_MATH=none|avx2 compares the vector kernels with narrower ones
// (kernels/vector_math.hpp).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/elementwise_kernels.hpp"

namespace {

using tessera::DType;
namespace kernels = tessera::kernels;

constexpr std::int64_t kTile = 4096;

// Values in [0.5, 2.5): finite for exp and positive for log, as typical data.
std::vector<std::byte> Tile(DType dtype) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(kTile * dtype.itemsize()));
  tessera::VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* values = reinterpret_cast<T*>(bytes.data());
    for (std::int64_t i = 0; i < kTile; ++i) {
      const double value = 0.5 + static_cast<double>(i % 1000) / 500.0;
      if constexpr (tessera::kIsComplex<T>) {
        values[i] = T(static_cast<typename T::value_type>(value));
      } else {
        values[i] = static_cast<T>(value);
      }
    }
  });
  return bytes;
}

void Report(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * kTile);
  state.counters["per_element"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kTile),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Binary(benchmark::State& state, kernels::BinaryOp op, DType dtype) {
  const kernels::Signature signature = kernels::ResolveBinary(op, dtype, dtype);
  const kernels::BinaryKernel kernel = kernels::GetBinaryKernel(op, dtype);
  const std::vector<std::byte> a = Tile(dtype);
  const std::vector<std::byte> b = Tile(dtype);
  std::vector<std::byte> out(static_cast<std::size_t>(kTile * signature.output.itemsize()));
  for (auto _ : state) {
    kernel(a.data(), b.data(), out.data(), kTile);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state);
}

void BM_Unary(benchmark::State& state, kernels::UnaryOp op, DType dtype) {
  const kernels::Signature signature = kernels::ResolveUnary(op, dtype);
  const kernels::UnaryKernel kernel = kernels::GetUnaryKernel(op, dtype);
  const std::vector<std::byte> in = Tile(dtype);
  std::vector<std::byte> out(static_cast<std::size_t>(kTile * signature.output.itemsize()));
  for (auto _ : state) {
    kernel(in.data(), out.data(), kTile);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state);
}

void BM_Cast(benchmark::State& state, DType from, DType to) {
  const kernels::CastKernel kernel = kernels::GetCastKernel(from, to);
  const std::vector<std::byte> in = Tile(from);
  std::vector<std::byte> out(static_cast<std::size_t>(kTile * to.itemsize()));
  for (auto _ : state) {
    kernel(in.data(), out.data(), kTile);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state);
}

using kernels::BinaryOp;
using kernels::UnaryOp;
using tessera::float32;
using tessera::float64;
using tessera::int32;
using tessera::int64;

BENCHMARK_CAPTURE(BM_Binary, add_float32, BinaryOp::kAdd, float32);
BENCHMARK_CAPTURE(BM_Binary, add_float64, BinaryOp::kAdd, float64);
BENCHMARK_CAPTURE(BM_Binary, multiply_float32, BinaryOp::kMultiply, float32);
BENCHMARK_CAPTURE(BM_Binary, multiply_float64, BinaryOp::kMultiply, float64);
BENCHMARK_CAPTURE(BM_Binary, divide_float32, BinaryOp::kDivide, float32);
BENCHMARK_CAPTURE(BM_Binary, divide_float64, BinaryOp::kDivide, float64);
BENCHMARK_CAPTURE(BM_Binary, pow_float32, BinaryOp::kPow, float32);
BENCHMARK_CAPTURE(BM_Binary, pow_float64, BinaryOp::kPow, float64);
BENCHMARK_CAPTURE(BM_Unary, exp_float32, UnaryOp::kExp, float32);
BENCHMARK_CAPTURE(BM_Unary, exp_float64, UnaryOp::kExp, float64);
BENCHMARK_CAPTURE(BM_Unary, log_float32, UnaryOp::kLog, float32);
BENCHMARK_CAPTURE(BM_Unary, log_float64, UnaryOp::kLog, float64);
BENCHMARK_CAPTURE(BM_Unary, sin_float32, UnaryOp::kSin, float32);
BENCHMARK_CAPTURE(BM_Unary, sin_float64, UnaryOp::kSin, float64);
BENCHMARK_CAPTURE(BM_Unary, tanh_float32, UnaryOp::kTanh, float32);
BENCHMARK_CAPTURE(BM_Unary, sqrt_float64, UnaryOp::kSqrt, float64);
BENCHMARK_CAPTURE(BM_Cast, float32_to_float64, float32, float64);
BENCHMARK_CAPTURE(BM_Cast, float64_to_float32, float64, float32);
BENCHMARK_CAPTURE(BM_Cast, float32_to_int32, float32, int32);
BENCHMARK_CAPTURE(BM_Cast, float64_to_int64, float64, int64);

}  // namespace

BENCHMARK_MAIN();
