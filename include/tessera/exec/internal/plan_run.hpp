// PlanRun: one run of a plan's ops, as every executor shares it.
//
//   exec::PlanRun run(ops, spec, options, executor.workers());  // checks the plan
//   run.PrepareOp(0);                                            // Prepare(), progress
//   run.RecordTask(0, run.RunTask(0, task));    // each task, in any order, on any thread
//   run.CommitOp(0);                   // Commit(), the op's report, history, Release()s
//   ExecutionReport report = run.Finish(figures);   // or run.Fail(error) when it failed
//
// Execute makes one, hands it to the exec::Executor that Spec::executor names
// (tessera/exec/internal/executor.hpp), and finishes it: the executor decides only which task
// runs when and where, and calls the three steps above; everything else is here, once.
//
// On construction it checks the plan (every op set, reading only earlier ops:
// InvalidArgument otherwise), lets the buffer pool hold what `workers` tasks hold at
// once, opens the run in the history database and starts the progress display.
// PrepareOp runs the op's Prepare() and shows it in progress; RecordTask keeps a task's
// record (ExecutionReport::tasks, in the order recorded), counts skipped tasks and
// retries, advances progress and calls ExecuteOptions::on_task; CommitOp runs Commit(),
// summarizes the op's tasks (OpReport), records them in history, warns when a task
// measured more than the plan counted, and Release()s each input it was the last
// reader of. A failure of Prepare, Commit or Release is rethrown as the same error
// type, naming the op: `op "x" failed to commit its output: <cause>`.
//
// The peak RSS an op reports is the rise since the process's high-water mark was last
// reset, which PrepareOp does when no other op is in flight.
//
// A run across processes (MPI ranks) has one PlanRun per process. The leader's (`leads`,
// the default) does all of the above; a follower's prepares, commits and releases as
// ExecutableOp's follower steps (FollowPrepare, ...), records no history, shows no
// progress and does not call on_start; the leader RecordTasks every task, wherever it
// ran, and the followers none.
//
// Not thread-safe: an executor calls PrepareOp, RecordTask and CommitOp one at a time
// (tasks themselves may run at once on any threads). `ops`, `spec` and `options` must
// outlive the run.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "tessera/core/spec.hpp"
#include "tessera/exec/internal/executor.hpp"
#include "tessera/plan/internal/executable_op.hpp"

namespace tessera::exec {

// The ops `info` reads (OpInfo::inputs), each once, in increasing order.
std::vector<int> DistinctInputs(const OpInfo& info);

class PlanRun {
 public:
  // `workers`: the most tasks the executor runs at once (for the buffer pool and the
  // history). Throws InvalidArgument for a plan whose ops are not as above.
  PlanRun(const std::vector<std::shared_ptr<planner::ExecutableOp>>& ops, const Spec& spec,
          const ExecuteOptions& options, int workers, bool leads = true);
  ~PlanRun();
  PlanRun(const PlanRun&) = delete;
  PlanRun& operator=(const PlanRun&) = delete;

  const std::vector<std::shared_ptr<planner::ExecutableOp>>& ops() const;
  const Spec& spec() const;
  const ExecuteOptions& options() const;
  // Whether this process leads the run (above).
  bool leads() const;
  // When the run started (TaskRecord::start_seconds count from it).
  std::chrono::steady_clock::time_point start() const;
  // The memory tasks are admitted against: spec.effective_total_mem() - reserved_mem
  // (ExecutionReport::admission_capacity).
  std::int64_t admission_capacity() const;
  // The ops op `op` reads (DistinctInputs); it may start once they have all committed.
  const std::vector<int>& inputs(int op) const;

  // Op `op` starts: before its first task. Call once per op.
  void PrepareOp(int op);
  // Runs task `task` of op `op` on the calling thread: RunPlanTask with the run's ops,
  // spec, options and start. The executor passes its record to RecordTask (it may run
  // it elsewhere through RunPlanTask instead). Thread-safe, unlike the other steps.
  TaskRecord RunTask(int op, std::int64_t task) const;
  // A task of op `op` has run (or was skipped): its record, from RunPlanTask. Rethrows
  // what on_task throws.
  void RecordTask(int op, const TaskRecord& record);
  // Op `op`'s tasks have all run. Call once per op, after its last RecordTask.
  void CommitOp(int op);

  // An MPI run's ranks and memory manager, for the report (ExecutionReport::cluster);
  // before Finish.
  void SetClusterReport(ClusterReport cluster);
  // After every op has committed: the run's report, with the executor's `figures`.
  // Call once.
  ExecutionReport Finish(const AdmissionFigures& figures);
  // The run failed with `error` (the executor's Run threw it): ends the progress
  // display and records the run as failed. Call once, instead of Finish.
  void Fail(const std::exception_ptr& error);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tessera::exec
