#include "op_cost.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {

void EstimateTaskSeconds(OpInfo& info, const Spec& spec,
                         const std::optional<LearnedFootprint>& learned) {
  if (learned && learned->seconds_run_id != 0) {
    info.task_seconds = learned->task_seconds;
    info.task_seconds_from_history = true;
    return;
  }
  info.task_seconds_from_history = false;
  if (info.num_tasks <= 0) {
    info.task_seconds = 0;
    return;
  }
  const double moved = static_cast<double>(info.bytes_read + info.bytes_written) /
                       static_cast<double>(info.num_tasks);
  const double held = static_cast<double>(std::max<std::int64_t>(
      std::max(info.estimated_mem, info.projected_mem) - spec.reserved_mem, 0));
  info.task_seconds = std::max(moved, held) / kModeledTaskBytesPerSecond;
}

void AssignMemorySize(OpInfo& info, const Spec& spec) {
  const std::int64_t needed = std::max(info.estimated_mem, info.projected_mem);
  if (spec.memory_tiers.empty()) {
    info.memory_size = spec.allowed_mem;
  } else {
    const auto tier = std::lower_bound(spec.memory_tiers.begin(), spec.memory_tiers.end(), needed);
    if (tier == spec.memory_tiers.end()) {
      throw MemoryBudgetError(
          "op \"" + info.name + "\" (" + std::string(OpKindName(info.kind)) + ") needs " +
          format_bytes(needed) +
          " per task (reserved_mem included), more than the largest memory tier (" +
          format_bytes(spec.memory_tiers.back()) +
          "); add a larger tier, or plan with allowed_mem at most the largest tier (or "
          "\"auto\") so that budget-dependent steps are planned to fit it");
    }
    info.memory_size = *tier;
  }
  info.cost_gb_seconds = static_cast<double>(info.memory_size) / 1e9 * info.task_seconds *
                         static_cast<double>(info.num_tasks);
}

}  // namespace tessera::planner
