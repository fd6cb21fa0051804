#include "tessera/exec/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "history_recorder.hpp"
#include "op_statistics.hpp"
#include "progress_bar.hpp"
#include "task_runner.hpp"
#include "task_scheduler.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/warning.hpp"
#include "tessera/memory/footprint_estimate.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/memory/process_memory.hpp"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void CheckExecutor(const std::string& executor) {
  if (executor == "sync" || executor == "threads") return;
  if (executor == "mpi") {
    throw InvalidArgument(
        "executor \"mpi\" is not supported yet; use \"sync\" (one task at a time) or "
        "\"threads\" (tasks in parallel on this machine)");
  }
  throw InvalidArgument("unknown executor \"" + executor +
                        "\"; valid executors: \"sync\", \"threads\" (\"mpi\" is not "
                        "supported yet)");
}

// Checks that every op is set and reads only earlier ops; returns, per op, how many
// distinct later ops read its output.
std::vector<int> CountConsumers(const std::vector<std::shared_ptr<ExecutableOp>>& ops) {
  std::vector<int> consumers(ops.size(), 0);
  for (std::size_t index = 0; index < ops.size(); ++index) {
    if (ops[index] == nullptr) {
      throw InvalidArgument("Execute: op " + std::to_string(index) + " of the plan is null");
    }
    for (int input : exec::DistinctInputs(ops[index]->info())) {
      if (input < 0 || static_cast<std::size_t>(input) >= index) {
        throw InvalidArgument("Execute: op \"" + ops[index]->info().name + "\" (index " +
                              std::to_string(index) + ") reads op " + std::to_string(input) +
                              ", which is not an earlier op of the plan");
      }
      ++consumers[static_cast<std::size_t>(input)];
    }
  }
  return consumers;
}

// Runs `step` of op `name`, rethrowing its failure (same error type) with the op named.
template <typename Step>
void RunStep(const std::string& name, const char* what, Step&& step) {
  try {
    step();
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    exec::ThrowLike(error,
                    "op \"" + name + "\" failed " + what + ": " + exec::DescribeException(error));
  }
}

// Fills the op's summaries of its tasks that ran (skipped ones measured nothing).
void Summarize(std::span<const TaskRecord> tasks, OpReport& op_report) {
  std::vector<std::int64_t> measured;
  std::vector<std::int64_t> unaccounted;
  std::vector<double> seconds;
  for (const TaskRecord& record : tasks) {
    if (record.skipped) continue;
    measured.push_back(record.measured_mem);
    unaccounted.push_back(record.unaccounted_mem);
    seconds.push_back(record.seconds);
    op_report.footprint_mem_max =
        std::max(op_report.footprint_mem_max, record.measured_mem + record.unaccounted_mem);
  }
  const exec::Summary<std::int64_t> memory = exec::Summarize(std::move(measured));
  op_report.measured_mem_max = memory.max;
  op_report.measured_mem_median = memory.median;
  op_report.measured_mem_p95 = memory.p95;
  const exec::Summary<std::int64_t> outside = exec::Summarize(std::move(unaccounted));
  op_report.unaccounted_mem_max = outside.max;
  op_report.unaccounted_mem_median = outside.median;
  op_report.unaccounted_mem_p95 = outside.p95;
  const exec::Summary<double> durations = exec::Summarize(std::move(seconds));
  op_report.task_seconds_max = durations.max;
  op_report.task_seconds_median = durations.median;
  op_report.task_seconds_p95 = durations.p95;
}

