#include "tessera/exec/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include "op_statistics.hpp"
#include "progress_bar.hpp"
#include "task_runner.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/memory/process_memory.hpp"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Workers for one op: 1 for "sync"; for "threads" spec.effective_max_workers(), capped by
// the op's own concurrency (what the plan found fits in total_mem at once) when it sets
// one.
int WorkersFor(const Spec& spec, const OpInfo& info) {
  if (spec.executor == "sync") return 1;
  int workers = spec.effective_max_workers();
  if (info.concurrency > 0) workers = std::min(workers, info.concurrency);
  return std::max(workers, 1);
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

// The ops `info` reads, each once, in increasing order.
std::vector<int> DistinctInputs(const OpInfo& info) {
  std::vector<int> inputs = info.inputs;
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  return inputs;
}

// Checks that every op is set and reads only earlier ops; returns, per op, how many
// distinct later ops read its output.
std::vector<int> CountConsumers(const std::vector<std::shared_ptr<ExecutableOp>>& ops) {
  std::vector<int> consumers(ops.size(), 0);
  for (std::size_t index = 0; index < ops.size(); ++index) {
    if (ops[index] == nullptr) {
      throw InvalidArgument("Execute: op " + std::to_string(index) + " of the plan is null");
    }
    for (int input : DistinctInputs(ops[index]->info())) {
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

// One op from Prepare() to Commit(); its tasks' records go to `report`.
OpReport RunOp(int op_index, ExecutableOp& op, const Spec& spec, const ExecuteOptions& options,
               exec::ProgressBar& progress, ExecutionReport& report) {
  const OpInfo& info = op.info();
  const Clock::time_point start = Clock::now();
  OpReport op_report;
  op_report.name = info.name;
  op_report.kind = info.kind;
  op_report.tasks = info.num_tasks;
  op_report.projected_mem = info.projected_mem;

  RunStep(info.name, "to prepare its output", [&] { op.Prepare(); });
  progress.Start(info.name, info.num_tasks);
  std::vector<std::int64_t> measured;
  std::int64_t done = 0;
  const exec::OpTaskRunner runner(op_index, op, spec.reserved_mem, options);
  runner.Run(WorkersFor(spec, info), [&](const TaskRecord& record) {
    ++done;
    if (record.skipped) {
      ++op_report.tasks_skipped;
    } else {
      measured.push_back(record.measured_mem);
      op_report.retries += record.attempts - 1;
      op_report.task_seconds_max = std::max(op_report.task_seconds_max, record.seconds);
    }
    op_report.projected_mem = std::max(op_report.projected_mem, record.projected_mem);
    report.tasks.push_back(record);
    progress.Update(done);
    if (options.on_task) options.on_task(record);
  });
  RunStep(info.name, "to commit its output", [&] { op.Commit(); });
  progress.Finish(done);

  const exec::MeasuredSummary summary = exec::SummarizeMeasured(std::move(measured));
  op_report.measured_mem_max = summary.max;
  op_report.measured_mem_median = summary.median;
  op_report.measured_mem_p95 = summary.p95;
  op_report.seconds = SecondsSince(start);
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
  // Without permission to reset it, the high-water mark counts from the process start.
  ResetPeakRss();
  ExecutionReport report;
  exec::ProgressBar progress(exec::ProgressEnabled(options.progress), stderr);
  for (std::size_t index = 0; index < ops.size(); ++index) {
    ExecutableOp& op = *ops[index];
    try {
      report.ops.push_back(RunOp(static_cast<int>(index), op, spec, options, progress, report));
    } catch (...) {
      progress.Interrupt();
      throw;
    }
    // The op has committed: inputs it was the last reader of are no longer needed.
    for (int input : DistinctInputs(op.info())) {
      if (--consumers_left[static_cast<std::size_t>(input)] > 0) continue;
      ExecutableOp& released = *ops[static_cast<std::size_t>(input)];
      RunStep(released.info().name, "to release its output", [&] { released.Release(); });
    }
  }
  report.seconds = SecondsSince(start);
  report.peak_rss_bytes = PeakRssBytes();
  return report;
}

}  // namespace tessera
