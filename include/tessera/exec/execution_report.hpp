// ExecutionReport: what a run did, per op projected against measured memory and every
// task (ComputeOptions::report receives it); ExecuteOptions: how it runs (retries,
// resume, progress, a callback per task, history).
//
//   tessera::ExecutionReport report;
//   tessera::ComputeOptions options;
//   options.report = &report;
//   y.compute(options);
//   report.ops[0].measured_mem_max <= report.ops[0].projected_mem
//   report.max_admitted_mem <= report.admission_capacity   // unless one task is larger
//
//   // One task of a finalized plan, run where the caller likes (a Dask or Ray worker):
//   // its op prepared, the ops it reads committed.
//   tessera::TaskRecord record = tessera::RunPlanTask(plan, /*op=*/2, /*task=*/7);
//
// How executors run a plan (admission by memory, retries, measurement, history) is
// described in the engine's tessera/exec/internal/executor.hpp and docs/memory-model.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera {

class FinalizedPlan;  // tessera/plan/finalized_plan.hpp

// One task as it ran.
struct TaskRecord {
  int op = 0;  // index into the plan's ops
  std::string op_name;
  std::int64_t task = 0;
  std::int64_t projected_mem = 0;  // its projection (reserved_mem included)
  std::int64_t measured_mem = 0;   // peak Buffer bytes it held, plus reserved_mem
  // Fresh memory its thread touched outside Tessera's accounted memory: what the
  // accounting allocator cannot see (a user kernel's own allocations). Measured from
  // the thread's page faults (ThreadFaultedBytes) less those of new Buffers and of the
  // result array (MemoryAccount::NoteFresh); blind to memory the kernel reuses from
  // earlier tasks.
  std::int64_t unaccounted_mem = 0;
  double start_seconds = 0;  // its first attempt's start, since the run started
  double seconds = 0;        // from its first attempt's start to its success
  int worker = 0;            // the run's thread lane that ran it (0 .. workers - 1; 0 is
                             // the calling thread)
  int attempts = 1;          // attempts it took; 0 when skipped
  bool skipped = false;      // resume found it already done (nothing measured)
};

// Per op: projected vs measured.
struct OpReport {
  std::string name;
  std::string kind;
  std::int64_t tasks = 0;
  std::int64_t tasks_skipped = 0;
  std::string fingerprint;         // OpInfo::fingerprint
  std::int64_t projected_mem = 0;  // largest task projection
  std::int64_t estimated_mem = 0;  // what the plan counted (OpInfo::estimated_mem)
  bool estimate_from_history = false;
  std::int64_t measured_mem_max = 0;     // largest measured task (reserved_mem included)
  std::int64_t measured_mem_median = 0;  // nearest rank over the tasks that ran (not
  std::int64_t measured_mem_p95 = 0;     // skipped ones); 0 when none ran
  std::int64_t unaccounted_mem_max = 0;  // TaskRecord::unaccounted_mem, the same way
  std::int64_t unaccounted_mem_median = 0;
  std::int64_t unaccounted_mem_p95 = 0;
  std::int64_t footprint_mem_max = 0;  // the largest measured + unaccounted of one task
  double seconds = 0;                  // wall time of the op, Prepare() to Commit()
  double task_seconds_max = 0;
  double task_seconds_median = 0;
  double task_seconds_p95 = 0;
  // The process's RSS high-water rise while the op ran (0 where the high-water mark
  // cannot be reset). The mark is reset only when no op is in flight, so where ops
  // overlap this is the rise since the first of the overlapping ops started: it counts
  // what the ops running beside it held too (an upper bound of the op's own).
  std::int64_t rss_growth_bytes = 0;
  int retries = 0;  // failed attempts that were retried
  // The most of its tasks that ran at once (their records' spans, start_seconds to
  // start_seconds + seconds, overlapping), over the tasks that ran; 0 when none ran. An
  // op of small tasks runs more at once than one of large tasks under the same memory.
  std::int64_t max_tasks_at_once = 0;
};

// One rank of an MPI run (executor "mpi"), as the run's leader gathered it.
struct RankReport {
  int rank = 0;
  std::int64_t tasks = 0;             // tasks that succeeded on it
  std::int64_t capacity = 0;          // what its tasks were admitted against
  std::int64_t max_admitted_mem = 0;  // the largest sum of costs of its tasks at once
  std::int64_t measured_mem_max = 0;  // its largest measured task (reserved_mem included)
  std::int64_t peak_rss_bytes = 0;    // its process's RSS high-water mark in the run
  std::int64_t held_bytes_max = 0;    // most bytes of in-memory blocks it held at once
};

