// zarr_tool: a test-only program that reads and writes Zarr v2 arrays through
// Tessera's public API, so Python tests can check interop with zarr-python both ways.
//
//   zarr_tool dump STORE OUT.bin [--path NAME]
//     Reads the whole array (ZarrArray::Open + Read), writes its bytes to OUT.bin in
//     C order and native (little-endian) byte order, and prints
//     {"dtype": "float64", "shape": [a, b], "dimension_names": [...]} on stdout.
//
//   zarr_tool write STORE --dtype NAME --shape a,b --chunks c,d [--codec SPEC|none]
//       [--filters SPEC,SPEC,...] [--order C|F] [--byteorder <|>] [--separator ./] [--fill VALUE]
//       [--dims x,y] [--skip-blocks i,j,...] [--path NAME] [--group]
//     Creates the array and writes every block except the skipped ones (linear block
//     indices in C order). Element at C-order flat index i holds:
//       float32/float64: fmod(i * 0.37, 101) - 50.5   (computed in double, then cast)
//       integers:        i * 7919 - 12345 in int64, wrapped into the dtype (modular)
//       bool:            i % 3 == 0
//     --group writes .zgroup at the store root (the array then normally has --path).
//     --filters lists codec specs applied, in order, before the compressor.
//
//   zarr_tool batch
//     Runs many jobs in this one process (the interop matrix writes and reads hundreds
//     of arrays; one process per array would be slow, under ASan most of all). Reads a
//     JSON array of jobs from stdin and prints one JSON line per job, in order: what
//     write or dump prints, or {"error": "..."} when the job failed (the others still
//     run). A job is an object: {"command": "write", "store": ..., and the write
//     options by their long names without the dashes ("dtype", "shape", "skip-blocks",
//     ...; values as strings, "group" a boolean)} or {"command": "dump", "store": ...,
//     "out": ..., "path": ...}.
//
// Exit codes: 0 ok, 1 a Tessera error (batch: any job failed), 2 a usage error.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"
#include "tessera/tessera.hpp"

namespace {

using tessera::Index;
using tessera::Shape;

std::vector<std::string> SplitNames(const std::string& text) {
  std::vector<std::string> names;
  if (text.empty()) return names;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) names.push_back(item);
  return names;
}

// "NaN", "Infinity", "-Infinity", "null", "true", "false", an integer or a float.
tessera::FillValue ParseFill(const std::string& text, tessera::DType dtype) {
  if (text == "null") return std::monostate{};
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (text == "true") return true;
  if (text == "false") return false;
  std::size_t used = 0;
  try {
    if (dtype.kind() == tessera::DTypeKind::kFloat) {
      const double value = std::stod(text, &used);
      if (used == text.size()) return value;
    } else if (dtype.kind() == tessera::DTypeKind::kUnsignedInt && !text.starts_with('-')) {
      const unsigned long long value = std::stoull(text, &used);
      if (used == text.size()) return static_cast<std::uint64_t>(value);
    } else {
      const long long value = std::stoll(text, &used);
      if (used == text.size()) return static_cast<std::int64_t>(value);
    }
  } catch (const std::exception&) {
  }
  throw tessera::InvalidArgument("--fill: cannot parse \"" + text + "\"");
}

// The deterministic value at flat index i (see the file comment).
template <class T>
T ValueAt(Index flat) {
  if constexpr (std::is_same_v<T, bool>) {
    return flat % 3 == 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::fmod(static_cast<double>(flat) * 0.37, 101.0) - 50.5);
  } else if constexpr (tessera::kIsComplex<T>) {
    using R = typename T::value_type;
    return T(ValueAt<R>(flat), ValueAt<R>(flat + 1));
  } else {
    const std::int64_t wide = flat * 7919 - 12345;
    return static_cast<T>(wide);  // modular conversion, as numpy's astype
  }
}

