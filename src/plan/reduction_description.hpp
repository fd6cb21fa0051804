// The words `FinalizedPlan::summary()` uses for a reduction: its rounds, how many blocks
// or partial results each task combines, where partial results live and each round's
// projected memory. Internal to src/plan.
#pragma once

#include <string>

#include "finalized_plan_state.hpp"

namespace tessera::planner {

// REQUIRES: `rounds` is a group of `plan` (OpGroupKind::kReductionRounds), in round order.
std::string DescribeReduction(const FinalizedPlan::State& plan, const OpGroup& rounds);

}  // namespace tessera::planner