// The warning for an op whose largest task measured more than the plan counted for it
// beyond measurement noise (footprint_estimate.hpp); nullopt when none did.
std::optional<std::string> FootprintWarning(const ExecutableOp& op, const OpReport& op_report,
                                            std::span<const TaskRecord> tasks, const Spec& spec,
                                            bool history_on) {
  const TaskRecord* largest = nullptr;
  for (const TaskRecord& record : tasks) {
    if (record.skipped) continue;
    if (largest == nullptr || record.measured_mem + record.unaccounted_mem >
                                  largest->measured_mem + largest->unaccounted_mem) {
      largest = &record;
    }
  }
  if (largest == nullptr) return std::nullopt;
  const std::int64_t footprint = largest->measured_mem + largest->unaccounted_mem;
  if (!ExceedsProjection(footprint - spec.reserved_mem,
                         op_report.estimated_mem - spec.reserved_mem))
    return std::nullopt;
  std::string warning =
      "op \"" + op_report.name + "\" (" + op_report.kind + ") measured " + format_bytes(footprint) +
      " at " + op.DescribeTask(largest->task) + " (" + format_bytes(largest->measured_mem) +
      " in Tessera's buffers, reserved_mem included, and " +
      format_bytes(largest->unaccounted_mem) +
      " of fresh pages touched outside them, such as a kernel's own allocations), above the " +
      format_bytes(op_report.estimated_mem) + " the plan counted for it (" +
      (op_report.estimate_from_history ? "learned from history" : "its projection") + "); ";
  warning += history_on ? "history keeps the figure and the next plan of this step (fingerprint " +
                              op_report.fingerprint +
                              ") counts it, refusing to run where allowed_mem is below it"
                        : "turn history on (Spec::history) so that the next plan counts it";
  if (op.info().kind == OpKind::kMapBlocks || op.info().kind == OpKind::kBlockwise) {
    warning += ", or declare what a map_blocks kernel allocates (its extra_projected_mem)";
  }
  return warning;
}

// What the executor keeps of one op between its Prepare() and its Commit().
struct OpRun {
  OpReport report;
  std::vector<std::size_t> tasks;  // where its records are in report.tasks
  Clock::time_point start;
  std::int64_t rss_before = 0;  // the RSS when the high-water mark it reads was reset
  bool rss_reset = false;       // whether that reset succeeded
};

// The records of one op: a view of report.tasks where they lie side by side (always
// when the op ran alone), else a copy in `gathered`.
std::span<const TaskRecord> OpTasks(const ExecutionReport& report,
                                    const std::vector<std::size_t>& indices,
                                    std::vector<TaskRecord>& gathered) {
  if (indices.empty()) return {};
  if (indices.back() - indices.front() + 1 == indices.size()) {
    return std::span<const TaskRecord>(report.tasks).subspan(indices.front(), indices.size());
  }
  gathered.reserve(indices.size());
  for (std::size_t index : indices) gathered.push_back(report.tasks[index]);
  return gathered;
}

OpReport StartReport(const OpInfo& info) {
  OpReport op_report;
  op_report.name = info.name;
  op_report.kind = std::string(OpKindName(info.kind));
  op_report.fingerprint = info.fingerprint;
  op_report.tasks = info.num_tasks;
  op_report.projected_mem = info.projected_mem;
  op_report.estimated_mem = std::max(info.estimated_mem, info.projected_mem);
  op_report.estimate_from_history = info.estimate_from_history;
  return op_report;
}

// Lets the pool of reusable chunk buffers hold what the running tasks hold at once
// (workers x the largest task, at most half of total_mem): freed blocks are then reused
// by the next tasks instead of being faulted in afresh (DESIGN.md, "Memory model"). The
// pool keeps only buffers tasks freed, so it stays within what they held. A pool twice
// that size measured slower on the dew-point benchmark (docs/compute.md). Never shrinks.
void SizeBufferPool(const std::vector<std::shared_ptr<ExecutableOp>>& ops, const Spec& spec) {
  std::int64_t largest_task = 0;
  for (const auto& op : ops) {
    largest_task = std::max(largest_task, op->info().projected_mem - spec.reserved_mem);
  }
  const std::int64_t wanted =
      std::min(largest_task * spec.effective_max_workers(), spec.effective_total_mem() / 2);
  if (wanted > BufferPoolCapacity()) SetBufferPoolCapacity(wanted);
}

}  // namespace

