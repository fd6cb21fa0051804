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
// Across processes (an MPI run, every process holding the same plan), one process leads:
// it calls Prepare, Commit and Release as above. Every other process follows: it calls
// FollowPrepare after the leader's Prepare, FollowCommit after the leader's Commit and
// FollowRelease where the leader Releases; these open and drop what the leader made on
// shared storage without creating, moving or removing anything there. Tasks run on any
// process once it followed the op's Prepare.
//
// Internal to the engine (not installed): the plan layer implements it, executors
// (exec/) call it.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/plan/internal/shared_blocks.hpp"
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

  // The follower's counterparts (above). By default those of an op whose output lives in
  // the process alone: Prepare, Commit and Release themselves.
  virtual void FollowPrepare() { Prepare(); }
  virtual void FollowCommit() { Commit(); }
  virtual void FollowRelease() { Release(); }
  // The output's blocks when it is held in this process's memory (the RAM tier,
  // compute()'s result), for an executor that moves them between processes; nullptr
  // when it is not (stored, or held some other way).
  virtual SharedBlocks* shared_blocks() { return nullptr; }
};

}  // namespace tessera::planner
