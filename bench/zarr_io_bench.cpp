// zarr_io_bench: write or read a float64 Zarr array with tessera::ZarrArray on a
// DirectoryStore and print one JSON line with seconds, GB/s and peak RSS.
//
//   zarr_io_bench --op write --dir /tmp/a.zarr [--shape 10000,10000] [--chunks 1000,1000]
//                 [--codec blosc:lz4|none] [--threads 0]
//   zarr_io_bench --op read --dir /tmp/a.zarr [--threads 0] [--verify]
//
// One operation per process, so ru_maxrss is that operation's peak (bench/compare_io.py
// runs each in a fresh process). Generating the data is not timed; only Write() / Read()
// are. GB/s is logical (decoded) bytes / seconds, 1 GB = 1e9 bytes.
//
// Element at C-order flat index i: (i % 9973) * 0.001 — periodic, so codecs find some
// redundancy without the data being trivially constant. compare_io.py writes the same.
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Index;
using tessera::Shape;

constexpr Index kPeriod = 9973;  // a prime, so rows do not line up with chunks
constexpr double kStep = 0.001;  // keeps values small and exactly reproducible in numpy
constexpr double kBytesPerGB = 1e9;
constexpr std::int64_t kKibibyte = 1024;  // ru_maxrss is in KiB on Linux

std::int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * kKibibyte;
}

double ValueAt(Index flat) { return static_cast<double>(flat % kPeriod) * kStep; }

struct Options {
  std::string op;
  std::string dir;
  std::string shape = "10000,10000";
  std::string chunks = "1000,1000";
  std::string codec = "blosc:lz4";
  int threads = 0;
  bool verify = false;
};

nlohmann::ordered_json RunWrite(const Options& options) {
  tessera::ZarrMetadata metadata;
  metadata.shape = tessera::ParseShape(options.shape, "--shape");
  metadata.chunks = tessera::ParseShape(options.chunks, "--chunks");
  metadata.dtype = tessera::float64;
  if (options.codec != "none") metadata.compressor = tessera::ParseCodecSpec(options.codec);

  tessera::NDArray data(metadata.shape, tessera::float64);
  std::span<double> values = data.mutable_data<double>();
  for (Index flat = 0; flat < data.size(); ++flat) {
    values[static_cast<std::size_t>(flat)] = ValueAt(flat);
  }

  std::filesystem::remove_all(options.dir);
  const auto start = std::chrono::steady_clock::now();
  auto store = tessera::DirectoryStore::Open(options.dir);
  const tessera::ZarrArray array = tessera::ZarrArray::Create(store, "", metadata);
  array.Write(data, options.threads);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

  nlohmann::ordered_json result;
  result["codec"] = options.codec;
  result["seconds"] = elapsed.count();
  result["logical_bytes"] = data.nbytes();
  result["shape"] = metadata.shape;
  result["chunks"] = metadata.chunks;
  return result;
}

nlohmann::ordered_json RunRead(const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  auto store = tessera::DirectoryStore::Open(
      options.dir, tessera::DirectoryStore::Options{.create = false, .fsync = false});
  const tessera::ZarrArray array = tessera::ZarrArray::Open(store);
  const tessera::NDArray data = array.Read(options.threads);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

  if (options.verify) {
    const std::span<const double> values = data.data<double>();
    for (Index flat = 0; flat < data.size(); ++flat) {
      if (values[static_cast<std::size_t>(flat)] != ValueAt(flat)) {
        throw tessera::Error("verify: element " + std::to_string(flat) + " differs");
      }
    }
  }
  nlohmann::ordered_json result;
  const std::optional<tessera::CodecConfig>& codec = array.metadata().compressor;
  result["codec"] = codec ? tessera::DescribeCodec(*codec) : "none";
  result["seconds"] = elapsed.count();
  result["logical_bytes"] = data.nbytes();
  result["shape"] = array.metadata().shape;
  result["chunks"] = array.metadata().chunks;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Write or read a float64 Zarr array with Tessera; prints one JSON line",
               "zarr_io_bench");
  Options options;
  app.add_option("--op", options.op, "write or read")
      ->required()
      ->check(CLI::IsMember({"write", "read"}));
  app.add_option("--dir", options.dir, "Directory store of the array")->required();
  app.add_option("--shape", options.shape, "Array shape (write)");
  app.add_option("--chunks", options.chunks, "Chunk shape (write)");
  app.add_option("--codec", options.codec, "Codec spec, or none (write)");
  app.add_option("--threads", options.threads, "Threads, 0 = hardware concurrency");
  app.add_flag("--verify", options.verify, "Check every value after reading (not timed)");
  CLI11_PARSE(app, argc, argv);

  try {
    nlohmann::ordered_json result;
    result["tool"] = "tessera";
    result["op"] = options.op;
    result["threads"] = options.threads == 0 ? tessera::HardwareThreads() : options.threads;
    result.update(options.op == "write" ? RunWrite(options) : RunRead(options));
    const double seconds = result["seconds"].get<double>();
    result["gbps"] =
        static_cast<double>(result["logical_bytes"].get<std::int64_t>()) / kBytesPerGB / seconds;
    result["peak_rss_bytes"] = PeakRssBytes();
    std::cout << result.dump() << std::endl;
  } catch (const std::exception& error) {
    std::cerr << "zarr_io_bench: error: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
