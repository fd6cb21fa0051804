// compute_bench: one lazy-array pipeline on existing float32 Zarr inputs, written to Zarr
// with Array::to_zarr; prints one JSON line with the seconds, the peak RSS and the plan's
// memory projection next to what each op measured.
//
//   compute_bench --scenario dewpoint --t2 t2.zarr --rh rh.zarr --out td.zarr
//                 [--allowed-mem 512MB] [--reserved-mem 100MB] [--threads 0]
//                 [--codec blosc:lz4:5:shuffle|none] [--tile 4096] [--pool SIZE]
//   compute_bench --scenario negate_astype --x t2.zarr --out neg.zarr
//
// Scenarios (every one writes one array of the inputs' shape and chunks):
//   dewpoint       es = 0.611 * exp(5423 * ((1/273) - (1/t2)))
//                  e  = es * rh / 100
//                  td = ((1/273) - 0.0001844 * log(e / 0.611)) ** -1          (float32)
//   negate_astype  negative(x) -> astype(float64) -> astype(float32)          (float32)
//   negate_int32   negative(x).astype(int32)                                  (int32)
//   copy           positive(x): the read/decode + encode/write cost with (almost) no
//                  arithmetic, for profiling the other scenarios
//
// Scalars are C++ doubles, which Tessera treats as weak (x_float32 * 0.611 stays
// float32), as numpy does with Python floats; `** -1` is pow(x, -1.0).
//
// One run per process, so ru_maxrss is this run's peak (bench/compare_compute.py runs
// each tool in a fresh process). Opening the inputs (metadata only) and finalizing the
// plan for its projection are not timed; `seconds` is to_zarr() — planning again,
// reading, computing, encoding, writing and moving the array into place — and
// `cpu_seconds` the user + system CPU time of the same stretch (less disturbed than wall
// time when other work shares the cores).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
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
  std::string t2;
  std::string rh;
  std::string x;
  std::string out;
  std::string allowed_mem = "512MB";
  std::string reserved_mem = "100MB";
  std::string codec = "blosc:lz4:5:shuffle";
  std::string pool;  // "" = the library's default buffer pool capacity
  int threads = 0;
  tessera::Index tile = 4096;
  bool fuse = true;
  bool plan = false;
};

struct Pipeline {
  tessera::Array output;
  std::vector<tessera::Array> inputs;
};

// The dew point from temperature (K) and relative humidity (%), written as the formula.
tessera::Array DewPoint(const tessera::Array& t2, const tessera::Array& rh) {
  const tessera::Array es = 0.611 * tessera::exp(5423.0 * ((1.0 / 273) - (1.0 / t2)));
  const tessera::Array e = es * rh / 100.0;
  return tessera::pow((1.0 / 273) - 0.0001844 * tessera::log(e / 0.611), -1.0);
}

Pipeline Build(const Options& options, const tessera::Spec& spec) {
  if (options.scenario == "dewpoint") {
    if (options.t2.empty() || options.rh.empty()) {
      throw tessera::InvalidArgument("scenario dewpoint needs --t2 and --rh");
    }
    const tessera::Array t2 = tessera::from_zarr(options.t2, spec);
    const tessera::Array rh = tessera::from_zarr(options.rh, spec);
    return {DewPoint(t2, rh), {t2, rh}};
  }
  const std::string& path = options.x.empty() ? options.t2 : options.x;
  if (path.empty()) throw tessera::InvalidArgument("scenario " + options.scenario + " needs --x");
  const tessera::Array x = tessera::from_zarr(path, spec);
  if (options.scenario == "negate_astype") {
    return {tessera::negative(x).astype(tessera::float64).astype(tessera::float32), {x}};
  }
  if (options.scenario == "negate_int32") return {(-x).astype(tessera::int32), {x}};
  return {tessera::positive(x), {x}};  // copy
}

