// Admission by memory: which tasks may run at once under total_mem.
//
//   exec::MemoryAdmission pool(spec.effective_total_mem() - spec.reserved_mem);
//   const std::int64_t cost =
//       exec::TaskCost(op.info(), op.projected_mem(task), spec.reserved_mem);
//   if (pool.Fits(cost)) { pool.Admit(cost); RunTask(task); pool.Release(cost); }
//
// The pool holds what the process may use beyond its baseline (reserved_mem is counted
// once: the threads of one process share it). A task's cost is what it holds beyond
// that baseline: its projection, or the plan's learned figure when that came from
// history and is larger, less reserved_mem, and at least 1 byte so that every running
// task counts. A task fits when its cost is at most what the running tasks leave of
// the capacity, or when nothing runs: a task larger than the whole pool runs, alone,
// rather than never. The pool also keeps the high-water marks the executor reports
// (ExecutionReport::max_tasks_at_once, max_admitted_mem).
//
// Not thread-safe: the scheduler calls it under its own mutex.
#pragma once

#include <cstdint>

#include "tessera/plan/internal/executable_op.hpp"

namespace tessera::exec {

// What a task of the op `info` describes, projected at `projected` (reserved_mem
// included), holds beyond the process baseline (see above): at least 1.
std::int64_t TaskCost(const OpInfo& info, std::int64_t projected, std::int64_t reserved_mem);

class MemoryAdmission {
 public:
  // `capacity` <= 0 admits one task at a time.
  explicit MemoryAdmission(std::int64_t capacity) : capacity_(capacity) {}

  // Whether a task of `cost` may start now.
  bool Fits(std::int64_t cost) const { return running_ == 0 || cost <= capacity_ - admitted_; }
  // A task of `cost` starts. REQUIRES: Fits(cost).
  void Admit(std::int64_t cost);
  // A task admitted with `cost` has ended.
  void Release(std::int64_t cost);

  std::int64_t capacity() const { return capacity_; }
  std::int64_t admitted() const { return admitted_; }  // the running tasks' costs
  int running() const { return running_; }
  int max_running() const { return max_running_; }             // most tasks at once so far
  std::int64_t max_admitted() const { return max_admitted_; }  // largest admitted() so far

 private:
  std::int64_t capacity_;
  std::int64_t admitted_ = 0;
  int running_ = 0;
  int max_running_ = 0;
  std::int64_t max_admitted_ = 0;
};

}  // namespace tessera::exec
