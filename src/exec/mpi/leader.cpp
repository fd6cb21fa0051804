#include "leader.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <string>
#include <utility>

#include "tessera/core/errors.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera::exec::mpi {
namespace {

std::exception_ptr AsException(const WireError& error, const std::string& prefix) {
  try {
    Rethrow(error, prefix);
  } catch (...) {
    return std::current_exception();
  }
}

// The memory a rank has for blocks: its memory less what its tasks may hold at once (its
// threads, each with the plan's largest task).
DirectoryOptions WithCapacities(DirectoryOptions options, const std::vector<RankSetup>& ranks,
                                const PlanRun& run) {
  std::int64_t largest = 0;
  for (const auto& op : run.ops()) {
    largest =
        std::max(largest, TaskCost(op->info(), op->info().projected_mem, run.spec().reserved_mem));
  }
  options.capacity.clear();
  for (const RankSetup& rank : ranks) {
    options.capacity.push_back(
        std::max<std::int64_t>(rank.capacity - std::int64_t{rank.workers} * largest, 1));
  }
  return options;
}

}  // namespace

Leader::Leader(PlanRun& run, std::vector<RankSetup> ranks, LeaderOptions options, Outbox& outbox,
               RankAgent& own)
    : run_(run),
      ranks_(std::move(ranks)),
      options_(std::move(options)),
      outbox_(outbox),
      own_(own),
      directory_(WithCapacities(options_.directory, ranks_, run)),
      ops_(run.ops().size()),
      holding_(run.ops().size()) {
  for (const RankSetup& rank : ranks_) {
    admission_.emplace_back(rank.capacity);
    free_threads_.push_back(std::max(rank.workers, 1));
    total_threads_ += std::max(rank.workers, 1);
  }
  for (std::size_t index = 0; index < ops_.size(); ++index) {
    const std::vector<int>& inputs = run.inputs(static_cast<int>(index));
    ops_[index].inputs_left = static_cast<int>(inputs.size());
    for (const int input : inputs) {
      ops_[static_cast<std::size_t>(input)].readers.push_back(static_cast<int>(index));
      ++ops_[static_cast<std::size_t>(input)].readers_left;
    }
    if (inputs.empty()) {
      ops_[index].state = State::kReady;
      open_.insert(static_cast<int>(index));
    }
  }
  cluster_.ranks = static_cast<int>(ranks_.size());
  cluster_.block_bytes.assign(ops_.size(), 0);
}

void Leader::Start() {
  if (ops_.empty()) {
    Finish();
    return;
  }
  Dispatch();
}

void Leader::SendOrder(int rank, std::vector<std::byte> bytes) {
  outbox_.Push(rank, kTagControl, std::move(bytes));
}

planner::ExecutableOp& Leader::Op(int op) const {
  return *run_.ops()[static_cast<std::size_t>(op)];
}

bool Leader::IsMemoryOutput(int op) const { return HeldInMemory(Op(op)); }

std::int64_t Leader::BlockBytes(int op, Index block) const {
  const planner::SharedBlocks* blocks = Op(op).shared_blocks();
  return ShapeSize(blocks->BlockRegion(block).shape) * blocks->dtype().itemsize();
}

void Leader::Dispatch() {
  if (failed_) return;
  try {
    bool head_seen = false;
    const std::vector<int> open(open_.begin(), open_.end());
    for (const int op : open) {
      OpProgress& progress = ops_[static_cast<std::size_t>(op)];
      if (progress.state == State::kReady) {
        Prepare(op);  // then its tasks, at once when it has no follower to wait for
        if (failed_) return;
      }
      if (progress.state != State::kRunning) continue;
      const bool head = !head_seen;
      head_seen = true;
      while (!failed_ &&
             (progress.retries.size() > 0 || progress.next_task < Op(op).info().num_tasks)) {
        const std::int64_t task =
            progress.retries.empty() ? progress.next_task : progress.retries.front().task;
        if (!head && blocked_op_ >= 0 && bypasses_ >= total_threads_) break;
        if (!StartNext(op)) {
          if (head) {
            if (blocked_op_ != op || blocked_task_ != task) bypasses_ = 0;
            blocked_op_ = op;
            blocked_task_ = task;
          }
          break;
        }
        if (head) {
          blocked_op_ = -1;
          blocked_task_ = -1;
          bypasses_ = 0;
        } else if (blocked_op_ >= 0) {
          ++bypasses_;
        }
      }
      if (progress.retries.empty() && progress.next_task >= Op(op).info().num_tasks) {
        open_.erase(op);
      }
    }
  } catch (...) {
    Fail(std::current_exception());
  }
}

