// The words `FinalizedPlan::summary()` uses for a reduction: its rounds, how many blocks
// or partial results each task combines, where partial results live and each round's
// projected memory. Internal to src/plan.
#pragma once

#include <string>
#include <vector>

#include "tessera/plan/executable_op.hpp"

namespace tessera {

// `infos[last]` is the last round of a reduction (kind "reduce", stage == num_stages);
// the rounds before it are the num_stages - 1 ops just before.
std::string DescribeReduction(const std::vector<OpInfo>& infos, std::size_t last);

}  // namespace tessera
