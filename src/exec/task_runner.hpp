// Running one task of an op: retries, memory measurement, resume.
//
//   exec::OpTaskRunner runner(op_index, op, spec.reserved_mem, options, run_start);
//   std::optional<TaskRecord> record = runner.Run(task, op.projected_mem(task), cancelled);
//
// Every attempt runs inside a ScopedMemoryAccount of a fresh MemoryAccount on the thread
// that runs it; the record of the attempt that succeeded carries the account's peak plus
// reserved_mem, and the fresh pages its thread touched less those of memory accounted
// elsewhere (new Buffers, the result array: MemoryAccount::NoteFresh) as unaccounted_mem.
// Only a failure that may pass is retried: a StorageError, or an exception that is not
// Tessera's (IsRetryable); a FormatError (bad metadata, a corrupt chunk: its bytes do not
// change on the next read), InvalidArgument, MemoryBudgetError or internal Error fails
// the task at its first attempt.
// A task that fails options.retries + 1 times makes Run throw `op "add-3" failed at block
// (1, 2) after 3 attempts: <last cause>`, as the last cause's Tessera error type
// (ThrowLike); once `cancelled` is set (another task failed) it makes no further
// attempts. The scheduler (task_scheduler.hpp) decides which tasks run when, and on which
// lane (TaskRecord::worker, left 0 here).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "tessera/exec/execution_report.hpp"
#include "tessera/plan/internal/executable_op.hpp"

namespace tessera::exec {

// Whether a task that failed with `error` is tried again (see above).
bool IsRetryable(const std::exception_ptr& error);

class OpTaskRunner {
 public:
  // `op` and `options` must outlive the runner.
  OpTaskRunner(int op_index, const planner::ExecutableOp& op, std::int64_t reserved_mem,
               const ExecuteOptions& options, std::chrono::steady_clock::time_point run_start);

  // Runs (or, when resuming and IsTaskDone() says so, skips) `task`, whose projection
  // (op.projected_mem(task), which the caller has computed for admission) is `projected`:
  // its record, or nullopt when `cancelled` was set before an attempt succeeded.
  // Thread-safe: tasks of one op may run at once on several threads.
  std::optional<TaskRecord> Run(std::int64_t task, std::int64_t projected,
                                const std::atomic<bool>& cancelled) const;

 private:
  // The task run to success; nullopt when the run was cancelled before it succeeded.
  std::optional<TaskRecord> RunOne(std::int64_t task, std::int64_t projected,
                                   const std::atomic<bool>& cancelled) const;
  // A record of `task` before any attempt (attempts 0).
  TaskRecord NewRecord(std::int64_t task, std::int64_t projected) const;
  // Whether a previous run already did `task` (resume).
  bool IsDone(std::int64_t task) const;

  int op_index_;
  const planner::ExecutableOp& op_;
  std::int64_t reserved_mem_;
  const ExecuteOptions& options_;
  std::chrono::steady_clock::time_point run_start_;
};

// The text of an exception_ptr's exception: what() or "unknown exception".
std::string DescribeException(const std::exception_ptr& error);

// Throws `message` as the same Tessera error type as `cause` (InvalidArgument,
// MemoryBudgetError, StorageError, FormatError), else as tessera::Error, with `cause`
// nested in it (std::nested_exception).
[[noreturn]] void ThrowLike(const std::exception_ptr& cause, const std::string& message);

// The exception `error` was thrown for (ThrowLike's nested cause), or `error` itself.
std::exception_ptr CauseOf(const std::exception_ptr& error);

}  // namespace tessera::exec
