// The words `FinalizedPlan::summary()` uses for a rechunk: each copy (stage) with what it
// reads, in which regions, where it writes (RAM, disk, both, the target), its tasks'
// projected memory and what it moves; then the rechunk's totals. Internal to src/plan.
#pragma once

#include <string>
#include <vector>

#include "tessera/plan/executable_op.hpp"

namespace tessera {

// `infos[last]` is the last copy of a rechunk (stage == num_stages); the copies before
// it are the num_stages - 1 ops just before. `sources[i]`: stored arrays op i reads.
std::string DescribeRechunk(const std::vector<OpInfo>& infos,
                            const std::vector<std::vector<std::string>>& sources, std::size_t last);

}  // namespace tessera
