// The footprint estimator: how much memory a plan counts for one task of an op.
//
//   auto learned = history->Learned(info.fingerprint);
//   tessera::FootprintEstimate e =
//       tessera::EstimateFootprint(projected, reserved, allowed, learned);
//   e.bytes       // the projection, or history's measured footprint x kLearnedMargin
//
// The projection is exact for what Tessera allocates; what it cannot see (a user
// kernel's own allocations) only history knows. History is used only where it measured
// more than the projection by more than measurement noise (NoiseAllowance): the estimate
// never goes below the projection. The margin never makes a plan refuse what ran: a
// measured footprint within allowed_mem is counted at most as allowed_mem, and one above
// it is counted as measured (and refused by the plan's check). Figures include
// reserved_mem unless named *_task_*.
#pragma once

#include <cstdint>
#include <optional>

#include "tessera/memory/history.hpp"

namespace tessera {

// Learned footprints are counted with this margin: the next blocks may need more than
// the ones measured.
inline constexpr double kLearnedMargin = 1.25;

struct FootprintEstimate {
  std::int64_t bytes = 0;  // what the plan counts per task, reserved_mem included
  bool from_history = false;
  std::int64_t learned_task_bytes = 0;  // history's measured footprint (0: none)
  std::int64_t learned_run = 0;         // the run that measured it
};

// How far a measured footprint may exceed a projection of `projected_task_bytes`
// before it counts as an excess: 4 MiB or 10% of the projection, whichever is larger
// (pages a task touches first without allocating them, allocator bookkeeping).
std::int64_t NoiseAllowance(std::int64_t projected_task_bytes);

// Whether a task's measured footprint exceeds its projection beyond the noise.
bool ExceedsProjection(std::int64_t footprint_task_bytes, std::int64_t projected_task_bytes);

// The estimate for a task projected at `projected_mem` (reserved_mem included) under
// `allowed_mem`.
FootprintEstimate EstimateFootprint(std::int64_t projected_mem, std::int64_t reserved_mem,
                                    std::int64_t allowed_mem,
                                    const std::optional<LearnedFootprint>& learned);

}  // namespace tessera
