#include "request_cost.hpp"

#include <algorithm>
#include <limits>

namespace tessera::planner {

std::int64_t PlanRequests(std::span<const OpInfo> ops) {
  std::int64_t requests = 0;
  for (const OpInfo& info : ops) requests += info.chunk_reads + info.chunk_writes;
  return requests;
}

double PlanIoCost(std::span<const OpInfo> ops, const RequestCost& cost) {
  // The part of an op's output on disk (its first blocks may be in RAM).
  auto on_disk = [](const OpInfo& info) {
    if (!IsStoredTier(info.tier)) return 0.0;
    if (info.bytes_written <= 0) return 1.0;
    return 1.0 -
           static_cast<double>(info.bytes_in_memory) / static_cast<double>(info.bytes_written);
  };
  double total = 0;
  for (const OpInfo& info : ops) {
    total += static_cast<double>(info.bytes_read) + static_cast<double>(info.bytes_written) +
             static_cast<double>(info.chunk_writes) * cost.request_bytes * on_disk(info);
    double reads_on_disk = 0;
    for (const int input : info.inputs) {
      if (input >= 0 && static_cast<std::size_t>(input) < ops.size()) {
        reads_on_disk = std::max(reads_on_disk, on_disk(ops[static_cast<std::size_t>(input)]));
      }
    }
    total += static_cast<double>(info.chunk_reads) * cost.request_bytes * reads_on_disk;
  }
  return total;
}

namespace {

constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();

std::int64_t ChunkBytes(const OpInfo& info, const Shape& chunks) {
  std::int64_t bytes = info.dtype.itemsize();
  for (std::size_t d = 0; d < chunks.size() && d < info.shape.size(); ++d) {
    bytes *= std::max<Index>(std::min(chunks[d], info.shape[d]), 1);
  }
  return bytes;
}

}  // namespace

std::int64_t SmallestDiskChunkBytes(std::span<const OpInfo> ops) {
  std::int64_t smallest = kNone;
  for (const OpInfo& info : ops) {
    if (!IsStoredTier(info.tier)) continue;
    smallest = std::min(
        smallest, ChunkBytes(info, info.disk_chunks.empty() ? info.chunks : info.disk_chunks));
  }
  return smallest == kNone ? 0 : smallest;
}

std::int64_t SmallestUserChunkBytes(std::span<const OpInfo> ops) {
  std::int64_t smallest = kNone;
  for (const OpInfo& info : ops) {
    if (info.tier == Tier::kTarget) smallest = std::min(smallest, ChunkBytes(info, info.chunks));
    if (info.stage == 1 && !info.input_chunks.empty()) {
      smallest = std::min(smallest, ChunkBytes(info, info.input_chunks));
    }
  }
  return smallest == kNone ? 0 : smallest;
}

}  // namespace tessera::planner