// The block's elements, C order inside the block, from the array-wide formula.
tessera::NDArray MakeBlock(const tessera::ChunkGrid& grid, std::span<const Index> block,
                           tessera::DType dtype) {
  const tessera::Region region = grid.BlockRegion(block);
  tessera::NDArray data(region.shape, dtype);
  const Shape strides = tessera::CStrides(grid.shape());
  const int ndim = grid.ndim();
  tessera::VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::span<T> values = data.mutable_data<T>();
    Shape position(static_cast<std::size_t>(ndim), 0);  // inside the block
    for (Index element = 0; element < data.size(); ++element) {
      Index flat = 0;
      for (int dim = 0; dim < ndim; ++dim) {
        const auto d = static_cast<std::size_t>(dim);
        flat += (region.start[d] + position[d]) * strides[d];
      }
      values[static_cast<std::size_t>(element)] = ValueAt<T>(flat);
      for (int dim = ndim - 1; dim >= 0; --dim) {
        const auto d = static_cast<std::size_t>(dim);
        if (++position[d] < region.shape[d]) break;
        position[d] = 0;
      }
    }
  });
  return data;
}

struct WriteOptions {
  std::string store;
  std::string path;
  std::string dtype;
  std::string shape;
  std::string chunks;
  std::string codec = "none";
  std::string filters;  // comma-separated codec specs
  std::string order = "C";
  std::string byteorder = "<";
  std::string separator = ".";
  std::string fill = "null";
  std::string dims;
  std::string skip_blocks;
  bool group = false;
};

nlohmann::json RunWrite(const WriteOptions& options) {
  tessera::ZarrMetadata metadata;
  metadata.dtype = tessera::DType::FromName(options.dtype);
  metadata.shape = tessera::ParseShape(options.shape, "--shape");
  metadata.chunks = tessera::ParseShape(options.chunks, "--chunks");
  if (options.codec != "none") metadata.compressor = tessera::ParseCodecSpec(options.codec);
  for (const std::string& filter : SplitNames(options.filters)) {
    metadata.filters.push_back(tessera::ParseCodecSpec(filter));
  }
  metadata.order = options.order.at(0);
  metadata.byte_order =
      options.byteorder == ">" ? tessera::ByteOrder::kBig : tessera::ByteOrder::kLittle;
  metadata.dimension_separator = options.separator.at(0);
  metadata.fill_value = ParseFill(options.fill, metadata.dtype);
  tessera::ZarrAttributes attributes;
  attributes.dimension_names = SplitNames(options.dims);

  auto store = tessera::DirectoryStore::Open(options.store);
  if (options.group) tessera::CreateZarrGroup(*store, "");
  const tessera::ZarrArray array =
      tessera::ZarrArray::Create(store, options.path, metadata, attributes);

  std::set<Index> skipped;
  for (const Index block : tessera::ParseShape(options.skip_blocks, "--skip-blocks")) {
    skipped.insert(block);
  }
  const tessera::ChunkGrid& grid = array.grid();
  Index written = 0;
  for (Index linear = 0; linear < grid.num_blocks(); ++linear) {
    if (skipped.contains(linear)) continue;
    const Shape block = grid.BlockIndex(linear);
    array.WriteBlock(block, MakeBlock(grid, block, metadata.dtype));
    ++written;
  }
  return nlohmann::json{{"chunks_written", written}};
}

nlohmann::json RunDump(const std::string& store_path, const std::string& path,
                       const std::string& out) {
  auto store = tessera::DirectoryStore::Open(
      store_path, tessera::DirectoryStore::Options{.create = false, .fsync = false});
  const tessera::ZarrArray array = tessera::ZarrArray::Open(store, path);
  const tessera::NDArray data = array.Read();
  std::ofstream file(out, std::ios::binary | std::ios::trunc);
  const std::span<const std::byte> bytes = data.bytes();
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) throw tessera::StorageError("cannot write " + out);
  return nlohmann::json{{"dtype", std::string(data.dtype().name())},
                        {"shape", data.shape()},
                        {"dimension_names", array.attributes().dimension_names}};
}

