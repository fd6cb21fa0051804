#include "rank_agent.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "../task_runner.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"
#include "tessera/memory/process_memory.hpp"

namespace tessera::exec::mpi {

using planner::SharedBlocks;

namespace {

// A spilled block's file: written whole under a temporary name, then renamed, so that a
// reader never sees part of it.
void WriteSpillFile(const std::string& path, std::span<const std::byte> bytes) {
  const std::string temporary = path + ".partial";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    if (!file) throw StorageError("MPI executor: cannot write spilled block \"" + temporary + "\"");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    throw StorageError("MPI executor: cannot move spilled block into place at \"" + path +
                       "\": " + error.message());
  }
}

void ReadSpillFile(const std::string& path, std::span<std::byte> bytes) {
  std::ifstream file(path, std::ios::binary);
  file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!file || file.gcount() != static_cast<std::streamsize>(bytes.size())) {
    throw StorageError("MPI executor: cannot read spilled block \"" + path +
                       "\" (is the work directory shared by every rank?)");
  }
}

// Values arriving on this rank (sent, or read back from a spill file): the rank's
// memory, not a task's.
std::shared_ptr<NDArray> NewValues(const Shape& shape, const SharedBlocks& blocks) {
  ScopedMemoryAccount none(nullptr);
  return std::make_shared<NDArray>(shape, blocks.dtype());
}

}  // namespace

SharedBlocks* RankAgent::BlocksOf(int op) const {
  return run_.ops()[static_cast<std::size_t>(op)]->shared_blocks();
}

RankAgent::RankAgent(PlanRun& run, int rank, int workers, Outbox& outbox)
    : run_(run), rank_(rank), outbox_(outbox), task_options_(run.options()) {
  task_options_.retries = 0;
  task_options_.on_task = nullptr;
  task_options_.on_start = nullptr;
  threads_.reserve(static_cast<std::size_t>(std::max(workers, 1)));
  for (int lane = 0; lane < std::max(workers, 1); ++lane) threads_.emplace_back([this] { Work(); });
}

RankAgent::~RankAgent() { Stop(); }

void RankAgent::Stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    for (auto& [key, waiting] : waiting_) {
      waiting.promise.set_exception(std::make_exception_ptr(
          Error("the MPI run stopped while a task waited for a block of another rank")));
    }
    waiting_.clear();
  }
  queued_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void RankAgent::Work() {
  std::unique_lock lock(mutex_);
  while (true) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const auto [op, task] = queue_.front();
    queue_.pop_front();
    lock.unlock();
    RunOne(op, task);
    lock.lock();
  }
}

void RankAgent::RunOne(int op, std::int64_t task) {
  try {
    TaskRecord record = RunPlanTask(run_.ops(), run_.spec(), op, task, task_options_, run_.start());
    record.worker = rank_;
    Writer report;
    report.Put(Report::kDone).Put<std::int32_t>(op);
    PutRecord(report, record);
    std::vector<Index> written;
    SharedBlocks* blocks = BlocksOf(op);
    if (blocks != nullptr) written = blocks->TakeWritten();
    report.Put<std::uint64_t>(written.size());
    for (const Index block : written) {
      report.Put(block).Put<std::int64_t>(ShapeSize(blocks->BlockRegion(block).shape) *
                                          blocks->dtype().itemsize());
    }
    {
      const std::lock_guard lock(mutex_);
      ++tasks_;
      measured_max_ = std::max(measured_max_, record.measured_mem);
    }
    Report(report.Take());
  } catch (...) {
    // What the failed attempt wrote goes: the leader never learns of it (the task runs
    // again, here or elsewhere, and writes it anew).
    if (SharedBlocks* blocks = BlocksOf(op)) {
      for (const Index block : blocks->TakeWritten()) blocks->Drop(block);
    }
    // Whether it may pass is the cause's (RunPlanTask wraps it, with the op and task).
    const std::exception_ptr error = std::current_exception();
    Writer report;
    report.Put(Report::kFailed)
        .Put<std::int32_t>(op)
        .Put(task)
        .Put<std::uint8_t>(IsRetryable(CauseOf(error)) ? 1 : 0);
    WireError wire = ToWire(error);  // its type; the leader names the op and the attempts
    wire.message = DescribeException(CauseOf(error));
    PutError(report, wire);
    Report(report.Take());
  }
}

RankAgent::WaitKey RankAgent::KeyOf(int op, Index block, const Region& region) {
  std::vector<Index> where = region.start;
  where.insert(where.end(), region.shape.begin(), region.shape.end());
  return {op, block, std::move(where)};
}

