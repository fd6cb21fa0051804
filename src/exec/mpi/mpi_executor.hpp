// The "mpi" executor: one plan run by every rank of an MPI job (DESIGN.md, "Executors").
//
//   mpirun -np 4 ./program            // every rank builds the same plan and computes it
//   spec.executor = "mpi";            // spec.executor_options: see below
//   NDArray result = y.compute(options);   // every rank returns the whole result
//
// Every rank runs Execute with the same plan (they check so first: InvalidArgument on
// every rank when the plans differ). Rank 0 leads: it prepares and commits every op and
// schedules each task to a rank (leader.hpp) by memory and by where its inputs are;
// every rank, rank 0 too, runs the tasks it is sent on its own threads (rank_agent.hpp).
// Targets and disk intermediates go to storage every rank reaches (spec.work_dir must be
// a shared folder when the ranks are on several machines); in-memory intermediates stay
// in the memory of the ranks that wrote them and move between ranks over MPI, managed by
// the chunk directory (../chunk_directory.hpp).
//
// Each rank's memory: spec.total_mem / ranks when total_mem is set, else the machine's
// detected memory shared equally by the ranks on it (JoinMpiCluster); its tasks are
// admitted against that less reserved_mem. Its threads: spec.max_workers, or the
// machine's hardware threads shared by its ranks (at least 1).
//
// spec.executor_options (each a whole number unless said): min_replicas (copies kept of
// every in-memory block, default 1), max_replicas (3), replicate_after (a block read from
// this many ranks other than its holders gets a copy on the next, 2), high_watermark (a
// fraction, 0.8: a rank above it sheds blocks to the emptiest ranks), place_on_rank (runs
// every task on that rank, to test rebalancing; -1). Anything else is refused.
//
// Built only where CMake found MPI; MPI is started on first use, or adopted when the
// program (mpi4py) started it (mpi_world.hpp).
//
// Failures: a rank that fails before its run starts (Abandon) or while starting it makes
// every rank throw; any failure during the run (a task, a step, a message) reaches the
// leader, which aborts every rank with it. A rank that dies (killed) ends the job: MPI's
// own rule.
#pragma once

#include <string_view>
#include <vector>

#include "leader.hpp"
#include "tessera/exec/internal/executor.hpp"

namespace tessera::exec::mpi {

class MpiExecutor : public Executor {
 public:
  // Reads spec.executor_options (InvalidArgument for a bad one) and starts MPI.
  explicit MpiExecutor(const Spec& spec);

  std::string_view name() const override { return "mpi"; }
  int workers() const override { return workers_; }
  bool leads() const override { return rank_ == 0; }
  AdmissionFigures Run(PlanRun& run) override;
  // Meets the other ranks' Run as one that failed: they throw, saying so.
  void Abandon() noexcept override;

 private:
  // The ranks meet (collective, on `channel`): each brings whether it got here whole
  // (`run` null: it did not), its plan's hash, threads and memory. Throws on every rank
  // when one failed or planned differently; returns each rank's setup otherwise.
  std::vector<RankSetup> Meet(const PlanRun* run, const Channel& channel) const;

  int rank_ = 0;
  int ranks_ = 1;
  int workers_ = 1;
  std::int64_t capacity_ = 0;
  bool shared_work_dir_ = true;  // every rank reaches the work dir (one machine, or set)
  LeaderOptions options_;
};

}  // namespace tessera::exec::mpi

namespace tessera::exec {
// Registers "mpi" (src/exec/executor_registry.cpp, in builds with MPI).
void RegisterMpiExecutor(ExecutorRegistry& registry);
}  // namespace tessera::exec
