// How every refusal of a task over allowed_mem names its figure, and the text
// ThrowNamingABudgetThatPlans (budget_that_plans.hpp) finds and replaces in it. Internal
// to src/plan.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/core/byte_size.hpp"

namespace tessera::planner {

// "the smallest allowed_mem that would run it is 84960 (85.0 kB)"
// (MemoryBudgetError::required_allowed_mem is the figure).
inline std::string SmallestBudgetText(std::int64_t bytes) {
  return "the smallest allowed_mem that would run it is " + std::to_string(bytes) + " (" +
         format_bytes(bytes) + ")";
}

}  // namespace tessera::planner
