// Summaries of an op's task measurements for the ExecutionReport.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::exec {

// The nearest-rank percentile: the smallest value with at least `percent`% of `values`
// at or below it (percent in [1, 100]; 50 is the lower median of an even count). Always
// one of the values; 0 when there are none.
std::int64_t NearestRankPercentile(std::vector<std::int64_t> values, int percent);

struct MeasuredSummary {
  std::int64_t max = 0;
  std::int64_t median = 0;
  std::int64_t p95 = 0;
};
MeasuredSummary SummarizeMeasured(std::vector<std::int64_t> values);

}  // namespace tessera::exec