std::vector<ChunkKey> Leader::LocalInputs(int op, std::int64_t task) const {
  std::vector<ChunkKey> inputs;
  for (const int input : run_.inputs(op)) {
    if (!IsMemoryOutput(input)) continue;
    const planner::SharedBlocks* blocks = Op(input).shared_blocks();
    if (task < blocks->num_blocks() && directory_.knows(ChunkKey{input, task})) {
      inputs.push_back(ChunkKey{input, task});
    }
  }
  return inputs;
}

int Leader::ChooseRank(int op, std::int64_t task, std::int64_t cost,
                       const std::vector<int>& failed_on) {
  const int count = static_cast<int>(ranks_.size());
  const auto eligible = [&](int rank) {
    return options_.place_on_rank < 0 || rank == options_.place_on_rank % count;
  };
  // Ranks the task failed on are avoided while an eligible one is left untried.
  bool avoid = false;
  for (int rank = 0; rank < count; ++rank) {
    avoid = avoid || (eligible(rank) &&
                      std::find(failed_on.begin(), failed_on.end(), rank) == failed_on.end());
  }
  std::vector<int> candidates;
  for (int rank = 0; rank < count; ++rank) {
    if (!eligible(rank)) continue;
    if (free_threads_[static_cast<std::size_t>(rank)] <= 0) continue;
    if (!admission_[static_cast<std::size_t>(rank)].Fits(cost)) continue;
    if (avoid && std::find(failed_on.begin(), failed_on.end(), rank) != failed_on.end()) continue;
    candidates.push_back(rank);
  }
  if (candidates.empty()) return -1;
  const std::vector<ChunkKey> inputs = LocalInputs(op, task);
  bool held = false;
  for (const ChunkKey& key : inputs) held = held || directory_.knows(key);
  if (held) return directory_.PlaceTask(inputs, candidates);
  return *std::max_element(candidates.begin(), candidates.end(), [&](int a, int b) {
    return free_threads_[static_cast<std::size_t>(a)] < free_threads_[static_cast<std::size_t>(b)];
  });
}

bool Leader::StartNext(int op) {
  OpProgress& progress = ops_[static_cast<std::size_t>(op)];
  const planner::ExecutableOp& executable = Op(op);
  Retry retry;
  if (progress.retries.empty()) {
    retry.task = progress.next_task;
  } else {
    retry = progress.retries.front();
  }
  const std::int64_t cost =
      TaskCost(executable.info(), executable.projected_mem(retry.task), run_.spec().reserved_mem);
  const int rank = ChooseRank(op, retry.task, cost, retry.failed_on);
  if (rank < 0) return false;
  if (progress.retries.empty()) {
    ++progress.next_task;
  } else {
    progress.retries.pop_front();
  }
  admission_[static_cast<std::size_t>(rank)].Admit(cost);
  --free_threads_[static_cast<std::size_t>(rank)];
  // Its inputs held on that rank stay there while it is queued or runs (pinned).
  std::vector<ChunkKey> pinned;
  for (const ChunkKey& key : LocalInputs(op, retry.task)) {
    const std::vector<int> holders = directory_.holders(key);
    if (std::find(holders.begin(), holders.end(), rank) == holders.end()) continue;
    directory_.Pin(key, rank);
    pinned.push_back(key);
  }
  running_[{op, retry.task}] = Running{rank, cost, std::move(retry.failed_on), std::move(pinned)};
  ++running_tasks_;
  admitted_ += cost;
  figures_.max_tasks_at_once = std::max(figures_.max_tasks_at_once, running_tasks_);
  figures_.max_admitted_mem = std::max(figures_.max_admitted_mem, admitted_);
  Writer order;
  order.Put(Order::kRun).Put<std::int32_t>(op).Put(retry.task);
  SendOrder(rank, order.Take());
  return true;
}

