// The words `FinalizedPlan::summary()` uses for a rechunk: each copy (stage) with what it
// reads, in which regions, where it writes (RAM, disk, both, the target), its tasks'
// projected memory and what it moves; then the rechunk's totals. Internal to src/plan.
#pragma once

#include <cstdint>
#include <string>

#include "finalized_plan_state.hpp"

namespace tessera::planner {

// REQUIRES: `stages` is a group of `plan` (OpGroupKind::kRechunkStages), its copies in
// stage order.
std::string DescribeRechunk(const FinalizedPlan::State& plan, const OpGroup& stages);

// 1234567 -> "1,234,567".
std::string Grouped(std::int64_t value);

}  // namespace tessera::planner
