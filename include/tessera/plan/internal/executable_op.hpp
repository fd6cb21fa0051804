// ExecutableOp: the face one op of a finalized plan shows to an executor.
//
// An executor runs a plan it did not build: for each op, in the plan's order, it
// calls Prepare() once, runs every task (RunTask(t) for t in [0, num_tasks()),
// skipping those IsTaskDone(t) reports when resuming), then Commit() once, and
// Release()s an op's output as soon as every op that reads it has committed.
// RunTask may be called concurrently for different tasks and again for the same task
// after a failure (a task is idempotent: it overwrites its own output block). All
// Tessera memory a task holds is allocated in Buffers on the calling thread, so an
// executor measures it with a ScopedMemoryAccount around RunTask.
//
// Internal to the engine (not installed): the plan layer implements it, executors
// (exec/) call it.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/plan/op_info.hpp"

namespace tessera::planner {

class ExecutableOp {
 public:
  virtual ~ExecutableOp() = default;

  virtual const OpInfo& info() const = 0;
  // The projection of one task (<= info().projected_mem), for admission by memory.
  virtual std::int64_t projected_mem(std::int64_t task) const = 0;
  // "block (1, 2)": names a task in messages.
  virtual std::string DescribeTask(std::int64_t task) const = 0;

  // Refuses (throws) what would make Prepare() fail for a reason known before anything
  // runs (resuming into another computation's partial output), so that such a run is
  // refused before any op does work. Called for every op, in plan order, before the
  // first op is prepared. Touches nothing.
  virtual void CheckBeforeRun() const {}
  // Creates the op's output (store, array metadata). Called once, before any task.
  virtual void Prepare() = 0;
  // True when a previous, interrupted run already wrote this task's output (resume).
  virtual bool IsTaskDone(std::int64_t task) const = 0;
  // Computes and stores one task's output. Throws on failure.
  virtual void RunTask(std::int64_t task) const = 0;
  // After every task succeeded: makes the output visible (e.g. moves a Zarr target
  // into place).
  virtual void Commit() = 0;
  // The output is no longer needed by any later op: frees an intermediate. No-op for
  // results and targets.
  virtual void Release() = 0;
};

}  // namespace tessera::planner
