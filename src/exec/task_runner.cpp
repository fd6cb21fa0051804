#include "task_runner.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"
#include "tessera/memory/process_memory.hpp"

namespace tessera::exec {

using planner::ExecutableOp;

std::string DescribeException(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& exception) {
    return exception.what();
  } catch (...) {
    return "unknown exception";
  }
}

void ThrowLike(const std::exception_ptr& cause, const std::string& message) {
  // Each keeps `cause` nested (CauseOf), so that a caller can still tell what failed.
  try {
    std::rethrow_exception(cause);
  } catch (const InvalidArgument&) {
    std::throw_with_nested(InvalidArgument(message));
  } catch (const MemoryBudgetError&) {
    std::throw_with_nested(MemoryBudgetError(message));
  } catch (const StorageError&) {
    std::throw_with_nested(StorageError(message));
  } catch (const FormatError&) {
    std::throw_with_nested(FormatError(message));
  } catch (...) {
    std::throw_with_nested(Error(message));
  }
}

std::exception_ptr CauseOf(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::nested_exception& nested) {
    return nested.nested_ptr() != nullptr ? nested.nested_ptr() : error;
  } catch (...) {
    return error;
  }
}

bool IsRetryable(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const StorageError&) {
    return true;  // a store's I/O can fail once and succeed on the next try
  } catch (const Error&) {
    // FormatError (bad metadata, a chunk that does not decode: the bytes read again are
    // the same bytes), InvalidArgument, MemoryBudgetError and internal errors fail alike
    // on every attempt.
    return false;
  } catch (...) {
    return true;  // not Tessera's (std::bad_alloc, a library's error): it may pass
  }
}

OpTaskRunner::OpTaskRunner(int op_index, const ExecutableOp& op, std::int64_t reserved_mem,
                           const ExecuteOptions& options,
                           std::chrono::steady_clock::time_point run_start)
    : op_index_(op_index),
      op_(op),
      reserved_mem_(reserved_mem),
      options_(options),
      run_start_(run_start) {}

TaskRecord OpTaskRunner::NewRecord(std::int64_t task, std::int64_t projected) const {
  TaskRecord record;
  record.op = op_index_;
  record.op_name = op_.info().name;
  record.task = task;
  record.projected_mem = projected;
  record.attempts = 0;
  return record;
}

std::optional<TaskRecord> OpTaskRunner::RunOne(std::int64_t task, std::int64_t projected,
                                               const std::atomic<bool>& cancelled) const {
  using Clock = std::chrono::steady_clock;
  TaskRecord record = NewRecord(task, projected);
  const int max_attempts = 1 + std::max(0, options_.retries);
  const Clock::time_point start = Clock::now();
  record.start_seconds = std::chrono::duration<double>(start - run_start_).count();
  std::exception_ptr last_error;
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    if (cancelled.load(std::memory_order_relaxed)) return std::nullopt;
    record.attempts = attempt;
    auto account = std::make_shared<MemoryAccount>();
    const std::int64_t faulted_before = ThreadFaultedBytes();
    try {
      ScopedMemoryAccount scope(account);
      op_.RunTask(task);
    } catch (...) {
      last_error = std::current_exception();
      if (!IsRetryable(last_error)) break;
      continue;
    }
    const std::int64_t faulted = ThreadFaultedBytes() - faulted_before;
    record.measured_mem = account->peak_bytes() + reserved_mem_;
    record.unaccounted_mem = std::max<std::int64_t>(faulted - account->fresh_bytes(), 0);
    record.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return record;
  }
  const int attempts = record.attempts;
  ThrowLike(last_error, "op \"" + op_.info().name + "\" failed at " + op_.DescribeTask(task) +
                            " after " + std::to_string(attempts) +
                            (attempts == 1 ? " attempt: " : " attempts: ") +
                            DescribeException(last_error));
}

bool OpTaskRunner::IsDone(std::int64_t task) const {
  try {
    return op_.IsTaskDone(task);
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    ThrowLike(error, "op \"" + op_.info().name + "\" could not tell whether " +
                         op_.DescribeTask(task) + " is done (resume): " + DescribeException(error));
  }
}

std::optional<TaskRecord> OpTaskRunner::Run(std::int64_t task, std::int64_t projected,
                                            const std::atomic<bool>& cancelled) const {
  if (options_.resume && IsDone(task)) {
    TaskRecord record = NewRecord(task, projected);
    record.skipped = true;
    return record;
  }
  return RunOne(task, projected, cancelled);
}

}  // namespace tessera::exec
