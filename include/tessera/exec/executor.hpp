// Executors: run a finalized plan's ops in order and their tasks in parallel.
//
//   tessera::ExecuteOptions options;             // threads, 2 retries, progress on a tty
//   options.on_task = [](const tessera::TaskRecord& r) { ... };   // optional
//   tessera::ExecutionReport report = tessera::Execute(ops, spec, options);
//   report.ops[0].measured_mem_max <= report.ops[0].projected_mem
//
// "sync" runs tasks one at a time on the calling thread; "threads" runs an op's tasks
// on up to spec.effective_max_workers() threads (the calling thread among them), and on
// no more than the op's OpInfo::concurrency when the plan sets it (> 0). Every task
// attempt runs inside its own MemoryAccount scope, so its measured peak is the exact
// chunk memory it held; it is recorded next to the op's projection. A failing task is
// retried `retries` times and then reported as an Error (of the last cause's Tessera
// type) naming the op, the task (block index), the attempts and the last cause; no
// other task starts and no later op starts after a failure. An op's output is released
// once the last op reading it has committed; ops nobody reads are never released.
//
// Progress (ExecuteOptions::progress) is one line per op on stderr, redrawn at most 10
// times a second; TESSERA_PROGRESS=0 in the environment turns it off whatever the mode.
// Execute resets the process's peak RSS (ResetPeakRss) when it starts, so two Executes
// running at once in one process see each other's peaks in peak_rss_bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/spec.hpp"
#include "tessera/plan/executable_op.hpp"

namespace tessera {

// One task as it ran.
struct TaskRecord {
  int op = 0;  // index into the plan's ops
  std::string op_name;
  std::int64_t task = 0;
  std::int64_t projected_mem = 0;  // its projection (reserved_mem included)
  std::int64_t measured_mem = 0;   // peak Buffer bytes it held, plus reserved_mem
  double seconds = 0;              // from its first attempt's start to its success
  int attempts = 1;                // attempts it took; 0 when skipped
  bool skipped = false;            // resume found it already done (nothing measured)
};

// Per op: projected vs measured.
struct OpReport {
  std::string name;
  std::string kind;
  std::int64_t tasks = 0;
  std::int64_t tasks_skipped = 0;
  std::int64_t projected_mem = 0;        // largest task projection
  std::int64_t measured_mem_max = 0;     // largest measured task (reserved_mem included)
  std::int64_t measured_mem_median = 0;  // nearest rank over the tasks that ran (not
  std::int64_t measured_mem_p95 = 0;     // skipped ones); 0 when none ran
  double seconds = 0;                    // wall time of the op, Prepare() to Commit()
  double task_seconds_max = 0;
  int retries = 0;  // failed attempts that were retried
};

struct ExecutionReport {
  std::vector<OpReport> ops;
  std::vector<TaskRecord> tasks;  // every task, in completion order
  double seconds = 0;
  std::int64_t peak_rss_bytes = 0;  // process RSS high-water mark during the run (since
                                    // the process started where it cannot be reset)
};

enum class ProgressMode { kAuto, kAlways, kNever };  // auto: only when stderr is a tty

struct ExecuteOptions {
  int retries = 2;      // extra attempts for a failing task
  bool resume = false;  // skip tasks IsTaskDone() reports
  ProgressMode progress = ProgressMode::kAuto;
  // Called once after each task, skipped ones included (from worker threads, serialized
  // by the executor). If it throws, the run stops as for a failed task and the exception
  // propagates unchanged.
  std::function<void(const TaskRecord&)> on_task;
};

// Runs `ops` (in order; OpInfo::inputs point to earlier ops) with spec.executor
// ("sync" or "threads"; InvalidArgument for others) and spec.effective_max_workers().
ExecutionReport Execute(const std::vector<std::shared_ptr<ExecutableOp>>& ops, const Spec& spec,
                        const ExecuteOptions& options = {});

}  // namespace tessera
