// Leader: the MPI run's scheduler, on rank 0. It prepares and commits every op (ranks
// follow), sends each task to a rank, and keeps the chunk directory (the cluster's memory
// manager, ../chunk_directory.hpp) of the blocks of in-memory outputs.
//
//   Leader leader(run, ranks, options, outbox, own_agent);
//   leader.Start();
//   leader.HandleReport(message);     // each report, on the MPI thread
//   leader.done()                     // every op committed and every rank finished
//
// Scheduling: ops run in dependency order, several at once, as the threads executor
// runs them (task_scheduler.hpp): a task goes, in plan order, to a rank with a free thread
// whose memory (RankSetup::capacity, admitted as MemoryAdmission does) fits its cost;
// among those, the rank holding the most bytes of the blocks of its inputs with the
// task's index (an elementwise read of an in-memory intermediate), else the rank with
// the most free threads. Those of its inputs held on its rank are pinned there (never
// moved or dropped) while it is queued or runs. When the first op's next task fits nowhere, later
// ops' tasks may pass it, at most as many as the cluster has threads, so it is never starved.
//
// Blocks: a rank's finished task reports the blocks it wrote; the directory places,
// replicates (a block read from several ranks), rebalances (copy, confirm, then drop),
// spills (to a file in the shared work_dir, when the blocks pass the ranks' memory for
// them) and frees them (when the op's last reader committed), and every decision it
// takes is carried out by orders to the ranks. compute()'s result is sent to every rank before
// its op commits, so that every rank returns it. Before an in-memory op commits the
// directory rebalances it and its copies are confirmed, so readers find it balanced.
//
// Failures: a task that fails with a retryable error (task_runner.hpp's IsRetryable) is
// run again on a rank it has not failed on while there is one, up to the run's retries;
// any other failure (of a task, a prepare or commit on any rank, on_task) aborts the run
// on every rank with that error. Not thread-safe: the MPI thread calls it.
// Internal to src/exec/mpi.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "../chunk_directory.hpp"
#include "../memory_admission.hpp"
#include "messages.hpp"
#include "rank_agent.hpp"
#include "tessera/exec/internal/plan_run.hpp"

namespace tessera::exec::mpi {

struct RankSetup {
  int workers = 1;
  std::int64_t capacity = 0;  // what its tasks are admitted against
};

struct LeaderOptions {
  DirectoryOptions directory;  // its capacity is filled from the ranks'
  int place_on_rank = -1;      // >= 0: every task on that rank (tests of rebalancing)
  bool can_spill = true;       // false: no folder every rank reaches (a spill throws)
};

class Leader {
 public:
  Leader(PlanRun& run, std::vector<RankSetup> ranks, LeaderOptions options, Outbox& outbox,
         RankAgent& own);
  ~Leader();  // removes the folder of spilled blocks
  Leader(const Leader&) = delete;
  Leader& operator=(const Leader&) = delete;

  void Start();
  void HandleReport(const Message& message);
  // Every op committed and every rank reported its figures, or the run failed.
  bool done() const { return failed_ || (finishing_ && finished_left_ == 0); }
  // Ends the run with `error` (a failure of this rank's MPI thread): every other rank is
  // told to abort with it. Only the first failure counts.
  void Fail(std::exception_ptr error);
  // The failure that ended the run, or nullptr.
  std::exception_ptr error() const { return error_; }
  AdmissionFigures figures() const { return figures_; }
  ClusterReport cluster_report() const;