void Leader::Prepare(int op) {
  OpProgress& progress = ops_[static_cast<std::size_t>(op)];
  progress.state = State::kPreparing;
  run_.PrepareOp(op);
  own_.OpPrepared(op);
  progress.acks_left = static_cast<int>(ranks_.size()) - 1;
  for (int rank = 1; rank < static_cast<int>(ranks_.size()); ++rank) {
    Writer order;
    order.Put(Order::kPrepare).Put<std::int32_t>(op);
    SendOrder(rank, order.Take());
  }
  if (progress.acks_left == 0) Prepared(op);
}

void Leader::Prepared(int op) {
  OpProgress& progress = ops_[static_cast<std::size_t>(op)];
  progress.state = State::kRunning;
  if (Op(op).info().num_tasks <= 0) {
    open_.erase(op);
    BeginCommit(op);
  }
}

void Leader::HandleReport(const Message& message) {
  if (failed_) return;  // the ranks were told; what they still report is moot
  try {
    Reader reader(message.bytes);
    const auto kind = reader.Get<Report>();
    const int rank = message.source;
    switch (kind) {
      case Report::kPrepared: {
        const int op = reader.Get<std::int32_t>();
        if (--ops_[static_cast<std::size_t>(op)].acks_left == 0) Prepared(op);
        break;
      }
      case Report::kDone:
        TaskDone(rank, reader);
        break;
      case Report::kFailed:
        TaskFailed(rank, reader);
        break;
      case Report::kWant: {
        const int op = reader.Get<std::int32_t>();
        const auto block = reader.Get<Index>();
        Want(rank, op, block, GetRegion(reader));
        break;
      }
      case Report::kArrived: {
        const int op = reader.Get<std::int32_t>();
        Arrived(rank, op, reader.Get<Index>());
        break;
      }
      case Report::kMissing: {
        const int op = reader.Get<std::int32_t>();
        const auto block = reader.Get<Index>();
        const int to = reader.Get<std::int32_t>();
        Missing(rank, op, block, to, GetRegion(reader));
        break;
      }
      case Report::kSpilled: {
        const int op = reader.Get<std::int32_t>();
        const auto block = reader.Get<Index>();
        if (ops_[static_cast<std::size_t>(op)].freed) break;  // its file goes with the folder
        const ChunkKey key{op, block};
        // The copies elsewhere go too: the chunk now lives in its file alone.
        for (const int holder : directory_.holders(key)) {
          if (holder == rank) continue;
          Writer order;
          order.Put(Order::kDrop).Put<std::int32_t>(op).Put(block);
          SendOrder(holder, order.Take());
        }
        directory_.Spilled(key);
        cluster_.bytes_spilled += BlockBytes(op, block);
        ApplyDecisions();
        break;
      }
      case Report::kCommitted: {
        const int op = reader.Get<std::int32_t>();
        const auto bytes = reader.Get<std::int64_t>();
        if (IsMemoryOutput(op)) {
          std::vector<std::int64_t>& held = holding_[static_cast<std::size_t>(op)];
          held.resize(ranks_.size(), 0);
          held[static_cast<std::size_t>(rank)] = bytes;
        }
        CommitAcknowledged(rank, op);
        break;
      }
      case Report::kStepFailed:
        Fail(AsException(GetError(reader), "on rank " + std::to_string(rank) + ": "));
        return;
      case Report::kFinished: {
        RankReport figures = GetRankReport(reader);
        figures.capacity = ranks_[static_cast<std::size_t>(rank)].capacity;
        figures.max_admitted_mem = admission_[static_cast<std::size_t>(rank)].max_admitted();
        cluster_.per_rank[static_cast<std::size_t>(rank)] = figures;
        --finished_left_;
        return;
      }
    }
  } catch (...) {
    Fail(std::current_exception());
    return;
  }
  Dispatch();
}

