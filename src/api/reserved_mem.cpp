#include "tessera/api/reserved_mem.hpp"

#include "tessera/api/creation.hpp"
#include "tessera/api/reduction.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/memory/process_memory.hpp"

namespace tessera {

std::int64_t measure_reserved_mem(const Spec& spec) {
  constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  Spec trivial;
  trivial.allowed_mem = 64 * kMiB;
  trivial.executor = spec.executor;
  trivial.max_workers = spec.max_workers;
  trivial.history = "off";
  trivial.validate();
  // 16 blocks of 64 KiB, more than one per worker, so every worker runs a task.
  const Array blocks = ones({16 * 8192}, float64, {8192}, trivial);
  ComputeOptions options;
  options.execute.progress = ProgressMode::kNever;
  options.execute.record_history = false;
  ExecutionReport report;
  options.report = &report;
  const NDArray total = sum(blocks).compute(options);
  if (total.data<double>()[0] != 16 * 8192) {
    throw Error("measure_reserved_mem: the trivial computation gave a wrong sum");
  }
  const std::int64_t peak = std::max(report.peak_rss_bytes, PeakRssBytes());
  if (peak <= 0) {
    throw Error(
        "measure_reserved_mem: this process's memory could not be read from "
        "/proc/self/status; set reserved_mem by hand (e.g. \"100MB\")");
  }
  return (peak + kMiB - 1) / kMiB * kMiB;
}

}  // namespace tessera
