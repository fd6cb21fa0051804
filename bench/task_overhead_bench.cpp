// task_overhead_bench: what the executor adds per task, the worst case of many tiny
// tasks: an elementwise op over 20,000 blocks of 256 float64 (2 KiB), with history off
// and on (a fresh database under --dir). Every task is measured either way (its
// account, its thread's page faults); history adds one transaction per op.
//
//   build/bench/task_overhead_bench [--tasks 20000] [--repeat 5] [--dir /tmp]
//
// Prints one table row per executor and history setting: the best of --repeat runs,
// seconds and microseconds per task.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "CLI/CLI.hpp"
#include "bench_report.hpp"
#include "tessera/tessera.hpp"

namespace {

double BestSeconds(const tessera::Spec& spec, tessera::Index tasks, int repeat) {
  double best = 1e300;
  for (int run = 0; run < repeat; ++run) {
    const tessera::Array x =
        tessera::arange(0, static_cast<double>(tasks * 256), 1, tessera::float64, 256, spec);
    const tessera::Array y = x * 2.0 + 1.0;
    tessera::ComputeOptions options;
    options.execute.progress = tessera::ProgressMode::kNever;
    const bench::Clock::time_point start = bench::Clock::now();
    const tessera::NDArray values = y.compute(options);
    const double seconds = bench::SecondsSince(start);
    if (values.data<double>()[3] != 7.0) throw std::runtime_error("wrong result");
    best = std::min(best, seconds);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Per-task overhead of measurement and history on tiny tasks");
  tessera::Index tasks = 20000;
  int repeat = 5;
  std::string dir = std::filesystem::temp_directory_path().string();
  app.add_option("--tasks", tasks, "Tasks (blocks of 256 float64)")->check(CLI::PositiveNumber);
  app.add_option("--repeat", repeat, "Runs per setting; the best is kept")
      ->check(CLI::PositiveNumber);
  app.add_option("--dir", dir, "Folder for the history database")->check(CLI::ExistingDirectory);
  CLI11_PARSE(app, argc, argv);

  const std::filesystem::path database =
      std::filesystem::path(dir) / "task_overhead_bench.history.sqlite";
  std::printf("| executor | history | tasks | seconds | us per task |\n|---|---|---:|---:|---:|\n");
  for (const std::string executor : {"sync", "threads"}) {
    for (const bool history : {false, true}) {
      for (const char* suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(database.string() + suffix);
      }
      tessera::Spec spec;
      spec.allowed_mem = 64 << 20;
      spec.executor = executor;
      spec.max_workers = 2;
      spec.history = history ? database.string() : "off";
      const double seconds = BestSeconds(spec, tasks, repeat);
      std::printf("| %s | %s | %lld | %.4f | %.2f |\n", executor.c_str(), history ? "on" : "off",
                  static_cast<long long>(tasks), seconds,
                  seconds / static_cast<double>(tasks) * 1e6);
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(database.string() + suffix);
  }
  return 0;
}
