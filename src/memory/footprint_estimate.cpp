#include "tessera/memory/internal/footprint_estimate.hpp"

#include <algorithm>
#include <cmath>

namespace tessera {

std::int64_t NoiseAllowance(std::int64_t projected_task_bytes) {
  constexpr std::int64_t kFloor = std::int64_t{4} << 20;
  return std::max(kFloor, projected_task_bytes / 10);
}

bool ExceedsProjection(std::int64_t footprint_task_bytes, std::int64_t projected_task_bytes) {
  return footprint_task_bytes > projected_task_bytes + NoiseAllowance(projected_task_bytes);
}

FootprintEstimate EstimateFootprint(std::int64_t projected_mem, std::int64_t reserved_mem,
                                    std::int64_t allowed_mem,
                                    const std::optional<LearnedFootprint>& learned) {
  FootprintEstimate estimate;
  estimate.bytes = projected_mem;
  if (!learned) return estimate;
  estimate.learned_task_bytes = learned->task_bytes;
  estimate.learned_run = learned->run_id;
  if (!ExceedsProjection(learned->task_bytes, projected_mem - reserved_mem)) return estimate;
  const std::int64_t measured = reserved_mem + learned->task_bytes;
  const std::int64_t with_margin =
      reserved_mem + static_cast<std::int64_t>(
                         std::ceil(static_cast<double>(learned->task_bytes) * kLearnedMargin));
  // What ran within allowed_mem stays runnable: the margin stops at allowed_mem.
  const std::int64_t counted =
      measured <= allowed_mem ? std::min(with_margin, allowed_mem) : measured;
  estimate.bytes = std::max(projected_mem, counted);
  estimate.from_history = estimate.bytes > projected_mem;
  return estimate;
}

}  // namespace tessera
