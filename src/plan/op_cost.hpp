// What an op costs where memory is sold by size and time (serverless functions):
// the memory size each of its tasks is given and the seconds they take. Internal to
// src/plan; the planner calls these once an op's estimate is known.
//
//   EstimateTaskSeconds(info, spec, history->Learned(info.fingerprint));
//   AssignMemorySize(info, spec);   // memory_size, cost_gb_seconds
#pragma once

#include <optional>

#include "tessera/core/spec.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/plan/internal/executable_op.hpp"

namespace tessera::planner {

// Sets info.task_seconds (and task_seconds_from_history): the median task seconds
// history measured for the op's fingerprint, else the model of OpInfo::task_seconds.
// REQUIRES: info's num_tasks, projected_mem, bytes_read and bytes_written are set.
void EstimateTaskSeconds(OpInfo& info, const Spec& spec,
                         const std::optional<LearnedFootprint>& learned);

// Sets info.memory_size — the smallest of spec.memory_tiers at or above
// info.estimated_mem, or spec.allowed_mem without tiers — and info.cost_gb_seconds.
// Throws MemoryBudgetError naming the op when it needs more than the largest tier.
void AssignMemorySize(OpInfo& info, const Spec& spec);

}  // namespace tessera::planner