nlohmann::ordered_json Run(const Options& options) {
  tessera::Spec spec;
  spec.set_allowed_mem(options.allowed_mem);
  spec.set_reserved_mem(options.reserved_mem);
  spec.max_workers = options.threads;
  spec.validate();
  if (!options.pool.empty()) tessera::SetBufferPoolCapacity(tessera::parse_bytes(options.pool));

  const std::int64_t baseline_rss = tessera::CurrentRssBytes();
  const Pipeline pipeline = Build(options, spec);

  tessera::ToZarrOptions write;
  if (options.codec == "none") {
    write.compressor = std::nullopt;
  } else {
    write.compressor = tessera::ParseCodecSpec(options.codec);
  }
  write.compute.plan.fuse = options.fuse;
  write.compute.plan.tile_elements = options.tile;
  write.compute.execute.progress = tessera::ProgressMode::kNever;
  tessera::ExecutionReport report;
  write.compute.report = &report;

  // The plan to_zarr will run, finalized here for its projection (runs nothing).
  tessera::ZarrTarget target;
  target.directory = options.out;
  target.compressor = write.compressor;
  const tessera::FinalizedPlan plan = tessera::Finalize(
      {tessera::PlanOutput{pipeline.output.node(), target}}, spec, write.compute.plan);
  if (options.plan) std::cerr << plan.summary();

  const double cpu_start = CpuSeconds();
  const Clock::time_point start = Clock::now();
  pipeline.output.to_zarr(options.out, write);
  const double seconds = SecondsSince(start);
  const double cpu_seconds = CpuSeconds() - cpu_start;

  std::int64_t input_bytes = 0;
  for (const tessera::Array& input : pipeline.inputs) input_bytes += input.nbytes();
  nlohmann::ordered_json result;
  result["tool"] = "tessera";
  result["scenario"] = options.scenario;
  result["seconds"] = seconds;
  result["cpu_seconds"] = cpu_seconds;
  result["input_bytes"] = input_bytes;
  result["output_bytes"] = pipeline.output.nbytes();
  result["shape"] = pipeline.output.shape();
  result["chunks"] = pipeline.output.chunks();
  result["dtype"] = pipeline.output.dtype().name();
  result["codec"] = write.compressor ? tessera::DescribeCodec(*write.compressor) : "none";
  result["tile_elements"] = options.tile;
  bench::AddMemoryReport(result, spec, plan, report, baseline_rss);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "Run one lazy-array pipeline on Zarr inputs with Tessera, write the result "
      "to Zarr; prints one JSON line",
      "compute_bench");
  Options options;
  app.add_option("--scenario", options.scenario, "dewpoint, negate_astype, negate_int32, copy")
      ->required()
      ->check(CLI::IsMember({"dewpoint", "negate_astype", "negate_int32", "copy"}));
  app.add_option("--t2", options.t2, "Temperature input (K), float32 Zarr (dewpoint)");
  app.add_option("--rh", options.rh, "Relative humidity input (%), float32 Zarr (dewpoint)");
  app.add_option("--x", options.x, "The input of the other scenarios (default: --t2)");
  app.add_option("--out", options.out, "Directory of the Zarr array written")->required();
  app.add_option("--allowed-mem", options.allowed_mem, "Spec allowed_mem (per task)");
  app.add_option("--reserved-mem", options.reserved_mem, "Spec reserved_mem");
  app.add_option("--threads", options.threads, "Spec max_workers, 0 = hardware concurrency");
  app.add_option("--codec", options.codec, "Output codec spec, or none");
  app.add_option("--tile", options.tile, "Elements per tile of a fused elementwise chain");
  app.add_option("--pool", options.pool, "Buffer pool capacity (size), default the library's");
  app.add_flag("--fuse,!--no-fuse", options.fuse, "Do not fuse (each op a stored intermediate)");
  app.add_flag("--plan", options.plan, "Print the plan's summary to stderr");
  CLI11_PARSE(app, argc, argv);

  try {
    std::cout << Run(options).dump() << std::endl;
  } catch (const std::exception& error) {
    std::cerr << "compute_bench: error: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