std::shared_ptr<const NDArray> RankAgent::Fetch(int op, Index block, const Region& region) {
  std::shared_future<std::shared_ptr<const NDArray>> future;
  bool ask = false;
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) throw Error("the MPI run stopped while a task read a block of another rank");
    auto [entry, inserted] = waiting_.try_emplace(KeyOf(op, block, region));
    if (inserted) {
      entry->second.future = entry->second.promise.get_future().share();
      ask = true;
    }
    future = entry->second.future;
  }
  if (ask) {
    Writer want;
    want.Put(Report::kWant).Put<std::int32_t>(op).Put(block);
    PutRegion(want, region);
    Report(want.Take());
  }
  return future.get();
}

void RankAgent::Fail(int op, Index block, const std::exception_ptr& error) {
  const std::lock_guard lock(mutex_);
  auto entry = waiting_.lower_bound(WaitKey{op, block, {}});
  while (entry != waiting_.end() && std::get<0>(entry->first) == op &&
         std::get<1>(entry->first) == block) {
    entry->second.promise.set_exception(error);
    entry = waiting_.erase(entry);
  }
}

void RankAgent::Deliver(const WaitKey& key, const std::shared_ptr<const NDArray>& values) {
  const std::lock_guard lock(mutex_);
  const auto entry = waiting_.find(key);
  if (entry == waiting_.end()) return;
  entry->second.promise.set_value(values);
  waiting_.erase(entry);
}

void RankAgent::DeliverWhole(int op, Index block, const std::shared_ptr<const NDArray>& values) {
  const std::lock_guard lock(mutex_);
  auto entry = waiting_.lower_bound(WaitKey{op, block, {}});
  while (entry != waiting_.end() && std::get<0>(entry->first) == op &&
         std::get<1>(entry->first) == block) {
    entry->second.promise.set_value(values);  // the reader takes its part of the whole
    entry = waiting_.erase(entry);
  }
}

void RankAgent::OpPrepared(int op) {
  SharedBlocks* blocks = BlocksOf(op);
  if (blocks == nullptr) return;
  blocks->SetRemote(
      [this, op](Index block, const Region& region) { return Fetch(op, block, region); });
}

std::int64_t RankAgent::HeldBytes(int op) {
  // Not compute()'s result: it is every rank's whole, and Held would copy each block.
  if (!HeldInMemory(*run_.ops()[static_cast<std::size_t>(op)])) return 0;
  SharedBlocks* blocks = BlocksOf(op);
  std::int64_t held = 0;
  for (Index block = 0; block < blocks->num_blocks(); ++block) {
    if (const auto values = blocks->Held(block)) held += values->nbytes();
  }
  held_bytes_max_ = std::max(held_bytes_max_, held);
  return held;
}

void RankAgent::StepFailed(const std::exception_ptr& error) {
  Writer report;
  report.Put(Report::kStepFailed);
  PutError(report, ToWire(error));
  Report(report.Take());
}

