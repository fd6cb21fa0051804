// RankAgent: what every rank of an MPI run does (the leader's rank too): runs the tasks
// the leader sends it on its own threads, follows the leader's prepares and commits, and
// holds, sends, keeps and drops blocks of in-memory outputs as the leader orders. A task
// reading (part of) a block held on another rank asks the leader (Report::kWant) and
// waits; the part's values come straight from the rank holding it.
//
//   RankAgent agent(run, rank, workers, outbox);
//   agent.HandleOrder(message);   // on the MPI thread, as orders arrive
//   agent.HandleData(message);
//
// Tasks run through RunPlanTask with no retries of their own: the leader retries a
// failed task, on another rank where there is one. A task's record names its rank as
// its worker. Orders and data are handled on the one thread that talks to MPI; tasks run
// on the agent's threads, which report through the Outbox. Internal to src/exec/mpi.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "messages.hpp"
#include "mpi_world.hpp"
#include "tessera/exec/internal/plan_run.hpp"

namespace tessera::exec::mpi {

class RankAgent {
 public:
  RankAgent(PlanRun& run, int rank, int workers, Outbox& outbox);
  ~RankAgent();  // stops its threads (after their tasks end)
  RankAgent(const RankAgent&) = delete;
  RankAgent& operator=(const RankAgent&) = delete;

  // An order from the leader. kFinish and kAbort end the agent: finished() is then true
  // (and error() set for kAbort).
  void HandleOrder(const Message& message);
  // Block values from another rank.
  void HandleData(const Message& message);
  // The leader prepared op `op` on this rank itself (its own PrepareOp).
  void OpPrepared(int op);
  // Stops the threads: queued tasks are dropped, running ones end, waiting reads fail.
  void Stop();
  // The bytes of op `op`'s blocks this rank holds now (0 for an op not held in memory).
  std::int64_t HeldBytes(int op);

  bool finished() const { return finished_; }
  const std::optional<WireError>& error() const { return error_; }
  // This rank's figures so far.
  RankReport Figures() const;

 private:
  struct Waiting {
    std::promise<std::shared_ptr<const NDArray>> promise;
    std::shared_future<std::shared_ptr<const NDArray>> future;
  };

  // The op's blocks held in memory (ExecutableOp::shared_blocks), or nullptr.
  planner::SharedBlocks* BlocksOf(int op) const;
  void Work();
  void RunOne(int op, std::int64_t task);
  // What a task waits for: a region of a block of an op.
  using WaitKey = std::tuple<int, Index, std::vector<Index>>;
  static WaitKey KeyOf(int op, Index block, const Region& region);

  std::shared_ptr<const NDArray> Fetch(int op, Index block, const Region& region);
  // Fulfils the tasks waiting for `key`; Deliver with a whole block fulfils every region
  // of it waited for (a spilled block, read whole); Fail fails them.
  void Deliver(const WaitKey& key, const std::shared_ptr<const NDArray>& values);
  void DeliverWhole(int op, Index block, const std::shared_ptr<const NDArray>& values);
  void Fail(int op, Index block, const std::exception_ptr& error);
  void Report(std::vector<std::byte> bytes) { outbox_.Push(0, kTagReport, std::move(bytes)); }
  void StepFailed(const std::exception_ptr& error);

  PlanRun& run_;
  const int rank_;
  Outbox& outbox_;
  ExecuteOptions task_options_;  // the run's, with no retries (the leader retries)
  std::vector<std::thread> threads_;

  mutable std::mutex mutex_;  // guards the members below
  std::condition_variable queued_;
  std::deque<std::pair<int, std::int64_t>> queue_;
  bool stopping_ = false;
  std::map<WaitKey, Waiting> waiting_;
  std::int64_t tasks_ = 0;
  std::int64_t measured_max_ = 0;

  // The MPI thread's own.
  bool finished_ = false;
  std::optional<WireError> error_;
  std::int64_t held_bytes_max_ = 0;
};

}  // namespace tessera::exec::mpi
