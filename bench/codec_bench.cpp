// codec_bench: encode and decode throughput of the chunk codecs on 8 MiB float64 chunks of
// smooth data (the shape of a simulation field), against a plain memcpy baseline.
//
//   build-dir/bench/codec_bench --benchmark_min_time=0.2
//
// bytes_per_second counts uncompressed bytes for both directions; the "ratio" counter is
// raw size / encoded size. Encode allocates its output each call, as in the write path;
// Decode writes into one reused chunk buffer, as the read path does.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "tessera/core/buffer.hpp"
#include "tessera/storage/codec.hpp"

namespace {

// 8 MiB: a typical Zarr chunk size for float64 arrays (1024 x 1024 elements).
constexpr std::int64_t kChunkBytes = 8 << 20;
constexpr std::int64_t kItemsize = 8;

const tessera::Buffer& SmoothChunk() {
  static const tessera::Buffer chunk = [] {
    tessera::Buffer buffer(kChunkBytes);
    const std::int64_t count = kChunkBytes / kItemsize;
    for (std::int64_t index = 0; index < count; ++index) {
      const double value = std::sin(static_cast<double>(index) * 1e-4) * 100.0 +
                           std::cos(static_cast<double>(index) * 3e-3);
      std::memcpy(buffer.data() + index * kItemsize, &value, sizeof(value));
    }
    return buffer;
  }();
  return chunk;
}

void BM_Encode(benchmark::State& state, const char* spec) {
  const std::unique_ptr<tessera::Codec> codec = tessera::MakeCodec(tessera::ParseCodecSpec(spec));
  const tessera::Buffer& raw = SmoothChunk();
  std::int64_t encoded_size = 0;
  for (auto _ : state) {
    tessera::Buffer encoded = codec->Encode(raw.span(), kItemsize);
    encoded_size = encoded.size();
    benchmark::DoNotOptimize(encoded.data());
  }
  state.SetBytesProcessed(state.iterations() * kChunkBytes);
  state.counters["ratio"] = static_cast<double>(kChunkBytes) / static_cast<double>(encoded_size);
  state.SetLabel(tessera::DescribeCodec(codec->config()));
}

void BM_Decode(benchmark::State& state, const char* spec) {
  const std::unique_ptr<tessera::Codec> codec = tessera::MakeCodec(tessera::ParseCodecSpec(spec));
  const tessera::Buffer encoded = codec->Encode(SmoothChunk().span(), kItemsize);
  tessera::Buffer out(kChunkBytes);
  std::memset(out.data(), 0, static_cast<std::size_t>(kChunkBytes));  // fault the pages in once
  for (auto _ : state) {
    codec->Decode(encoded.span(), out.span());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kChunkBytes);
  state.counters["ratio"] = static_cast<double>(kChunkBytes) / static_cast<double>(encoded.size());
  state.SetLabel(tessera::DescribeCodec(codec->config()));
}

// Baselines for "no codec": copying a chunk into a fresh buffer (the write path) and into
// a reused one (the read path).
void BM_MemcpyFreshBuffer(benchmark::State& state) {
  const tessera::Buffer& raw = SmoothChunk();
  for (auto _ : state) {
    tessera::Buffer copy = tessera::Buffer::CopyOf(raw.span());
    benchmark::DoNotOptimize(copy.data());
  }
  state.SetBytesProcessed(state.iterations() * kChunkBytes);
}

void BM_MemcpyReusedBuffer(benchmark::State& state) {
  const tessera::Buffer& raw = SmoothChunk();
  tessera::Buffer out(kChunkBytes);
  std::memset(out.data(), 0, static_cast<std::size_t>(kChunkBytes));
  for (auto _ : state) {
    std::memcpy(out.data(), raw.data(), static_cast<std::size_t>(kChunkBytes));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kChunkBytes);
}

// Warm-up lets malloc settle on reusing freed chunk-sized blocks: first-touch page faults
// of fresh 8 MiB blocks otherwise dominate short runs (badly so inside VMs).
constexpr double kWarmUpSeconds = 0.1;

BENCHMARK(BM_MemcpyFreshBuffer)->Unit(benchmark::kMillisecond)->MinWarmUpTime(kWarmUpSeconds);
BENCHMARK(BM_MemcpyReusedBuffer)->Unit(benchmark::kMillisecond)->MinWarmUpTime(kWarmUpSeconds);

#define TESSERA_CODEC_BENCHMARKS(name, spec) \
  BENCHMARK_CAPTURE(BM_Encode, name, spec)   \
      ->Unit(benchmark::kMillisecond)        \
      ->MinWarmUpTime(kWarmUpSeconds);       \
  BENCHMARK_CAPTURE(BM_Decode, name, spec)   \
      ->Unit(benchmark::kMillisecond)        \
      ->MinWarmUpTime(kWarmUpSeconds)

TESSERA_CODEC_BENCHMARKS(blosc_lz4_shuffle, "blosc:lz4:5:shuffle");
TESSERA_CODEC_BENCHMARKS(zstd_1, "zstd:1");
TESSERA_CODEC_BENCHMARKS(lz4, "lz4");
TESSERA_CODEC_BENCHMARKS(zlib_1, "zlib:1");

}  // namespace

BENCHMARK_MAIN();