Leader::Running Leader::EndTask(int rank, int op, std::int64_t task) {
  const auto running = running_.find({op, task});
  if (running == running_.end()) {
    throw Error("internal error: an MPI rank reported a task it was not sent");
  }
  Running ended = std::move(running->second);
  running_.erase(running);
  for (const ChunkKey& key : ended.pinned) directory_.Unpin(key, rank);
  admission_[static_cast<std::size_t>(rank)].Release(ended.cost);
  ++free_threads_[static_cast<std::size_t>(rank)];
  admitted_ -= ended.cost;
  --running_tasks_;
  return ended;
}

void Leader::TaskDone(int rank, Reader& reader) {
  const int op = reader.Get<std::int32_t>();
  const TaskRecord record = GetRecord(reader, Op(op).info().name);
  const Running ended = EndTask(rank, op, record.task);
  TaskRecord recorded = record;
  recorded.attempts = static_cast<int>(ended.failed_on.size()) + record.attempts;
  OpProgress& progress = ops_[static_cast<std::size_t>(op)];
  const auto blocks = reader.Get<std::uint64_t>();
  const bool result = Op(op).info().tier == Tier::kResult;
  for (std::uint64_t index = 0; index < blocks; ++index) {
    const auto block = reader.Get<Index>();
    const auto bytes = reader.Get<std::int64_t>();
    if (result) {
      if (progress.holder.empty()) {
        progress.holder.assign(static_cast<std::size_t>(Op(op).shared_blocks()->num_blocks()), -1);
      }
      progress.holder[static_cast<std::size_t>(block)] = rank;
    } else if (IsMemoryOutput(op) && !directory_.knows(ChunkKey{op, block})) {
      directory_.Produced(ChunkKey{op, block}, rank, bytes);
      cluster_.block_bytes[static_cast<std::size_t>(op)] += bytes;
    }
  }
  ApplyDecisions();
  run_.RecordTask(op, recorded);
  if (++progress.finished == Op(op).info().num_tasks) {
    BeginCommit(op);
  }
}

void Leader::TaskFailed(int rank, Reader& reader) {
  const int op = reader.Get<std::int32_t>();
  const auto task = reader.Get<std::int64_t>();
  const bool retryable = reader.Get<std::uint8_t>() != 0;
  const WireError error = GetError(reader);
  Retry retry{task, EndTask(rank, op, task).failed_on};
  retry.failed_on.push_back(rank);
  const int attempts = static_cast<int>(retry.failed_on.size());
  if (retryable && attempts <= run_.options().retries) {
    ++cluster_.tasks_moved_after_failure;
    ops_[static_cast<std::size_t>(op)].retries.push_back(std::move(retry));
    open_.insert(op);
    return;
  }
  std::string ranks;
  for (std::size_t index = 0; index < retry.failed_on.size(); ++index) {
    ranks += (index == 0 ? "" : ", ") + std::to_string(retry.failed_on[index]);
  }
  const planner::ExecutableOp& failed = Op(op);
  Fail(AsException(error, "op \"" + failed.info().name + "\" failed at " +
                              failed.DescribeTask(task) + " after " + std::to_string(attempts) +
                              (attempts > 1 ? " attempts, on ranks " : " attempt, on rank ") +
                              ranks + ": "));
}

void Leader::SendBlock(int holder, int op, Index block, int to, Purpose purpose,
                       const Region& region) {
  Writer order;
  order.Put(Order::kSend).Put<std::int32_t>(op).Put(block).Put<std::int32_t>(to).Put(purpose);
  PutRegion(order, region);
  SendOrder(holder, order.Take());
}

void Leader::SendBlock(int holder, int op, Index block, int to, Purpose purpose) {
  SendBlock(holder, op, block, to, purpose, Op(op).shared_blocks()->BlockRegion(block));
}

