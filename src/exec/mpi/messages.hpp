// The MPI executor's messages: the leader's orders to ranks (kTagControl), the ranks'
// reports to the leader (kTagReport) and block values between ranks (kTagData), each a
// kind byte and its fields (wire.hpp); and Outbox, where any thread leaves a message for
// the one thread that talks to MPI. Internal to src/exec/mpi.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/exec/execution_report.hpp"
#include "tessera/plan/internal/executable_op.hpp"
#include "wire.hpp"

namespace tessera::exec::mpi {

// Leader to rank.
enum class Order : std::uint8_t {
  kPrepare,      // op: follow its Prepare
  kRun,          // op, task: run it
  kCommit,       // op: commit it (PlanRun::CommitOp; rank 0 first, then the others)
  kSend,         // op, block, to, purpose, region: send it to rank `to` (this one too)
  kDrop,         // op, block: forget this rank's copy
  kSpill,        // op, block, path: write the block to the shared file, forget it, report
  kReadSpilled,  // op, block, path: tasks here wait for (parts of) the block; read it
  kFinish,       // the run is over: report (kFinished) and return
  kAbort,        // error: the run failed; stop and throw it
};

// Rank to leader.
enum class Report : std::uint8_t {
  kPrepared,    // op
  kDone,        // op, task, record, blocks written: (block, bytes)...
  kFailed,      // op, task, retryable (the cause may pass), error
  kWant,        // op, block, region: a task here reads that region of a block held elsewhere
  kArrived,     // op, block: a copy sent to keep arrived and was kept
  kMissing,     // op, block, to, region: asked to send a block this rank does not hold
  kCommitted,   // op, bytes: committed it, holding those bytes of its blocks before
  kSpilled,     // op, block: written to its shared file and dropped here
  kStepFailed,  // error: a prepare, commit or spill failed here, or the rank's MPI thread
  kFinished,    // RankReport
};

// Why a block is sent: for a waiting task only, or to be kept where it goes.
enum class Purpose : std::uint8_t { kForTask, kKeep };

// Whether op `op`'s output is an intermediate held in the ranks' memory (the RAM tier,
// whole or in part): the blocks the chunk directory manages.
bool HeldInMemory(planner::ExecutableOp& op);

// An error as it crosses ranks: its Tessera type and its text.
struct WireError {
  std::uint8_t kind = 0;
  std::string message;
};
WireError ToWire(const std::exception_ptr& error);
// Throws `error` as its Tessera type, its text prefixed by `prefix`.
[[noreturn]] void Rethrow(const WireError& error, const std::string& prefix = "");
void PutError(Writer& writer, const WireError& error);
WireError GetError(Reader& reader);

// A region (global coordinates): its rank, start and shape.
void PutRegion(Writer& writer, const Region& region);
Region GetRegion(Reader& reader);

void PutRecord(Writer& writer, const TaskRecord& record);
TaskRecord GetRecord(Reader& reader, const std::string& op_name);

void PutRankReport(Writer& writer, const RankReport& report);
RankReport GetRankReport(Reader& reader);

struct Outgoing {
  int destination = 0;
  int tag = 0;
  std::vector<std::byte> bytes;
};

// Messages any thread leaves for the MPI thread. Thread-safe.
class Outbox {
 public:
  void Push(int destination, int tag, std::vector<std::byte> bytes);
  // What was pushed since the last call; waits up to `wait` for something when empty.
  std::deque<Outgoing> Take(std::chrono::microseconds wait);
  // Wakes a Take that waits.
  void Wake();

 private:
  std::mutex mutex_;
  std::condition_variable pushed_;
  std::deque<Outgoing> messages_;  // GUARDED_BY(mutex_)
  bool woken_ = false;             // GUARDED_BY(mutex_)
};

}  // namespace tessera::exec::mpi
