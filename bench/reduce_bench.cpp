// reduce_bench: one reduction of an existing Zarr array, computed into memory with
// Array::compute; prints one JSON line with the seconds, the peak RSS, the plan's memory
// projection next to what each op measured, and a checksum of the result.
//
//   reduce_bench --scenario mean0 --x x.zarr [--allowed-mem 512MB] [--reserved-mem 100MB]
//                [--threads 0] [--pool SIZE] [--save result.npy] [--plan]
//
// Scenarios:
//   mean0   mean(x, 0)     over the first axis (one value per column of a 2-d array)
//   sum     sum(x)         over every axis (a 0-d array)
//   sum0    sum(x, 0)
//   mean1   mean(x, 1)     over the last axis of a 2-d array
//   max     max(x)         over every axis
//   std0    std(x, 0)      partial moments (count, mean, M2) combined across blocks
// Results keep numpy's dtypes: float32 in, float32 out.
//
// One run per process, so ru_maxrss is this run's peak (bench/compare_reduce.py runs each
// tool in a fresh process). Opening the input (metadata only) and finalizing the plan for
// its projection are not timed; `seconds` is compute() — planning again, reading,
// decoding, reducing in rounds, gathering the result — and `cpu_seconds` the user +
// system CPU time of the same stretch. `checksum` is the sum of the result's values in
// double precision, `abs_checksum` the sum of their magnitudes; --save writes the result
// as a .npy file (float64 values, the result's shape) for an element-by-element check.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench_report.hpp"
#include "nlohmann/json.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/memory/process_memory.hpp"
#include "tessera/tessera.hpp"

namespace {

using bench::Clock;
using bench::CpuSeconds;
using bench::SecondsSince;

struct Options {
  std::string scenario;
  std::string x;
  std::string allowed_mem = "512MB";
  std::string reserved_mem = "100MB";
  std::string save;  // "" = do not write the result
  std::string pool;  // "" = the library's default buffer pool capacity
  int threads = 0;
  bool fuse = true;
  bool plan = false;
};

tessera::Array Build(const std::string& scenario, const tessera::Array& x) {
  if (scenario == "mean0") return tessera::mean(x, 0);
  if (scenario == "sum") return tessera::sum(x);
  if (scenario == "sum0") return tessera::sum(x, 0);
  if (scenario == "mean1") return tessera::mean(x, -1);
  if (scenario == "max") return tessera::max(x);
  return tessera::std(x, 0);  // std0
}

// The result as a NumPy .npy file (format 1.0): little-endian float64 values in C order.
void SaveNpy(const tessera::NDArray& result, const std::string& path) {
  std::string shape;  // a Python tuple: (), (3,), (3, 4)
  for (const tessera::Index extent : result.shape()) {
    shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
  }
  shape = "(" + shape + (result.ndim() == 1 ? ",)" : ")");
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + header length (2) + header + '\n', padded to 64 bytes.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  file.write("\x93NUMPY\x01\x00", 8);
  const auto length = static_cast<std::uint16_t>(header.size());
  const char length_bytes[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  file.write(length_bytes, 2);
  file.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (tessera::Index i = 0; i < result.size(); ++i) {
    const double value = result.GetAsDouble(i);  // x86-64: already little-endian
    char bytes[sizeof value];
    std::memcpy(bytes, &value, sizeof value);
    file.write(bytes, sizeof bytes);
  }
  if (!file) throw tessera::StorageError("cannot write " + path);
}

nlohmann::ordered_json Run(const Options& options) {
  tessera::Spec spec;
  spec.set_allowed_mem(options.allowed_mem);
  spec.set_reserved_mem(options.reserved_mem);
  spec.max_workers = options.threads;
  spec.validate();
  if (!options.pool.empty()) tessera::SetBufferPoolCapacity(tessera::parse_bytes(options.pool));

  const std::int64_t baseline_rss = tessera::CurrentRssBytes();
  const tessera::Array x = tessera::from_zarr(options.x, spec);
  const tessera::Array output = Build(options.scenario, x);

  tessera::ComputeOptions compute;
  compute.plan.fuse = options.fuse;
  compute.execute.progress = tessera::ProgressMode::kNever;
  tessera::ExecutionReport report;
  compute.report = &report;

  // The plan compute() will run, finalized here for its projection (runs nothing).
  const tessera::FinalizedPlan plan = output.plan(compute.plan);
  if (options.plan) std::cerr << plan.summary();

  const double cpu_start = CpuSeconds();
  const Clock::time_point start = Clock::now();
  const tessera::NDArray result = output.compute(compute);
  const double seconds = SecondsSince(start);
  const double cpu_seconds = CpuSeconds() - cpu_start;

  double checksum = 0;
  double abs_checksum = 0;
  for (tessera::Index i = 0; i < result.size(); ++i) {
    const double value = result.GetAsDouble(i);
    checksum += value;
    abs_checksum += std::abs(value);
  }
  if (!options.save.empty()) SaveNpy(result, options.save);

  nlohmann::ordered_json json;
  json["tool"] = "tessera";
  json["scenario"] = options.scenario;
  json["seconds"] = seconds;
  json["cpu_seconds"] = cpu_seconds;
  json["input_bytes"] = x.nbytes();
  json["input_shape"] = x.shape();
  json["input_chunks"] = x.chunks();
  json["shape"] = result.shape();
  json["dtype"] = result.dtype().name();
  json["checksum"] = checksum;
  json["abs_checksum"] = abs_checksum;
  json["first"] = result.size() > 0 ? result.GetAsDouble(0) : 0.0;
  bench::AddMemoryReport(json, spec, plan, report, baseline_rss);
  return json;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Run one reduction of a Zarr array with Tessera into memory; prints one JSON line",
               "reduce_bench");
  Options options;
  app.add_option("--scenario", options.scenario, "mean0, sum, sum0, mean1, max, std0")
      ->required()
      ->check(CLI::IsMember({"mean0", "sum", "sum0", "mean1", "max", "std0"}));
  app.add_option("--x", options.x, "The input, a Zarr array (directory)")->required();
  app.add_option("--allowed-mem", options.allowed_mem, "Spec allowed_mem (per task)");
  app.add_option("--reserved-mem", options.reserved_mem, "Spec reserved_mem");
  app.add_option("--threads", options.threads, "Spec max_workers, 0 = hardware concurrency");
  app.add_option("--pool", options.pool, "Buffer pool capacity (size), default the library's");
  app.add_option("--save", options.save, "Also write the result to this .npy file (float64)");
  app.add_flag("--fuse,!--no-fuse", options.fuse, "Do not fuse (each op a stored intermediate)");
  app.add_flag("--plan", options.plan, "Print the plan's summary to stderr");
  CLI11_PARSE(app, argc, argv);

  try {
    std::cout << Run(options).dump() << std::endl;
  } catch (const std::exception& error) {
    std::cerr << "reduce_bench: error: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