void Leader::SendForRead(int rank, int op, Index block, const Region& region, int not_from) {
  const ChunkKey key{op, block};
  const planner::SharedBlocks& blocks = *Op(op).shared_blocks();
  ChunkDirectory::ReadPlan plan = directory_.PlanRead(key, rank);
  if (plan.spilled) {
    Writer order;
    order.Put(Order::kReadSpilled)
        .Put<std::int32_t>(op)
        .Put(block)
        .PutString(SpillPath(op, block).string());
    SendOrder(rank, order.Take());
    return;
  }
  if (plan.from < 0 || plan.from == not_from) {
    throw Error("internal error: the chunk directory has no other rank holding block " +
                std::to_string(block) + " of op \"" + Op(op).info().name + "\"");
  }
  if (plan.from == rank) {
    // A copy reached `rank` after its task asked: the rank hands it to the task itself.
    SendBlock(rank, op, block, rank, Purpose::kForTask, region);
    return;
  }
  if (plan.keep_replica && region != blocks.BlockRegion(block)) {
    directory_.ReplicaAbandoned(key, rank);  // a part of a block is no replica
    plan.keep_replica = false;
  }
  cluster_.bytes_fetched += ShapeSize(region.shape) * blocks.dtype().itemsize();
  if (plan.keep_replica) pending_[{op, block, rank}] = Pending::kReplica;
  SendBlock(plan.from, op, block, rank, plan.keep_replica ? Purpose::kKeep : Purpose::kForTask,
            region);
  ApplyDecisions();
}

void Leader::Want(int rank, int op, Index block, const Region& region) {
  if (!directory_.knows(ChunkKey{op, block})) {
    throw Error("internal error: a task on rank " + std::to_string(rank) + " read block " +
                std::to_string(block) + " of op \"" + Op(op).info().name +
                "\", which no rank holds");
  }
  SendForRead(rank, op, block, region, -1);
}

void Leader::Arrived(int rank, int op, Index block) {
  const auto pending = pending_.find({op, block, rank});
  if (pending == pending_.end()) return;
  const Pending kind = pending->second;
  pending_.erase(pending);
  OpProgress& progress = ops_[static_cast<std::size_t>(op)];
  switch (kind) {
    case Pending::kGather:
      break;
    case Pending::kReplica:
      directory_.ReplicaKept(ChunkKey{op, block}, rank);
      cluster_.bytes_replicated += BlockBytes(op, block);
      ApplyDecisions();
      return;
    case Pending::kCopy:
      directory_.CopyArrived(ChunkKey{op, block}, rank);
      ApplyDecisions();
      break;
  }
  if (progress.state == State::kCommitting && --progress.arrivals_left == 0) Commit(op);
}

void Leader::Missing(int holder, int op, Index block, int to, const Region& region) {
  const auto pending = pending_.find({op, block, to});
  const ChunkKey key{op, block};
  if (pending != pending_.end() && pending->second == Pending::kGather) {
    throw Error("internal error: rank " + std::to_string(holder) + " lacks block " +
                std::to_string(block) + " of compute()'s result, which it wrote");
  }
  if (pending != pending_.end() && pending->second == Pending::kCopy) {
    pending_.erase(pending);
    directory_.CopyFailed(key, to);
    ApplyDecisions();
    OpProgress& progress = ops_[static_cast<std::size_t>(op)];
    if (progress.state == State::kCommitting && --progress.arrivals_left == 0) Commit(op);
    return;
  }
  if (pending != pending_.end()) {
    directory_.ReplicaAbandoned(key, to);  // its slot was reserved for that copy
    pending_.erase(pending);
    ApplyDecisions();
  }
  // A task's read of a freed op was served meanwhile (a copy that arrived whole).
  if (ops_[static_cast<std::size_t>(op)].freed) return;
  // The holder dropped it meanwhile (an order already on its way): read it elsewhere.
  SendForRead(to, op, block, region, holder);
}