// What the cluster's memory manager (the chunk directory) did in an MPI run: the bytes
// of in-memory blocks it moved, kept, dropped and spilled, and its decisions.
struct ClusterReport {
  int ranks = 0;  // 0: not an MPI run
  std::vector<RankReport> per_rank;
  std::int64_t bytes_fetched = 0;              // sent to the rank of a task that read them
  std::int64_t bytes_replicated = 0;           // of those, kept there as a replica
  std::int64_t bytes_rebalanced = 0;           // moved off a rank above the high watermark
                                               // (copied, confirmed, then dropped)
  std::int64_t bytes_dropped = 0;              // replicas freed (released, surplus or moved)
  std::int64_t bytes_spilled = 0;              // written to the shared store for want of memory
  std::int64_t bytes_gathered = 0;             // compute()'s result blocks sent to every rank
  std::int64_t decisions = 0;                  // the directory's copy, drop and spill decisions
  std::int64_t tasks_moved_after_failure = 0;  // retried on another rank
  // Per op of the plan: the bytes of its blocks each rank held when it committed, as each
  // rank measured them (an in-memory intermediate, after rebalancing); empty for an op
  // whose output is not held in memory.
  std::vector<std::vector<std::int64_t>> held_at_commit;
  // Per op of the plan: the bytes of its in-memory blocks, one copy of each (0 for an op
  // not held in memory).
  std::vector<std::int64_t> block_bytes;
};

struct ExecutionReport {
  std::vector<OpReport> ops;      // in plan order: ops[i] is op i (whatever order they
                                  // committed in)
  std::vector<TaskRecord> tasks;  // every task, in completion order
  double seconds = 0;
  std::int64_t peak_rss_bytes = 0;  // process RSS high-water mark during the run (since
                                    // the process started where it cannot be reset)
  // Warnings the run gave (also sent to tessera::Warn): ops whose tasks measured more
  // than the plan counted for them.
  std::vector<std::string> warnings;
  std::int64_t history_run = 0;  // the run's id in the history database; 0: not recorded
  std::int64_t allowed_mem = 0;  // the budget the run's plan was made for (spec.allowed_mem)
  // Admission by memory: the most tasks that ran at once, the largest sum of the costs
  // (projection less reserved_mem) of tasks running at once, and the pool they were
  // admitted against (total_mem - reserved_mem). max_admitted_mem exceeds
  // admission_capacity only when a single task larger than the pool ran, alone.
  int max_tasks_at_once = 0;
  std::int64_t max_admitted_mem = 0;
  std::int64_t admission_capacity = 0;
  // An MPI run's ranks and memory manager (the leader's report; ranks == 0 otherwise).
  ClusterReport cluster;
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
  // Called every 200 ms or so by an executor waiting on other processes (dask, ray) while
  // no task ends; if it throws, the run stops as for a failed task (Ctrl-C from Python).
  std::function<void()> on_wait;
  // Called once before the first task with the number of tasks the run has (every op's,
  // for a progress display of the caller's own). If it throws, nothing runs.
  std::function<void(std::int64_t total_tasks)> on_start;
  // Record the run in the spec's history database (Spec::history), op by op.
  bool record_history = true;
  std::string label;  // what the run is, for history: "compute", "to_zarr", ...
  // The plan as other processes remake it (plan/internal/plan_recipe.hpp), for executors
  // whose tasks run elsewhere (Dask, Ray); compute and to_zarr set it. Called at most once.
  std::function<std::string()> plan_recipe;
};

// Runs task `task` of op `op` (an index into plan.ops()) of a finalized plan on the
// calling thread, as every executor runs a task: measured in its own MemoryAccount,
// retried as options.retries says, skipped when options.resume is set and the op
// reports it done. REQUIRES: the op is prepared and every op it reads has committed.
// Throws InvalidArgument for an op or task out of range, and the failure of the last
// attempt as a run does. Thread-safe.
TaskRecord RunPlanTask(const FinalizedPlan& plan, int op, std::int64_t task,
                       const ExecuteOptions& options = {});

}  // namespace tessera
