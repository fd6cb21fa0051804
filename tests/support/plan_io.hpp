// What a plan's I/O costs, worked out from its public OpInfo, for tests that check
// allowed_mem "auto" against an oracle of their own (the planner's rule is in
// src/plan/request_cost.hpp: decoded bytes read and written, plus 64 KiB for each chunk
// written to or read from an intermediate on disk). Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "tessera/plan/finalized_plan.hpp"

namespace tessera::testing {

// Chunk reads and writes of every op.
inline std::int64_t PlanRequests(const FinalizedPlan& plan) {
  std::int64_t requests = 0;
  for (const OpInfo& op : plan.ops()) requests += op.chunk_reads + op.chunk_writes;
  return requests;
}

// Decoded bytes read and written, plus 64 KiB per request to an intermediate on disk
// (its part on disk, where its first blocks are in RAM).
inline double PlanIoCost(const FinalizedPlan& plan) {
  const std::vector<OpInfo>& ops = plan.ops();
  auto on_disk = [](const OpInfo& op) {
    if (op.tier != Tier::kDisk && op.tier != Tier::kMixed) return 0.0;
    if (op.bytes_written <= 0) return 1.0;
    return 1.0 - static_cast<double>(op.bytes_in_memory) / static_cast<double>(op.bytes_written);
  };
  double cost = 0;
  for (const OpInfo& op : ops) {
    double input_on_disk = 0;
    for (const int input : op.inputs) {
      input_on_disk = std::max(input_on_disk, on_disk(ops[static_cast<std::size_t>(input)]));
    }
    cost += static_cast<double>(op.bytes_read + op.bytes_written) +
            65536.0 * (static_cast<double>(op.chunk_writes) * on_disk(op) +
                       static_cast<double>(op.chunk_reads) * input_on_disk);
  }
  return cost;
}

// The bytes of the smallest chunk an intermediate keeps on disk (clipped to its shape);
// the int64 maximum when none is on disk.
inline std::int64_t SmallestDiskChunk(const FinalizedPlan& plan) {
  std::int64_t smallest = std::numeric_limits<std::int64_t>::max();
  for (const OpInfo& op : plan.ops()) {
    if (op.tier != Tier::kDisk && op.tier != Tier::kMixed) continue;
    const Shape& chunks = op.disk_chunks.empty() ? op.chunks : op.disk_chunks;
    std::int64_t bytes = op.dtype.itemsize();
    for (std::size_t d = 0; d < chunks.size(); ++d) bytes *= std::min(chunks[d], op.shape[d]);
    smallest = std::min(smallest, bytes);
  }
  return smallest;
}

}  // namespace tessera::testing