void Leader::BeginCommit(int op) {
  OpProgress& progress = ops_[static_cast<std::size_t>(op)];
  progress.state = State::kCommitting;
  progress.arrivals_left = 0;
  const int count = static_cast<int>(ranks_.size());
  if (count > 1 && Op(op).info().tier == Tier::kResult) {
    // Every rank returns the whole result: each block goes from its writer to the others.
    for (std::size_t block = 0; block < progress.holder.size(); ++block) {
      const int writer = progress.holder[block];
      if (writer < 0) continue;
      for (int rank = 0; rank < count; ++rank) {
        if (rank == writer) continue;
        pending_[{op, static_cast<Index>(block), rank}] = Pending::kGather;
        SendBlock(writer, op, static_cast<Index>(block), rank, Purpose::kKeep);
        cluster_.bytes_gathered += BlockBytes(op, static_cast<Index>(block));
        ++progress.arrivals_left;
      }
    }
  } else if (count > 1 && IsMemoryOutput(op)) {
    // Its copies still on their way, then those rebalancing plans (ApplyDecisions counts).
    for (const auto& [key, kind] : pending_) {
      if (std::get<0>(key) == op && kind == Pending::kCopy) ++progress.arrivals_left;
    }
    directory_.Rebalance();
    ApplyDecisions();
  }
  if (progress.arrivals_left == 0) Commit(op);
}

void Leader::Commit(int op) {
  OpProgress& progress = ops_[static_cast<std::size_t>(op)];
  // Rank 0 commits first (the leader's Commit: it moves the output into place), after
  // every order sent to it before; then the followers (which open what it moved).
  progress.state = State::kCommitOrdered;
  progress.acks_left = 1;
  OrderCommit(0, op);
  // Inputs whose last reader this is are released by each rank's commit: the directory
  // forgets their blocks now, so that it orders nothing more about them.
  for (const int input : run_.inputs(op)) {
    if (--ops_[static_cast<std::size_t>(input)].readers_left > 0) continue;
    ops_[static_cast<std::size_t>(input)].freed = true;
    if (!IsMemoryOutput(input)) continue;
    directory_.FreeOp(input);
    for (const DirectoryDecision& decision : directory_.TakeDecisions()) {
      if (decision.kind == DirectoryDecision::Kind::kDrop) cluster_.bytes_dropped += decision.bytes;
    }
  }
}

void Leader::OrderCommit(int rank, int op) {
  Writer order;
  order.Put(Order::kCommit).Put<std::int32_t>(op);
  SendOrder(rank, order.Take());
}

void Leader::CommitAcknowledged(int rank, int op) {
  OpProgress& progress = ops_[static_cast<std::size_t>(op)];
  if (progress.state != State::kCommitOrdered || progress.acks_left <= 0) {
    throw Error("internal error: rank " + std::to_string(rank) + " committed op \"" +
                Op(op).info().name + "\" unasked");
  }
  if (--progress.acks_left > 0) return;
  const int count = static_cast<int>(ranks_.size());
  if (rank == 0 && count > 1) {
    progress.acks_left = count - 1;
    for (int follower = 1; follower < count; ++follower) OrderCommit(follower, op);
    return;
  }
  // Every rank committed it: ops reading it may start.
  progress.state = State::kCommitted;
  ++committed_;
  for (const int reader : progress.readers) {
    OpProgress& next = ops_[static_cast<std::size_t>(reader)];
    if (--next.inputs_left == 0) {
      next.state = State::kReady;
      open_.insert(reader);
    }
  }
  if (committed_ == static_cast<int>(ops_.size())) Finish();
}

void Leader::Finish() {
  // Every rank, this one too, reports its figures after the orders before this one.
  finishing_ = true;
  cluster_.per_rank.assign(ranks_.size(), RankReport{});
  finished_left_ = static_cast<int>(ranks_.size());
  for (int rank = 0; rank < static_cast<int>(ranks_.size()); ++rank) {
    Writer order;
    order.Put(Order::kFinish);
    SendOrder(rank, order.Take());
  }
}

