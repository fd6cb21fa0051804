// TaskScheduler: runs a plan's ops in dependency order and their tasks on a fixed set
// of threads, several ops at once, every task admitted by memory (memory_admission.hpp).
//
//   exec::TaskScheduler::Hooks hooks;
//   hooks.prepare = [&](int op) { ops[op]->Prepare(); };         // before its first task
//   hooks.task_done = [&](int op, const TaskRecord& record) { ... };
//   hooks.commit = [&](int op) { ops[op]->Commit(); ... };       // after its last task
//   exec::TaskScheduler scheduler(ops, {.workers = 4, .capacity = total - reserved,
//                                       .reserved_mem = reserved}, options, start, hooks);
//   scheduler.Run();   // returns when every op has committed; throws the first failure
//
// Order: an op is ready once every op it reads (OpInfo::inputs, earlier ops) has
// committed. Its prepare hook runs once, before its first task; its tasks start in task
// order; the thread that finishes its last task runs its commit hook, and ops reading
// it become ready. Tasks of every ready op compete for the threads and the memory.
//
// Policy: a free thread takes the first of, in plan order (lowest op index, then task
// index), an unprepared ready op to prepare or the next task of a ready op that fits in
// the memory the running tasks leave (MemoryAdmission). The first op with a task to
// start is the head: when its next task does not fit, tasks of later ops that fit may
// start ahead of it, but at most `workers` of them; after that nothing starts until the
// head's task fits, which it does once enough running tasks have ended (at the latest
// when none runs), so a large task waits for a bounded number of small ones and is
// never starved. With workers == 1 this runs everything on the calling thread in plan
// order, one op after another.
//
// Failure: the first exception (of a task after its retries, or of a hook) stops the
// run: no task, prepare or commit starts afterwards; running tasks make no further
// attempts (OpTaskRunner); tasks that still succeed are passed to task_done. Run()
// rethrows that exception once every thread has returned.
//
// Threads: Run() uses the calling thread as lane 0 and workers - 1 more (fewer when the
// plan has fewer tasks); TaskRecord::worker is the lane that ran the task. The hooks run
// one at a time (under one mutex), never concurrently with each other; tasks keep
// running on other threads meanwhile.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "memory_admission.hpp"
#include "task_runner.hpp"
#include "tessera/exec/internal/executor.hpp"
#include "tessera/exec/internal/plan_run.hpp"
#include "tessera/plan/internal/executable_op.hpp"

namespace tessera::exec {

class TaskScheduler {
 public:
  struct Limits {
    int workers = 1;                // threads, at least 1
    std::int64_t capacity = 0;      // the admission pool (MemoryAdmission)
    std::int64_t reserved_mem = 0;  // subtracted from each task's projection (TaskCost)
  };
  struct Hooks {
    std::function<void(int op)> prepare;
    std::function<void(int op, const TaskRecord& record)> task_done;
    std::function<void(int op)> commit;
  };

  // `ops` must be non-null and read only earlier ops (the executor checks); `ops` and
  // `options` must outlive the scheduler.
  TaskScheduler(const std::vector<std::shared_ptr<planner::ExecutableOp>>& ops, Limits limits,
                const ExecuteOptions& options, std::chrono::steady_clock::time_point run_start,
                Hooks hooks);

  // Runs the whole plan; call once.
  void Run();

  // After Run(): the most tasks that ran at once, and the largest sum of the admitted
  // costs of tasks running at once.
  int max_tasks_at_once() const { return admission_.max_running(); }
  std::int64_t max_admitted_mem() const { return admission_.max_admitted(); }

 private:
  enum class OpState { kWaiting, kReady, kPreparing, kRunning, kCommitting, kCommitted };
  struct OpProgress {
    OpState state = OpState::kWaiting;
    int inputs_left = 0;       // distinct inputs not yet committed
    std::vector<int> readers;  // distinct later ops that read this one
    std::int64_t next_task = 0;
    std::int64_t next_projected = 0;  // projected_mem(next_task), once next_cost is known
    std::int64_t next_cost = -1;      // TaskCost of next_task; -1 until computed
    std::int64_t finished = 0;        // tasks that succeeded (or were skipped)
  };
  struct Work {
    enum class Kind { kNone, kPrepare, kTask } kind = Kind::kNone;
    int op = 0;
    std::int64_t task = 0;
    std::int64_t projected = 0;  // the task's projection, reserved_mem included
    std::int64_t cost = 0;       // its cost (TaskCost)
  };

  void Worker(int lane);
  Work Pick();    // REQUIRES: mutex_ held
  bool Failed();  // takes mutex_
  void Prepare(int op);
  // Runs a task admitted by Pick(); takes `lock` (of mutex_, released on entry) to
  // account for its end and returns holding it.
  void RunTask(int lane, const Work& work, std::unique_lock<std::mutex>& lock);
  void Commit(int op);
  void FailLocked(std::exception_ptr error);  // REQUIRES: mutex_ held
  void Fail(std::exception_ptr error);

  const std::vector<std::shared_ptr<planner::ExecutableOp>>& ops_;
  Limits limits_;
  Hooks hooks_;
  std::vector<OpTaskRunner> runners_;
  std::atomic<bool> cancelled_{false};  // set with failed_, read by running tasks
  std::mutex hooks_mutex_;              // serializes the hooks

  std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::vector<OpProgress> progress_;
  std::set<int> open_;  // ready ops to prepare or with tasks not yet started, by index
  MemoryAdmission admission_;
  int committed_ = 0;
  int waiting_ = 0;  // threads waiting on wake_
  int blocked_op_ = -1;
  std::int64_t blocked_task_ = -1;  // the head task that did not fit
  int bypasses_ = 0;                // tasks started ahead of it
  bool failed_ = false;
  std::exception_ptr error_;
};

}  // namespace tessera::exec
