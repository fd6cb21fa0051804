// Executors: run a finalized plan's ops in dependency order and their tasks in
// parallel, as many at once as memory admits.
//
// Internal to the engine (not installed): users run plans through compute() and
// to_zarr(); what a run reports is tessera/exec/execution_report.hpp.
//
//   tessera::ExecuteOptions options;             // threads, 2 retries, progress on a tty
//   options.on_task = [](const tessera::TaskRecord& r) { ... };   // optional
//   tessera::ExecutionReport report = tessera::Execute(ops, spec, options);
//   report.ops[0].measured_mem_max <= report.ops[0].projected_mem
//   report.max_admitted_mem <= report.admission_capacity   // unless one task is larger
//
//   // One task, run where the caller likes (a Dask or Ray worker): its op prepared,
//   // the ops it reads committed.
//   tessera::TaskRecord record = tessera::RunPlanTask(plan, /*op=*/2, /*task=*/7);
//
// Spec::executor names the exec::Executor that runs the plan, made by the
// exec::ExecutorRegistry (below): "sync" and "threads" are built in; a new executor
// implements exec::Executor over an exec::PlanRun (tessera/exec/internal/plan_run.hpp, which
// keeps everything executors share) and registers its name.
//
// "sync" runs everything one at a time on the calling thread, in plan order: op by op,
// each op's tasks in order. "threads" runs tasks on up to spec.effective_max_workers()
// threads (the calling thread among them), of every op that is ready (all the ops it
// reads, OpInfo::inputs, have committed), so independent ops share the machine.
//
// Admission by memory ("threads"): a task starts only when its cost fits in what the
// running tasks leave of total_mem - reserved_mem (spec.effective_total_mem()); its cost
// is what it holds beyond the process baseline: max(its projection, the plan's learned
// OpInfo::estimated_mem when that came from history) - reserved_mem, at least 1 byte. An
// op of 500 MB tasks thus runs many at once, an op of 2 GB tasks few; a task larger than
// the whole pool runs alone. A free thread takes the first task in plan order (op, then
// task) that fits; when the first op's next task does not fit, at most `workers` tasks
// of later ops start ahead of it, then nothing starts until it fits, so a large task is
// never starved. OpInfo::concurrency (the plan's figure for one op alone) is not read:
// admission decides. Chunk buffers
// the pool (buffer_pool.hpp) retains for the next tasks to reuse are not charged.
//
// Every task attempt runs inside its own MemoryAccount scope, so its measured peak is
// the exact chunk memory it held; it is recorded next to the op's projection. An op's
// Prepare() runs once before its first task, its Commit() after its last. A task failing
// with a StorageError (or an exception not Tessera's) is retried up to `retries` times; a
// FormatError (bad metadata, a corrupt chunk), InvalidArgument, MemoryBudgetError or
// internal Error is not, since it fails alike every time. Either is then reported as an Error (of
// the last cause's Tessera type) naming the op, the task (block index), the attempts and the last
// cause; no task and no op starts after a failure. An op's output is released once the last op
// reading it has committed; ops nobody reads are never released.
//
// Progress (ExecuteOptions::progress) is one line per op on stderr, redrawn at most 10
// times a second, showing the in-flight op of lowest index ("+1 op running" when others
// overlap it); TESSERA_PROGRESS=0 in the environment turns it off whatever the mode.
// Execute resets the process's peak RSS (ResetPeakRss) when an op starts while no other
// op is in flight, so two Executes running at once in one process see each other's peaks
// in peak_rss_bytes.
//
// Measured against counted: a task whose measured + unaccounted memory exceeds what the
// plan counted for it (OpInfo::estimated_mem) beyond measurement noise gives one
// warning per op (tessera::Warn and ExecutionReport::warnings) naming the op and the
// figures. Every op's figures and tasks go to the history database as the op commits
// (tessera/memory/history.hpp), and the next plan of the same step counts them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/spec.hpp"
#include "tessera/exec/execution_report.hpp"
#include "tessera/plan/internal/executable_op.hpp"

