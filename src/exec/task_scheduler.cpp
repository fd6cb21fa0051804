#include "task_scheduler.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "worker_warmup.hpp"

namespace tessera::exec {

using planner::ExecutableOp;

TaskScheduler::TaskScheduler(const std::vector<std::shared_ptr<ExecutableOp>>& ops, Limits limits,
                             const ExecuteOptions& options,
                             std::chrono::steady_clock::time_point run_start, Hooks hooks)
    : ops_(ops),
      limits_(limits),
      hooks_(std::move(hooks)),
      progress_(ops.size()),
      admission_(limits.capacity) {
  limits_.workers = std::max(limits_.workers, 1);
  runners_.reserve(ops.size());
  for (std::size_t index = 0; index < ops.size(); ++index) {
    runners_.emplace_back(static_cast<int>(index), *ops[index], limits.reserved_mem, options,
                          run_start);
    const std::vector<int> inputs = DistinctInputs(ops[index]->info());
    progress_[index].inputs_left = static_cast<int>(inputs.size());
    for (int input : inputs) {
      progress_[static_cast<std::size_t>(input)].readers.push_back(static_cast<int>(index));
    }
    if (inputs.empty()) {
      progress_[index].state = OpState::kReady;
      open_.insert(static_cast<int>(index));
    }
  }
}

void TaskScheduler::Run() {
  std::int64_t tasks = 0;
  for (const auto& op : ops_) tasks += std::max<std::int64_t>(op->info().num_tasks, 0);
  const int threads =
      static_cast<int>(std::clamp<std::int64_t>(tasks, 1, std::int64_t{limits_.workers}));
  // Joined on every path: a joinable std::thread destroyed would terminate the process.
  struct Pool {
    std::vector<std::thread> threads;
    ~Pool() {
      for (std::thread& thread : threads) {
        if (thread.joinable()) thread.join();
      }
    }
  } pool;
  try {
    pool.threads.reserve(static_cast<std::size_t>(threads - 1));
    for (int lane = 1; lane < threads; ++lane) {
      pool.threads.emplace_back([this, lane] { Worker(lane); });
    }
  } catch (...) {
    Fail(std::current_exception());  // no thread: stop those already started
  }
  Worker(0);
  for (std::thread& thread : pool.threads) thread.join();
  if (error_) std::rethrow_exception(error_);
}

void TaskScheduler::Worker(int lane) {
  WarmUpWorkerThread();  // outside any task: each thread's one-time pages
  std::unique_lock<std::mutex> lock(mutex_);
  while (!failed_ && committed_ < static_cast<int>(ops_.size())) {
    // Whatever throws here (an op's projected_mem, an allocation) ends the run as a
    // failed task does: it must not leave a worker thread.
    try {
      const Work work = Pick();
      if (work.kind == Work::Kind::kNone) {
        ++waiting_;
        wake_.wait(lock);
        --waiting_;
        continue;
      }
      lock.unlock();
      if (work.kind == Work::Kind::kPrepare) {
        Prepare(work.op);
        lock.lock();
      } else {
        RunTask(lane, work, lock);  // returns holding the lock: the next Pick follows
      }
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      FailLocked(std::current_exception());
    }
  }
}

TaskScheduler::Work TaskScheduler::Pick() {
  bool head_seen = false;
  for (const int op : open_) {
    OpProgress& progress = progress_[static_cast<std::size_t>(op)];
    if (progress.state == OpState::kReady) {
      progress.state = OpState::kPreparing;
      open_.erase(op);  // back once prepared, when it has tasks
      return Work{Work::Kind::kPrepare, op, 0, 0, 0};
    }
    if (progress.state != OpState::kRunning) continue;
    if (progress.next_cost < 0) {
      const ExecutableOp& next = *ops_[static_cast<std::size_t>(op)];
      progress.next_projected = next.projected_mem(progress.next_task);
      progress.next_cost = TaskCost(next.info(), progress.next_projected, limits_.reserved_mem);
    }
    const bool head = !head_seen;
    head_seen = true;
    if (!admission_.Fits(progress.next_cost)) {
      if (head && (blocked_op_ != op || blocked_task_ != progress.next_task)) {
        blocked_op_ = op;
        blocked_task_ = progress.next_task;
        bypasses_ = 0;
      }
      continue;
    }
    if (head) {
      blocked_op_ = -1;
      blocked_task_ = -1;
      bypasses_ = 0;
    } else if (blocked_op_ >= 0) {
      if (bypasses_ >= limits_.workers) break;  // the head waits for no more of these
      ++bypasses_;
    }
    const Work work{Work::Kind::kTask, op, progress.next_task, progress.next_projected,
                    progress.next_cost};
    admission_.Admit(work.cost);
    progress.next_cost = -1;
    if (++progress.next_task >= ops_[static_cast<std::size_t>(op)]->info().num_tasks) {
      open_.erase(op);
    }
    return work;
  }
  return Work{};
}

void TaskScheduler::Prepare(int op) {
  try {
    std::lock_guard<std::mutex> hooks(hooks_mutex_);
    if (Failed()) return;  // no op starts after a failure (lock order: hooks, then mutex_)
    hooks_.prepare(op);
  } catch (...) {
    Fail(std::current_exception());
    return;
  }
  bool commit = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    OpProgress& progress = progress_[static_cast<std::size_t>(op)];
    if (ops_[static_cast<std::size_t>(op)]->info().num_tasks > 0) {
      progress.state = OpState::kRunning;
      open_.insert(op);
    } else {
      progress.state = OpState::kCommitting;
      commit = !failed_;
    }
    if (waiting_ > 0) wake_.notify_all();
  }
  if (commit) Commit(op);
}

