// request_cost_bench: what one request to the directory store costs, in the planner's
// byte-equivalents (src/plan/request_cost.hpp).
//
//   build-dir/bench/request_cost_bench [DIR]   (default: the system temp dir)
//
// Writes N values of each size through DirectoryStore (write to a temporary name,
// rename) into a directory just made, erases them and writes them again into the same
// directory, reads them (open, read, close), and times a blosc-lz4 encode + decode of an 8 MiB
// float64 chunk, the pipeline's per-byte work. The fixed part of a request is the time
// of a 4 KiB value (its bytes are negligible); its price in bytes is that time at the
// pipeline's rate. Prints the table and the price against the planner's constant.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "bench_report.hpp"
#include "request_cost.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/directory_store.hpp"

namespace {

using bench::Clock;
using bench::SecondsSince;

struct RequestTimes {
  double fresh_write_us = 0;  // into a directory just made
  double write_us = 0;        // into the same directory again, its files erased
  double read_us = 0;
};

RequestTimes TimeRequests(const std::filesystem::path& root, std::int64_t size, int count) {
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  const auto store = tessera::DirectoryStore::Open(root);
  std::vector<std::byte> value(static_cast<std::size_t>(size), std::byte{1});
  auto write_all = [&] {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < count; ++i) store->Set("c/" + std::to_string(i), value);
    return SecondsSince(start) / count * 1e6;
  };
  RequestTimes times;
  times.fresh_write_us = write_all();
  for (int i = 0; i < count; ++i) store->Erase("c/" + std::to_string(i));
  times.write_us = write_all();
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < count; ++i) {
    if (!store->Get("c/" + std::to_string(i))) std::fprintf(stderr, "missing value %d\n", i);
  }
  times.read_us = SecondsSince(start) / count * 1e6;
  std::filesystem::remove_all(root);
  return times;
}

// Bytes per microsecond of blosc-lz4 encode + decode of smooth float64 data.
double PipelineBytesPerMicrosecond() {
  constexpr std::int64_t kBytes = 8 << 20;
  tessera::Buffer raw(kBytes);
  for (std::int64_t i = 0; i < kBytes / 8; ++i) {
    const double x = std::sin(static_cast<double>(i) * 1e-4) * 100.0;
    std::memcpy(raw.data() + i * 8, &x, 8);
  }
  const auto codec = tessera::MakeCodec(tessera::ParseCodecSpec("blosc-lz4"));
  tessera::Buffer out(kBytes);
  constexpr int kRounds = 10;
  const Clock::time_point start = Clock::now();
  for (int round = 0; round < kRounds; ++round) {
    const tessera::Buffer encoded = codec->Encode(raw.span(), 8);
    codec->Decode(encoded.span(), out.span());
  }
  return static_cast<double>(kBytes) * kRounds / (SecondsSince(start) * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path base =
      argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::temp_directory_path();
  const std::filesystem::path root = base / "tessera-request-cost-bench";
  std::printf(
      "| value size | values | write us/request (fresh directory) | write us/request (same "
      "directory again) | read us/request |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  double fixed_us = 0;
  double fresh_fixed_us = 0;
  for (const std::int64_t size : {std::int64_t{4} << 10, std::int64_t{64} << 10,
                                  std::int64_t{1} << 20, std::int64_t{4} << 20}) {
    const int count = size <= (64 << 10) ? 5000 : 200;
    const RequestTimes times = TimeRequests(root, size, count);
    if (size == (4 << 10)) {
      fixed_us = (times.write_us + times.read_us) / 2;
      fresh_fixed_us = (times.fresh_write_us + times.read_us) / 2;
    }
    std::printf("| %lld KiB | %d | %.1f | %.1f | %.1f |\n", static_cast<long long>(size >> 10),
                count, times.fresh_write_us, times.write_us, times.read_us);
  }
  const double rate = PipelineBytesPerMicrosecond();
  std::printf("\npipeline (blosc-lz4 encode + decode, 8 MiB float64): %.2f GB/s\n", rate / 1e3);
  const tessera::planner::RequestCost& planner = tessera::planner::kDirectoryRequestCost;
  for (const auto& [what, us] : {std::pair{"same directory again", fixed_us},
                                 std::pair{"fresh directory", fresh_fixed_us}}) {
    std::printf(
        "%s: fixed part of a request (4 KiB, write and read averaged) %.1f us, price %.0f KiB "
        "(the planner's: %.0f KiB), 32 requests' worth %.1f MiB (the planner's floor: %.1f "
        "MiB)\n",
        what, us, us * rate / 1024, planner.request_bytes / 1024, us * rate * 32 / (1 << 20),
        static_cast<double>(planner.chunk_floor) / (1 << 20));
  }
  return 0;
}