ExecutionReport Execute(const std::vector<std::shared_ptr<ExecutableOp>>& ops, const Spec& spec,
                        const ExecuteOptions& options) {
  CheckExecutor(spec.executor);
  if (spec.max_workers < 0) {
    throw InvalidArgument("max_workers must be >= 0 (0 = one per hardware thread), got " +
                          std::to_string(spec.max_workers));
  }
  std::vector<int> consumers_left = CountConsumers(ops);
  SizeBufferPool(ops, spec);

  const Clock::time_point start = Clock::now();
  ExecutionReport report;
  exec::HistoryRecorder history(spec, options);
  report.history_run = history.run_id();
  report.allowed_mem = spec.allowed_mem;
  exec::ProgressBar progress(exec::ProgressEnabled(options.progress), stderr);
  std::vector<OpRun> runs(ops.size());
  std::int64_t all_tasks = 0;
  for (const auto& op : ops) all_tasks += std::max<std::int64_t>(op->info().num_tasks, 0);
  report.tasks.reserve(static_cast<std::size_t>(all_tasks));
  // The process's high-water mark is reset only when no op is in flight (it is one per
  // process): ops that overlap read the one reset when the first of them started.
  int in_flight = 0;
  bool window_reset = false;
  std::int64_t window_rss_before = 0;

  exec::TaskScheduler::Hooks hooks;
  hooks.prepare = [&](int index) {
    ExecutableOp& op = *ops[static_cast<std::size_t>(index)];
    OpRun& run = runs[static_cast<std::size_t>(index)];
    run.start = Clock::now();
    if (in_flight++ == 0) {
      window_reset = ResetPeakRss();
      window_rss_before = CurrentRssBytes();
    }
    run.rss_reset = window_reset;
    run.rss_before = window_rss_before;
    run.report = StartReport(op.info());
    run.tasks.reserve(static_cast<std::size_t>(std::max<std::int64_t>(op.info().num_tasks, 0)));
    RunStep(op.info().name, "to prepare its output", [&] { op.Prepare(); });
    progress.Start(index, op.info().name, op.info().num_tasks);
  };
  hooks.task_done = [&](int index, const TaskRecord& record) {
    OpRun& run = runs[static_cast<std::size_t>(index)];
    if (record.skipped) {
      ++run.report.tasks_skipped;
    } else {
      run.report.retries += record.attempts - 1;
    }
    run.report.projected_mem = std::max(run.report.projected_mem, record.projected_mem);
    run.tasks.push_back(report.tasks.size());
    report.tasks.push_back(record);
    progress.Update(index, static_cast<std::int64_t>(run.tasks.size()));
    if (options.on_task) options.on_task(record);
  };
  hooks.commit = [&](int index) {
    ExecutableOp& op = *ops[static_cast<std::size_t>(index)];
    OpRun& run = runs[static_cast<std::size_t>(index)];
    RunStep(op.info().name, "to commit its output", [&] { op.Commit(); });
    progress.Finish(index, static_cast<std::int64_t>(run.tasks.size()));
    std::vector<TaskRecord> gathered;
    const std::span<const TaskRecord> tasks = OpTasks(report, run.tasks, gathered);
    Summarize(tasks, run.report);
    run.report.seconds = SecondsSince(run.start);
    const std::int64_t peak = PeakRssBytes();
    report.peak_rss_bytes = std::max(report.peak_rss_bytes, peak);
    if (run.rss_reset) {
      run.report.rss_growth_bytes = std::max<std::int64_t>(peak - run.rss_before, 0);
    }
    --in_flight;
    history.RecordOp(index, run.report, tasks);
    if (std::optional<std::string> warning =
            FootprintWarning(op, run.report, tasks, spec, history.run_id() != 0)) {
      Warn(*warning);
      report.warnings.push_back(std::move(*warning));
    }
    run.tasks = {};
    // The op has committed: inputs it was the last reader of are no longer needed.
    for (int input : exec::DistinctInputs(op.info())) {
      if (--consumers_left[static_cast<std::size_t>(input)] > 0) continue;
      ExecutableOp& released = *ops[static_cast<std::size_t>(input)];
      RunStep(released.info().name, "to release its output", [&] { released.Release(); });
    }
  };

  exec::TaskScheduler::Limits limits;
  limits.workers = spec.executor == "sync" ? 1 : spec.effective_max_workers();
  limits.capacity = spec.effective_total_mem() - spec.reserved_mem;
  limits.reserved_mem = spec.reserved_mem;
  exec::TaskScheduler scheduler(ops, limits, options, start, std::move(hooks));
  try {
    scheduler.Run();
  } catch (...) {
    progress.Interrupt();
    report.seconds = SecondsSince(start);
    history.Finish("failed: " + exec::DescribeException(std::current_exception()), report);
    throw;
  }
  report.ops.reserve(ops.size());
  for (OpRun& run : runs) report.ops.push_back(std::move(run.report));
  report.max_tasks_at_once = scheduler.max_tasks_at_once();
  report.max_admitted_mem = scheduler.max_admitted_mem();
  report.admission_capacity = limits.capacity;
  report.seconds = SecondsSince(start);
  // Without permission to reset it, the high-water mark counts from the process start.
  report.peak_rss_bytes = std::max(report.peak_rss_bytes, PeakRssBytes());
  history.Finish("ok", report);
  return report;
}

}  // namespace tessera