void TaskScheduler::RunTask(int lane, const Work& work, std::unique_lock<std::mutex>& lock) {
  std::exception_ptr error;
  std::optional<TaskRecord> record;
  try {
    record = runners_[static_cast<std::size_t>(work.op)].Run(work.task, work.projected, cancelled_);
    if (record) {
      record->worker = lane;
      std::lock_guard<std::mutex> hooks(hooks_mutex_);
      hooks_.task_done(work.op, *record);
    }
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  admission_.Release(work.cost);
  OpProgress& progress = progress_[static_cast<std::size_t>(work.op)];
  bool commit = false;
  if (error) {
    FailLocked(error);
  } else if (record &&
             ++progress.finished == ops_[static_cast<std::size_t>(work.op)]->info().num_tasks &&
             !failed_) {
    progress.state = OpState::kCommitting;
    commit = true;
  }
  if (waiting_ > 0) wake_.notify_all();
  if (commit) {
    lock.unlock();
    Commit(work.op);
    lock.lock();
  }
}

void TaskScheduler::Commit(int op) {
  try {
    std::lock_guard<std::mutex> hooks(hooks_mutex_);
    if (Failed()) return;  // another op failed meanwhile: the run is over
    hooks_.commit(op);
  } catch (...) {
    Fail(std::current_exception());
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  OpProgress& progress = progress_[static_cast<std::size_t>(op)];
  progress.state = OpState::kCommitted;
  ++committed_;
  for (const int reader : progress.readers) {
    OpProgress& next = progress_[static_cast<std::size_t>(reader)];
    if (--next.inputs_left == 0) {
      next.state = OpState::kReady;
      open_.insert(reader);
    }
  }
  // Threads waiting for work, and the one waiting for the last commit to end the run.
  if (waiting_ > 0) wake_.notify_all();
}

void TaskScheduler::FailLocked(std::exception_ptr error) {
  if (!failed_) error_ = std::move(error);
  failed_ = true;
  cancelled_.store(true, std::memory_order_relaxed);
  wake_.notify_all();
}

bool TaskScheduler::Failed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return failed_;
}

void TaskScheduler::Fail(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mutex_);
  FailLocked(std::move(error));
}

}  // namespace tessera::exec
