#include "messages.hpp"

#include <utility>

#include "tessera/core/errors.hpp"

namespace tessera::exec::mpi {
namespace {

// WireError::kind.
enum : std::uint8_t {
  kPlainError,
  kInvalidArgument,
  kMemoryBudget,
  kStorage,
  kFormat,
  kForeign,  // not Tessera's (retryable, as a StorageError)
};

}  // namespace

bool HeldInMemory(planner::ExecutableOp& op) {
  const Tier tier = op.info().tier;
  return (tier == Tier::kMemory || tier == Tier::kMixed || tier == Tier::kMemoryAndObject) &&
         op.shared_blocks() != nullptr;
}

WireError ToWire(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const InvalidArgument& e) {
    return {kInvalidArgument, e.what()};
  } catch (const MemoryBudgetError& e) {
    return {kMemoryBudget, e.what()};
  } catch (const StorageError& e) {
    return {kStorage, e.what()};
  } catch (const FormatError& e) {
    return {kFormat, e.what()};
  } catch (const Error& e) {
    return {kPlainError, e.what()};
  } catch (const std::exception& e) {
    return {kForeign, e.what()};
  } catch (...) {
    return {kForeign, "unknown exception"};
  }
}

void Rethrow(const WireError& error, const std::string& prefix) {
  const std::string message = prefix + error.message;
  switch (error.kind) {
    case kInvalidArgument:
      throw InvalidArgument(message);
    case kMemoryBudget:
      throw MemoryBudgetError(message);
    case kStorage:
      throw StorageError(message);
    case kFormat:
      throw FormatError(message);
    default:
      throw Error(message);
  }
}

void PutError(Writer& writer, const WireError& error) {
  writer.Put(error.kind).PutString(error.message);
}

WireError GetError(Reader& reader) {
  WireError error;
  error.kind = reader.Get<std::uint8_t>();
  error.message = reader.GetString();
  return error;
}

void PutRegion(Writer& writer, const Region& region) {
  writer.Put<std::uint32_t>(static_cast<std::uint32_t>(region.start.size()));
  for (const Index start : region.start) writer.Put(start);
  for (const Index extent : region.shape) writer.Put(extent);
}

Region GetRegion(Reader& reader) {
  const auto rank = reader.Get<std::uint32_t>();
  Region region;
  region.start.resize(rank);
  region.shape.resize(rank);
  for (Index& start : region.start) start = reader.Get<Index>();
  for (Index& extent : region.shape) extent = reader.Get<Index>();
  return region;
}

void PutRecord(Writer& writer, const TaskRecord& record) {
  writer.Put<std::int32_t>(record.op)
      .Put(record.task)
      .Put(record.projected_mem)
      .Put(record.measured_mem)
      .Put(record.unaccounted_mem)
      .Put(record.start_seconds)
      .Put(record.seconds)
      .Put<std::int32_t>(record.worker)
      .Put<std::int32_t>(record.attempts)
      .Put<std::uint8_t>(record.skipped ? 1 : 0);
}

TaskRecord GetRecord(Reader& reader, const std::string& op_name) {
  TaskRecord record;
  record.op = reader.Get<std::int32_t>();
  record.op_name = op_name;
  record.task = reader.Get<std::int64_t>();
  record.projected_mem = reader.Get<std::int64_t>();
  record.measured_mem = reader.Get<std::int64_t>();
  record.unaccounted_mem = reader.Get<std::int64_t>();
  record.start_seconds = reader.Get<double>();
  record.seconds = reader.Get<double>();
  record.worker = reader.Get<std::int32_t>();
  record.attempts = reader.Get<std::int32_t>();
  record.skipped = reader.Get<std::uint8_t>() != 0;
  return record;
}

void PutRankReport(Writer& writer, const RankReport& report) {
  writer.Put<std::int32_t>(report.rank)
      .Put(report.tasks)
      .Put(report.capacity)
      .Put(report.max_admitted_mem)
      .Put(report.measured_mem_max)
      .Put(report.peak_rss_bytes)
      .Put(report.held_bytes_max);
}

RankReport GetRankReport(Reader& reader) {
  RankReport report;
  report.rank = reader.Get<std::int32_t>();
  report.tasks = reader.Get<std::int64_t>();
  report.capacity = reader.Get<std::int64_t>();
  report.max_admitted_mem = reader.Get<std::int64_t>();
  report.measured_mem_max = reader.Get<std::int64_t>();
  report.peak_rss_bytes = reader.Get<std::int64_t>();
  report.held_bytes_max = reader.Get<std::int64_t>();
  return report;
}

void Outbox::Push(int destination, int tag, std::vector<std::byte> bytes) {
  {
    const std::lock_guard lock(mutex_);
    messages_.push_back(Outgoing{destination, tag, std::move(bytes)});
  }
  pushed_.notify_one();
}

std::deque<Outgoing> Outbox::Take(std::chrono::microseconds wait) {
  std::unique_lock lock(mutex_);
  if (messages_.empty() && !woken_ && wait.count() > 0) {
    pushed_.wait_for(lock, wait, [this] { return !messages_.empty() || woken_; });
  }
  woken_ = false;
  return std::exchange(messages_, {});
}

void Outbox::Wake() {
  {
    const std::lock_guard lock(mutex_);
    woken_ = true;
  }
  pushed_.notify_one();
}

}  // namespace tessera::exec::mpi
