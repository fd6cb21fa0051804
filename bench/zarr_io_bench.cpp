// zarr_io_bench: write or read a float64 Zarr array (v2, v3, or v3 sharded) with
// tessera::ZarrArray on a DirectoryStore and print one JSON line with seconds, GB/s and
// peak RSS.
//
//   zarr_io_bench --op write --dir /tmp/a.zarr [--shape 10000,10000] [--chunks 1000,1000]
//                 [--zarr-format 2|3] [--shards 2500,2500]
//                 [--codec blosc-lz4|blosc-zstd|zstd|none|SPEC] [--threads 0]
//   zarr_io_bench --op read --dir /tmp/a.zarr [--threads 0] [--verify]
//
// One operation per process, so ru_maxrss is that operation's peak (bench/compare_io.py
// and bench/compare_zarr_v3.py run each in a fresh process). Generating the data is not
// timed; only opening the store and Create() + Write() / Open() + Read() are. GB/s is
// logical (decoded) bytes / seconds, 1 GB = 1e9 bytes.
//
// Codecs: the named ones are the settings every tool of compare_zarr_v3.py uses —
// blosc-lz4: blosc, cname lz4, clevel 5, byte shuffle, typesize 8 (the itemsize), automatic
// block size; blosc-zstd: the same with cname zstd; zstd: level 3, no content checksum;
// none: no compressor. Any other value is a ParseCodecSpec string ("blosc:lz4:5:shuffle",
// "zstd:3"). Zarr v2 writes the numcodecs compressor of that name, Zarr v3 writes the
// codecs [bytes (little endian), that compressor] (no crc32c), and --shards makes a
// sharded v3 array: --chunks are then the inner chunks and each shard of --shards
// (multiples of --chunks) holds them, with the shard index [bytes, crc32c] at its end —
// what zarr-python writes for create_array(chunks=..., shards=...).
//
// Element at C-order flat index i: (i % 9973) * 0.001 — periodic, so codecs find some
// redundancy without the data being trivially constant. The Python scripts write the same.
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
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
  std::string shards;  // empty: not sharded
  std::string codec = "blosc-lz4";
  int zarr_format = 2;
  int threads = 0;
  bool verify = false;
};

// The codec a --codec value names; nullopt for "none". The named settings are the ones
// compare_zarr_v3.py gives zarr-python, zarrs-python and TensorStore (see the header).
std::optional<tessera::CodecConfig> CodecOf(const std::string& name) {
  static const std::map<std::string, std::string> kNamed = {
      {"blosc-lz4", "blosc:lz4:5:shuffle"},
      {"blosc-zstd", "blosc:zstd:5:shuffle"},
      {"zstd", "zstd:3"},
  };
  if (name == "none") return std::nullopt;
  const auto named = kNamed.find(name);
  tessera::CodecConfig config =
      tessera::ParseCodecSpec(named == kNamed.end() ? name : named->second);
  config.checksum = false;  // zstd: no content checksum, as numcodecs' and v3's default
  return config;
}

tessera::ZarrMetadata MetadataOf(const Options& options) {
  const Shape shape = tessera::ParseShape(options.shape, "--shape");
  const Shape chunks = tessera::ParseShape(options.chunks, "--chunks");
  const std::optional<tessera::CodecConfig> codec = CodecOf(options.codec);
  if (options.zarr_format == 3) {
    std::optional<Shape> shards;
    if (!options.shards.empty()) shards = tessera::ParseShape(options.shards, "--shards");
    return tessera::MakeV3Metadata(shape, chunks, tessera::float64, codec, shards,
                                   /*checksum=*/false);
  }
  if (!options.shards.empty()) {
    throw tessera::InvalidArgument("--shards needs --zarr-format 3 (v2 has no sharding)");
  }
  tessera::ZarrMetadata metadata;
  metadata.shape = shape;
  metadata.chunks = chunks;
  metadata.dtype = tessera::float64;
  metadata.compressor = codec;
  return metadata;
}

// What the array's metadata says: its format, (inner) chunks, shards and codecs.
void DescribeArray(const tessera::ZarrMetadata& metadata, nlohmann::ordered_json& result) {
  result["zarr_format"] = metadata.zarr_format;
  result["codec"] = tessera::DescribeCodecs(metadata);
  result["shape"] = metadata.shape;
  result["chunks"] = metadata.read_chunks();
  const std::optional<Shape> shards = tessera::ShardShape(metadata);
  result["shards"] = shards ? nlohmann::ordered_json(*shards) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json RunWrite(const Options& options) {
  const tessera::ZarrMetadata metadata = MetadataOf(options);
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
  DescribeArray(array.metadata(), result);
  result["seconds"] = elapsed.count();
  result["logical_bytes"] = data.nbytes();
  result["stored_bytes"] = array.CountStoredChunks().bytes;  // after timing
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
  DescribeArray(array.metadata(), result);
  result["seconds"] = elapsed.count();
  result["logical_bytes"] = data.nbytes();
  result["stored_bytes"] = array.CountStoredChunks().bytes;  // after timing
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
  app.add_option("--chunks", options.chunks, "Chunk shape; the inner chunks when sharded (write)");
  app.add_option("--zarr-format", options.zarr_format, "Zarr format, 2 or 3 (write)")
      ->check(CLI::IsMember({2, 3}));
  app.add_option("--shards", options.shards,
                 "Shard shape, multiples of --chunks: a sharded v3 array (write)");
  app.add_option("--codec", options.codec,
                 "blosc-lz4, blosc-zstd, zstd, none, or a codec spec such as blosc:lz4:5 (write)");
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