void RankAgent::HandleOrder(const Message& message) {
  Reader reader(message.bytes);
  const auto order = reader.Get<Order>();
  switch (order) {
    case Order::kPrepare: {
      const int op = reader.Get<std::int32_t>();
      try {
        run_.PrepareOp(op);
        OpPrepared(op);
        Writer report;
        report.Put(Report::kPrepared).Put<std::int32_t>(op);
        Report(report.Take());
      } catch (...) {
        StepFailed(std::current_exception());
      }
      return;
    }
    case Order::kRun: {
      const int op = reader.Get<std::int32_t>();
      const auto task = reader.Get<std::int64_t>();
      {
        const std::lock_guard lock(mutex_);
        queue_.emplace_back(op, task);
      }
      queued_.notify_one();
      return;
    }
    case Order::kCommit: {
      // After every order sent here before it (drops, copies, spills of the op and of
      // the inputs the commit releases): what this rank holds of the op, then the commit
      // (the leader's own on rank 0, a follower's elsewhere) and its releases.
      const int op = reader.Get<std::int32_t>();
      try {
        const std::int64_t held = HeldBytes(op);
        run_.CommitOp(op);
        Writer report;
        report.Put(Report::kCommitted).Put<std::int32_t>(op).Put(held);
        Report(report.Take());
      } catch (...) {
        StepFailed(std::current_exception());
      }
      return;
    }
    case Order::kSend: {
      const int op = reader.Get<std::int32_t>();
      const auto block = reader.Get<Index>();
      const int to = reader.Get<std::int32_t>();
      const auto purpose = reader.Get<Purpose>();
      const Region region = GetRegion(reader);
      SharedBlocks* blocks = BlocksOf(op);
      const std::shared_ptr<const NDArray> values =
          blocks == nullptr ? nullptr : blocks->HeldRegion(block, region);
      if (values == nullptr) {
        Writer report;
        report.Put(Report::kMissing).Put<std::int32_t>(op).Put(block).Put<std::int32_t>(to);
        PutRegion(report, region);
        Report(report.Take());
        return;
      }
      if (to == rank_) {  // a task here asked before the block arrived here
        Deliver(KeyOf(op, block, region), values);
        return;
      }
      Writer data;
      data.Put<std::int32_t>(op).Put(block).Put(purpose);
      PutRegion(data, region);
      data.PutBytes(values->bytes());
      outbox_.Push(to, kTagData, data.Take());
      return;
    }
    case Order::kDrop: {
      const int op = reader.Get<std::int32_t>();
      const auto block = reader.Get<Index>();
      if (SharedBlocks* blocks = BlocksOf(op)) {
        blocks->Drop(block);
      }
      return;
    }
    case Order::kSpill: {
      const int op = reader.Get<std::int32_t>();
      const auto block = reader.Get<Index>();
      const std::string path = reader.GetString();
      try {
        SharedBlocks* blocks = BlocksOf(op);
        const std::shared_ptr<const NDArray> values =
            blocks == nullptr ? nullptr : blocks->Held(block);
        if (values == nullptr) throw Error("internal error: asked to spill a block not held here");
        WriteSpillFile(path, values->bytes());
        blocks->Drop(block);
        Writer report;
        report.Put(Report::kSpilled).Put<std::int32_t>(op).Put(block);
        Report(report.Take());
      } catch (...) {
        StepFailed(std::current_exception());
      }
      return;
    }
    case Order::kReadSpilled: {
      const int op = reader.Get<std::int32_t>();
      const auto block = reader.Get<Index>();
      const std::string path = reader.GetString();
      SharedBlocks* blocks = BlocksOf(op);
      try {
        const std::shared_ptr<NDArray> values =
            NewValues(blocks->BlockRegion(block).shape, *blocks);
        ReadSpillFile(path, values->mutable_bytes());
        DeliverWhole(op, block, values);
      } catch (...) {
        Fail(op, block, std::current_exception());
      }
      return;
    }
    case Order::kFinish: {
      Stop();
      Writer report;
      report.Put(Report::kFinished);
      PutRankReport(report, Figures());
      Report(report.Take());
      finished_ = true;
      return;
    }
    case Order::kAbort: {
      error_ = GetError(reader);
      Stop();
      finished_ = true;
      return;
    }
  }
  throw Error("internal error: an MPI executor order of unknown kind");
}

void RankAgent::HandleData(const Message& message) {
  Reader reader(message.bytes);
  const int op = reader.Get<std::int32_t>();
  const auto block = reader.Get<Index>();
  const auto purpose = reader.Get<Purpose>();
  const Region region = GetRegion(reader);
  const std::span<const std::byte> bytes = reader.GetBytes();
  SharedBlocks* blocks = BlocksOf(op);
  if (blocks == nullptr) throw Error("internal error: block values for an op not held in memory");
  const std::shared_ptr<NDArray> values = NewValues(region.shape, *blocks);
  if (static_cast<std::size_t>(values->nbytes()) != bytes.size()) {
    throw Error("internal error: block values of the wrong size arrived");
  }
  std::memcpy(values->mutable_bytes().data(), bytes.data(), bytes.size());
  if (purpose == Purpose::kKeep) {  // a whole block, kept: any task here waiting for it
    blocks->Put(block, values);     // (or part of it) takes it
    Writer report;
    report.Put(Report::kArrived).Put<std::int32_t>(op).Put(block);
    Report(report.Take());
    DeliverWhole(op, block, values);
    return;
  }
  Deliver(KeyOf(op, block, region), values);
}

RankReport RankAgent::Figures() const {
  RankReport report;
  report.rank = rank_;
  {
    const std::lock_guard lock(mutex_);
    report.tasks = tasks_;
    report.measured_mem_max = measured_max_;
  }
  report.peak_rss_bytes = PeakRssBytes();
  report.held_bytes_max = held_bytes_max_;
  return report;
}

}  // namespace tessera::exec::mpi
