// Remote tasks: a plan's tasks run on a cluster scheduler the user already has (Dask
// distributed, Ray), each task one scheduler task that remakes the plan in its worker
// process (once per process) and runs the task there (RunRemoteTask).
//
// This process keeps what PlanRun keeps for every executor: it prepares and commits each
// op, records every task (measured on its worker) in the report and history, and decides
// retries. The scheduler decides where and when, by memory: each task is submitted with
// the memory it may hold (RemoteTask::memory), which the front end hands to the scheduler
// (Dask's resources={"MEMORY": bytes}, Ray's memory=), so a worker is given only tasks
// that fit what it declared.
//
//   tessera::RegisterRemoteExecutor("dask", "tasks on a Dask cluster",
//       [](const tessera::Spec& spec) { return std::make_unique<MyLauncher>(spec); });
//   // in each worker process, for each task it is sent:
//   tessera::RunRemoteTask(key, recipe, op, task, options);
//
// Intermediates go through storage (Spec::keeps_intermediates_in_memory is false for
// these executors); the blocks of compute()'s result come back with their tasks.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/core/ndarray.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/exec/execution_report.hpp"

namespace tessera {

// A run, as its workers run its tasks.
struct RemoteRun {
  std::string key;                // names the plan (equal plans, equal keys)
  double start_unix_seconds = 0;  // the run's start on the wall clock
  int retries = 2;                // ExecuteOptions::retries, for RunRemoteTask
  bool resume = false;            // ExecuteOptions::resume
  // The most memory any of its tasks is submitted with (RemoteTask::memory): a launcher
  // refuses the run in Start when no worker offers that much, before anything runs.
  std::int64_t largest_task_memory = 0;
};

// One task handed to the scheduler.
struct RemoteTask {
  int op = 0;
  std::int64_t task = 0;
  // The memory it may hold, as the scheduler places it: its op's memory_size with
  // Spec::memory_tiers, else what the plan counts for it (its projection, or history's
  // larger figure: OpInfo::estimated_mem), reserved_mem included.
  std::int64_t memory = 0;
  int attempt = 1;  // 1, then 2, ... when its worker was lost before it ended
};

// How a submitted task ended.
struct RemoteOutcome {
  int op = 0;
  std::int64_t task = 0;
  TaskRecord record;  // when it ran (no error, worker not lost); measured on its worker
  // Blocks of the op's in-memory output (compute()'s result) the task wrote.
  std::vector<std::pair<Index, std::shared_ptr<const NDArray>>> blocks;
  std::exception_ptr error;  // its failure, after the retries RunPlanTask made
  bool worker_lost = false;  // its worker died (or left) before it ended: resubmit it
};

// What runs the tasks: a front end's wrapper of a scheduler. Called from one thread.
class TaskLauncher {
 public:
  virtual ~TaskLauncher() = default;
  // The most tasks the cluster may run at once (its workers' threads), for the report.
  virtual int workers() const = 0;
  // The run starts: each worker remakes the plan from `recipe` once, and runs the tasks
  // it is sent with RunRemoteTask(run.key, recipe, op, task, {run's fields, worker}).
  virtual void Start(const RemoteRun& run, const std::string& recipe) = 0;
  virtual void Submit(const RemoteTask& task) = 0;
  // Blocks until a submitted task ends, or `timeout_seconds` pass (nullopt), so that the
  // run can stop between waits (ExecuteOptions::on_wait: Ctrl-C).
  virtual std::optional<RemoteOutcome> WaitAny(double timeout_seconds) = 0;
  // The run ended (`failed`: cancel what is still queued or running). Never throws.
  virtual void Finish(bool failed) noexcept = 0;
};

// Registers executor `name`, "dask" or "ray" (the names Spec accepts for tasks run in
// processes that share no memory: Spec::keeps_intermediates_in_memory); each run asks `make` for a
// launcher, prepares and commits every op here and runs the tasks through it. An op's
// tasks are submitted once every op it reads has committed; a task whose worker was lost
// is submitted again, up to ExecuteOptions::retries more times (then an Error naming the
// op, the task and the losses); a task's failure fails the run. A name already registered
// is replaced. InvalidArgument for an empty name or factory.
using LauncherFactory = std::function<std::unique_ptr<TaskLauncher>(const Spec& spec)>;
void RegisterRemoteExecutor(const std::string& name, const std::string& summary,
                            LauncherFactory make);

// ---- in the worker process -------------------------------------------------------

// How a worker runs a task.
struct RemoteTaskOptions {
  double start_unix_seconds = 0;  // RemoteRun's
  int retries = 2;
  bool resume = false;
  int worker = 0;  // TaskRecord::worker
};

struct RemoteTaskResult {
  TaskRecord record;
  std::vector<std::pair<Index, std::shared_ptr<const NDArray>>> blocks;  // as RemoteOutcome
};

// Runs task `task` of op `op` of the plan named `key`, remade from `recipe` the first time
// this process sees the key (kept for later tasks; `recipe` is not read again). Opens what
// the op and the ops it reads need as a follower does (never creating anything), then runs
// it as RunPlanTask does. Thread-safe. Throws what RunPlanTask throws, FormatError or Error
// from remaking the plan, and InvalidArgument when the op reads the in-memory result of
// another op (only the client holds it).
RemoteTaskResult RunRemoteTask(const std::string& key, std::string_view recipe, int op,
                               std::int64_t task, const RemoteTaskOptions& options);
// Drops the plan named `key` from this process (after its run). Returns whether it held it.
bool ForgetRemotePlan(const std::string& key);

}  // namespace tessera