 private:
  // kCommitting: its copies on their way (result blocks, rebalancing); kCommitOrdered:
  // the ranks commit it (rank 0, then the others).
  enum class State {
    kWaiting,
    kReady,
    kPreparing,
    kRunning,
    kCommitting,
    kCommitOrdered,
    kCommitted
  };
  struct Retry {
    std::int64_t task = 0;
    std::vector<int> failed_on;
  };
  struct OpProgress {
    State state = State::kWaiting;
    int inputs_left = 0;
    int readers_left = 0;  // ops reading it that have not committed
    std::vector<int> readers;
    std::int64_t next_task = 0;
    std::int64_t finished = 0;
    int acks_left = 0;               // ranks yet to prepare it, or to commit it
    bool freed = false;              // its last reader committed: released on every rank
    std::int64_t arrivals_left = 0;  // gathered result blocks and copies not yet confirmed
    std::deque<Retry> retries;
    std::vector<int> holder;  // compute()'s result: the rank that wrote each block
  };
  struct Running {
    int rank = 0;
    std::int64_t cost = 0;
    std::vector<int> failed_on;
    std::vector<ChunkKey> pinned;  // its inputs on its rank, pinned there until it ends
  };
  enum class Pending { kGather, kReplica, kCopy };

  void Dispatch();
  // Sends the next task of op `op` (a retry first) if a rank fits it; false otherwise.
  bool StartNext(int op);
  // The blocks of in-memory ops task `task` of op `op` reads in place: those with its
  // index (an elementwise read), where the directory knows them.
  std::vector<ChunkKey> LocalInputs(int op, std::int64_t task) const;
  int ChooseRank(int op, std::int64_t task, std::int64_t cost, const std::vector<int>& failed_on);
  void Prepare(int op);
  void Prepared(int op);
  // Task `task` of `op` ended on `rank` (succeeded or failed): its thread, memory and
  // pins are given back. Returns what was kept of it while it ran.
  Running EndTask(int rank, int op, std::int64_t task);
  void TaskDone(int rank, Reader& reader);
  void TaskFailed(int rank, Reader& reader);
  void Want(int rank, int op, Index block, const Region& region);
  // Orders the rank the directory picks to send `region` of the block to `rank` (not
  // `not_from`, which lacked it), or `rank` to read a spilled block's file.
  void SendForRead(int rank, int op, Index block, const Region& region, int not_from);
  void Arrived(int rank, int op, Index block);
  void Missing(int holder, int op, Index block, int to, const Region& region);
  void BeginCommit(int op);
  void Commit(int op);
  void OrderCommit(int rank, int op);
  // Rank `rank` committed op `op` (Report::kCommitted).
  void CommitAcknowledged(int rank, int op);
  void Finish();
  void ApplyDecisions();
  void SendOrder(int rank, std::vector<std::byte> bytes);
  // Orders `holder` to send `region` of the block (the whole block by default) to `to`.
  void SendBlock(int holder, int op, Index block, int to, Purpose purpose, const Region& region);
  void SendBlock(int holder, int op, Index block, int to, Purpose purpose);
  std::int64_t BlockBytes(int op, Index block) const;
  planner::ExecutableOp& Op(int op) const;
  bool IsMemoryOutput(int op) const;  // HeldInMemory(Op(op))
  // The file of a spilled block, in a folder of this run's under spec.work_dir (or the
  // system temp dir), made on first use.
  std::filesystem::path SpillPath(int op, Index block);

  PlanRun& run_;
  std::vector<RankSetup> ranks_;
  LeaderOptions options_;
  Outbox& outbox_;
  RankAgent& own_;
  ChunkDirectory directory_;

  std::vector<OpProgress> ops_;
  std::set<int> open_;  // ops to prepare or with tasks to start, in plan order
  std::vector<MemoryAdmission> admission_;
  std::vector<int> free_threads_;
  std::map<std::pair<int, std::int64_t>, Running> running_;
  std::map<std::tuple<int, Index, int>, Pending> pending_;
  std::vector<std::vector<std::int64_t>> holding_;  // per op, per rank: bytes at commit
  int total_threads_ = 0;
  int committed_ = 0;
  int blocked_op_ = -1;
  std::int64_t blocked_task_ = -1;
  int bypasses_ = 0;
  int running_tasks_ = 0;
  std::int64_t admitted_ = 0;
  AdmissionFigures figures_;
  ClusterReport cluster_;
  bool finishing_ = false;
  int finished_left_ = 0;
  bool failed_ = false;
  std::exception_ptr error_;
  std::filesystem::path spill_directory_;
};

}  // namespace tessera::exec::mpi
