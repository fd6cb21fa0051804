// What the C++ benchmark programs (compute_bench, reduce_bench) measure and print the
// same way: wall and CPU seconds, the process's peak RSS, and — next to the plan's memory
// projection — what each op measured (from the ExecutionReport). Header-only.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "nlohmann/json.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/tessera.hpp"

namespace bench {

using Clock = std::chrono::steady_clock;

// ru_maxrss of this process, in bytes (Linux reports KiB).
inline std::int64_t MaxRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

// User + system CPU seconds of this process (all its threads) so far.
inline double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& time) {
    return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

inline double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One op of the run: projected vs measured task memory, seconds, and its tasks' summed
// seconds (over seconds x workers: how busy the workers were).
inline nlohmann::ordered_json OpJson(const tessera::OpReport& op, const tessera::OpInfo* info,
                                     const std::vector<tessera::TaskRecord>& tasks) {
  nlohmann::ordered_json result;
  result["name"] = op.name;
  result["kind"] = op.kind;
  if (info != nullptr) result["fused"] = info->fused;
  result["tasks"] = op.tasks;
  result["projected_mem"] = op.projected_mem;
  result["measured_mem_max"] = op.measured_mem_max;
  result["measured_mem_median"] = op.measured_mem_median;
  result["measured_mem_p95"] = op.measured_mem_p95;
  result["measured_over_projected"] =
      op.projected_mem > 0
          ? static_cast<double>(op.measured_mem_max) / static_cast<double>(op.projected_mem)
          : 0.0;
  result["seconds"] = op.seconds;
  result["task_seconds_max"] = op.task_seconds_max;
  double task_seconds = 0;
  for (const tessera::TaskRecord& task : tasks) {
    if (task.op_name == op.name) task_seconds += task.seconds;
  }
  result["task_seconds_sum"] = task_seconds;
  return result;
}

// Adds to `json` the memory side of a finished run: peak RSS against the budget
// reserved_mem + workers x allowed_mem, the plan's projection, the buffer pool, and per op
// what it projected and measured.
inline void AddMemoryReport(nlohmann::ordered_json& json, const tessera::Spec& spec,
                            const tessera::FinalizedPlan& plan,
                            const tessera::ExecutionReport& report, std::int64_t baseline_rss) {
  const int workers = spec.effective_max_workers();
  const std::int64_t budget = spec.reserved_mem + workers * spec.allowed_mem;
  const std::int64_t peak_rss = MaxRssBytes();
  json["peak_rss_bytes"] = peak_rss;
  json["run_peak_rss_bytes"] = report.peak_rss_bytes;  // VmHWM, reset when Execute starts
  json["baseline_rss_bytes"] = baseline_rss;
  json["max_projected_mem"] = plan.max_projected_mem();
  json["required_allowed_mem"] = plan.required_allowed_mem();
  json["allowed_mem"] = spec.allowed_mem;
  json["reserved_mem"] = spec.reserved_mem;
  json["workers"] = workers;
  json["budget_bytes"] = budget;
  json["within_budget"] = peak_rss <= budget;
  const tessera::BufferPoolStats pool = tessera::GetBufferPoolStats();
  json["buffer_pool_capacity"] = pool.capacity_bytes;
  json["buffer_pool_hits"] = pool.hits;  // chunk-sized buffers reused, not faulted in afresh
  json["buffer_pool_misses"] = pool.misses;
  json["num_tasks"] = plan.num_tasks();
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const tessera::OpReport& op : report.ops) {
    const tessera::OpInfo* info = nullptr;
    for (const tessera::OpInfo& candidate : plan.ops()) {
      if (candidate.name == op.name) info = &candidate;
    }
    ops.push_back(OpJson(op, info, report.tasks));
  }
  json["ops"] = ops;
}

}  // namespace bench