void Leader::ApplyDecisions() {
  for (const DirectoryDecision& decision : directory_.TakeDecisions()) {
    ++cluster_.decisions;
    const int op = decision.chunk.op;
    const Index block = decision.chunk.block;
    switch (decision.kind) {
      case DirectoryDecision::Kind::kCopy:
        pending_[{op, block, decision.to}] = Pending::kCopy;
        // An op committing waits for its copies (BeginCommit counted those before).
        if (ops_[static_cast<std::size_t>(op)].state == State::kCommitting) {
          ++ops_[static_cast<std::size_t>(op)].arrivals_left;
        }
        if (decision.reason == DirectoryDecision::Reason::kRebalance) {
          cluster_.bytes_rebalanced += decision.bytes;
        } else {
          cluster_.bytes_replicated += decision.bytes;
        }
        SendBlock(decision.from, op, block, decision.to, Purpose::kKeep);
        break;
      case DirectoryDecision::Kind::kDrop: {
        cluster_.bytes_dropped += decision.bytes;
        Writer order;
        order.Put(Order::kDrop).Put<std::int32_t>(op).Put(block);
        SendOrder(decision.from, order.Take());
        break;
      }
      case DirectoryDecision::Kind::kSpill: {
        Writer order;
        order.Put(Order::kSpill)
            .Put<std::int32_t>(op)
            .Put(block)
            .PutString(SpillPath(op, block).string());
        SendOrder(decision.from, order.Take());
        break;
      }
    }
  }
}

void Leader::Fail(std::exception_ptr error) {
  if (failed_) return;
  failed_ = true;
  error_ = error;
  const WireError wire = ToWire(error);
  for (int rank = 1; rank < static_cast<int>(ranks_.size()); ++rank) {
    Writer order;
    order.Put(Order::kAbort);
    PutError(order, wire);
    SendOrder(rank, order.Take());
  }
}

std::filesystem::path Leader::SpillPath(int op, Index block) {
  if (spill_directory_.empty()) {
    const Spec& spec = run_.spec();
    if (!options_.can_spill && IsObjectStoreLocation(spec.work_dir)) {
      throw InvalidArgument(
          "executor \"mpi\": the in-memory intermediates outgrew the ranks' memory and must "
          "spill to files every rank reads, but the ranks run on several machines and "
          "work_dir is an object store, which spilled blocks do not go to: set work_dir to "
          "a folder every rank reaches, or give the ranks more memory");
    }
    if (!options_.can_spill) {
      throw InvalidArgument(
          "executor \"mpi\": the in-memory intermediates outgrew the ranks' memory and must "
          "spill to files every rank reads, but the ranks run on several machines and "
          "work_dir is not set: set work_dir (--work-dir, Spec::work_dir) to a folder every "
          "rank reaches, or give the ranks more memory");
    }
    // On one machine an s3:// work_dir's spills go to its temp dir.
    const std::filesystem::path base = spec.work_dir.empty() ||
                                               IsObjectStoreLocation(spec.work_dir)
                                           ? std::filesystem::temp_directory_path()
                                           : std::filesystem::path(spec.work_dir);
    static std::atomic<int> runs{0};
    spill_directory_ =
        base / ("tessera-spill-" + std::to_string(getpid()) + "-" + std::to_string(++runs));
    std::error_code error;
    if (!std::filesystem::create_directory(spill_directory_, error) || error) {
      throw StorageError("MPI executor: cannot create the folder for spilled blocks \"" +
                         spill_directory_.string() + "\"" +
                         (error ? ": " + error.message() : std::string(": it exists")));
    }
  }
  return spill_directory_ / (std::to_string(op) + "-" + std::to_string(block));
}

Leader::~Leader() {
  if (spill_directory_.empty()) return;
  std::error_code error;
  std::filesystem::remove_all(spill_directory_, error);  // best effort: it is ours alone
}

ClusterReport Leader::cluster_report() const {
  ClusterReport report = cluster_;
  report.held_at_commit = holding_;
  return report;
}

}  // namespace tessera::exec::mpi