// One batch job (see the file comment); throws on a bad job or a failed operation.
nlohmann::json RunJob(const nlohmann::json& job) {
  if (!job.is_object()) throw tessera::InvalidArgument("a batch job must be a JSON object");
  const std::string command = job.value("command", "");
  const std::string store = job.value("store", "");
  if (store.empty()) throw tessera::InvalidArgument("a batch job needs \"store\"");
  if (command == "dump") return RunDump(store, job.value("path", ""), job.value("out", ""));
  if (command != "write") {
    throw tessera::InvalidArgument("a batch job's \"command\" must be write or dump, got \"" +
                                   command + "\"");
  }
  const WriteOptions defaults;
  WriteOptions options;
  options.store = store;
  options.path = job.value("path", defaults.path);
  options.dtype = job.value("dtype", defaults.dtype);
  options.shape = job.value("shape", defaults.shape);
  options.chunks = job.value("chunks", defaults.chunks);
  options.codec = job.value("codec", defaults.codec);
  options.filters = job.value("filters", defaults.filters);
  options.order = job.value("order", defaults.order);
  options.byteorder = job.value("byteorder", defaults.byteorder);
  options.separator = job.value("separator", defaults.separator);
  options.fill = job.value("fill", defaults.fill);
  options.dims = job.value("dims", defaults.dims);
  options.skip_blocks = job.value("skip-blocks", defaults.skip_blocks);
  options.group = job.value("group", defaults.group);
  if (options.order != "C" && options.order != "F") {
    throw tessera::InvalidArgument("order must be C or F, got \"" + options.order + "\"");
  }
  if (options.byteorder != "<" && options.byteorder != ">") {
    throw tessera::InvalidArgument("byteorder must be < or >, got \"" + options.byteorder + "\"");
  }
  if (options.separator != "." && options.separator != "/") {
    throw tessera::InvalidArgument("separator must be . or /, got \"" + options.separator + "\"");
  }
  return RunWrite(options);
}

int RunBatch() {
  nlohmann::json jobs;
  try {
    jobs = nlohmann::json::parse(std::cin);
  } catch (const nlohmann::json::exception& error) {
    std::cerr << "zarr_tool: error: batch: stdin is not JSON: " << error.what() << '\n';
    return 2;
  }
  if (!jobs.is_array()) {
    std::cerr << "zarr_tool: error: batch: stdin must hold a JSON array of jobs\n";
    return 2;
  }
  int status = 0;
  for (const nlohmann::json& job : jobs) {
    nlohmann::json result;
    try {
      result = RunJob(job);
    } catch (const std::exception& error) {
      result = nlohmann::json{{"error", error.what()}};
      status = 1;
    }
    std::cout << result.dump() << '\n';
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Reads and writes Zarr arrays with Tessera, for interop tests", "zarr_tool");
  app.require_subcommand(1);

  std::string dump_store, dump_out, dump_path;
  CLI::App* dump = app.add_subcommand("dump", "Read an array, write its raw C-order bytes");
  dump->add_option("STORE", dump_store)->required();
  dump->add_option("OUT", dump_out)->required();
  dump->add_option("--path", dump_path, "Array path inside the store");

  WriteOptions options;
  CLI::App* write = app.add_subcommand("write", "Write an array of formula values");
  write->add_option("STORE", options.store)->required();
  write->add_option("--path", options.path, "Array path inside the store");
  write->add_option("--dtype", options.dtype)->required();
  write->add_option("--shape", options.shape, "a,b,... (empty for 0-d)")->required();
  write->add_option("--chunks", options.chunks)->required();
  write->add_option("--codec", options.codec, "codec spec or none");
  write->add_option("--filters", options.filters, "codec specs, comma-separated, applied first");
  write->add_option("--order", options.order)->check(CLI::IsMember({"C", "F"}));
  write->add_option("--byteorder", options.byteorder)->check(CLI::IsMember({"<", ">"}));
  write->add_option("--separator", options.separator)->check(CLI::IsMember({".", "/"}));
  write->add_option("--fill", options.fill, "NaN, Infinity, null, true, false or a number");
  write->add_option("--dims", options.dims, "dimension names, comma-separated");
  write->add_option("--skip-blocks", options.skip_blocks, "linear block indices not to write");
  write->add_flag("--group", options.group, "Write .zgroup at the store root");

  app.add_subcommand("batch", "Run a JSON array of write and dump jobs read from stdin");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  try {
    if (dump->parsed()) {
      std::cout << RunDump(dump_store, dump_path, dump_out).dump() << '\n';
      return 0;
    }
    if (write->parsed()) {
      std::cout << RunWrite(options).dump() << '\n';
      return 0;
    }
    return RunBatch();
  } catch (const std::exception& error) {
    std::cerr << "zarr_tool: error: " << error.what() << '\n';
    return 1;
  }
}