namespace tessera {

// Runs `ops` (OpInfo::inputs point to earlier ops; InvalidArgument otherwise) with
// the executor spec.executor names (exec::MakeExecutor: InvalidArgument for a name no
// executor is registered under), spec.effective_max_workers() and admission by
// spec.effective_total_mem().
ExecutionReport Execute(const std::vector<std::shared_ptr<planner::ExecutableOp>>& ops,
                        const Spec& spec, const ExecuteOptions& options = {});

// Runs task `task` of op `op` (an index into `ops`) on the calling thread, as every
// executor runs a task: measured in its own MemoryAccount, retried as
// options.retries says (a StorageError or an exception not Tessera's only), skipped
// when options.resume is set and the op reports it done; its record's start_seconds
// count from `run_start`, its worker is 0. The entry through which an executor that
// runs tasks elsewhere (Dask, Ray, MPI ranks) runs each of them; options.on_task,
// progress and history are the run's business (exec::PlanRun), not this call's.
// REQUIRES: the op is prepared (Prepare()) and every op it reads has committed.
// Throws InvalidArgument for an op or task out of range, and the failure of the last
// attempt as Execute does (`op "add-3" failed at block (1, 2) after 3 attempts: ...`).
// Thread-safe: tasks of one op may run at once on several threads.
TaskRecord RunPlanTask(
    const std::vector<std::shared_ptr<planner::ExecutableOp>>& ops, const Spec& spec, int op,
    std::int64_t task, const ExecuteOptions& options = {},
    std::chrono::steady_clock::time_point run_start = std::chrono::steady_clock::now());

namespace exec {

class PlanRun;  // tessera/exec/internal/plan_run.hpp

// The concurrency an executor's run reached (ExecutionReport::max_tasks_at_once and
// max_admitted_mem): the most tasks it ran at once, and the largest sum of their costs
// (exec's TaskCost: a task's projection less reserved_mem) while they ran.
struct AdmissionFigures {
  int max_tasks_at_once = 0;
  std::int64_t max_admitted_mem = 0;
};

// How a plan's tasks are run: one at a time here, on threads, on MPI ranks, on a
// cluster. An executor decides only which task runs when and where; what every run
// shares (checking the plan, preparing, measuring, retrying, recording, progress,
// releasing outputs, the report) is PlanRun's, so that an executor is small.
//
//   class Reverse : public exec::Executor {             // a test's executor
//    public:
//     std::string_view name() const override { return "reverse"; }
//     int workers() const override { return 1; }
//     exec::AdmissionFigures Run(exec::PlanRun& run) override { ... }
//   };
//   exec::ExecutorRegistry::Global().Register("reverse", "tasks last to first",
//       [](const Spec&) { return std::make_unique<Reverse>(); });
//   spec.executor = "reverse";   // Execute(ops, spec) now runs it
//
// An executor object runs one plan (one Execute) and is then dropped.
class Executor {
 public:
  virtual ~Executor() = default;

  // The name Spec::executor chose it by ("threads").
  virtual std::string_view name() const = 0;
  // The most tasks it runs at once, as the run's history records it.
  virtual int workers() const = 0;
  // Whether this process leads the run (PlanRun's `leads`): false on the ranks of an MPI
  // run other than the first.
  virtual bool leads() const { return true; }
  // Runs every op of `run` once: PrepareOp, then RecordTask for each of its tasks (run
  // through RunPlanTask, or the like), then CommitOp, an op only once every op it reads
  // (PlanRun::inputs) has committed. Throws the first failure (of a task, a hook or the
  // executor itself); Execute records it and rethrows it to the caller.
  virtual AdmissionFigures Run(PlanRun& run) = 0;
  // The run failed on this process before Run was called (the PlanRun could not start:
  // on_start threw, the history could not open). An executor whose processes meet in Run
  // tells the others here, so that they fail too rather than wait; others do nothing.
  // Never throws.
  virtual void Abandon() noexcept {}
};

// Which executor each Spec::executor name makes. Thread-safe.
//
// Registration is explicit: the built-in executors ("sync", "threads") are registered
// by name in one place (RegisterBuiltinExecutors, src/exec/executor_registry.cpp), so
// a new executor is its own folder under src/exec plus one line there; a front end or
// a test registers its own at run time.
class ExecutorRegistry {
 public:
  // Makes the executor for a spec; may read its fields (max_workers, ...).
  using Factory = std::function<std::unique_ptr<Executor>(const Spec& spec)>;

  // The process's registry, the built-in executors registered at its first use.
  static ExecutorRegistry& Global();

  // An empty registry (tests); Global() holds the built-in executors.
  ExecutorRegistry() = default;

  // Makes `factory`'s executor the one Spec::executor == `name` chooses; `summary`
  // says in a few words how it runs tasks ("one task at a time"), for messages.
  // InvalidArgument when `name` is empty or taken, or `factory` is empty.
  void Register(std::string name, std::string summary, Factory factory);
  // Names an executor this build knows of but cannot run, so that choosing it says
  // why (`reason`: "is not supported yet") rather than that it is unknown.
  // InvalidArgument when `name` is empty or taken.
  void RegisterUnavailable(std::string name, std::string reason);
  // Removes `name`'s entry; false when there was none.
  bool Unregister(std::string_view name);

  // The names of the executors it can make, sorted.
  std::vector<std::string> names() const;
  // The executor spec.executor names. InvalidArgument naming the executors it can
  // make when spec.executor is unknown or unavailable:
  //   unknown executor "gpu"; valid executors: "sync", "threads" ("mpi" is not supported yet)
  std::unique_ptr<Executor> Make(const Spec& spec) const;

 private:
  struct Entry {
    std::string summary;  // or, when !factory, why it is unavailable
    Factory factory;
  };
  void Add(std::string name, Entry entry);

  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_;  // GUARDED_BY(mutex_)
};

// Registers the executors every build has: "sync", "threads" (and "mpi" as not yet
// supported). Global() calls it once.
void RegisterBuiltinExecutors(ExecutorRegistry& registry);

// ExecutorRegistry::Global().Make(spec).
std::unique_ptr<Executor> MakeExecutor(const Spec& spec);

}  // namespace exec
}  // namespace tessera
