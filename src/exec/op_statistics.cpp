#include "op_statistics.hpp"

#include <algorithm>

namespace tessera::exec {
namespace {

// The 0-based index of the nearest rank ceil(percent / 100 * count) in sorted values,
// computed in integers so that 95% of 20 is exactly rank 19.
std::size_t NearestRankIndex(std::size_t count, int percent) {
  const std::int64_t items = static_cast<std::int64_t>(count);
  const std::int64_t rank = std::clamp<std::int64_t>((percent * items + 99) / 100, 1, items);
  return static_cast<std::size_t>(rank - 1);
}

}  // namespace

std::int64_t NearestRankPercentile(std::vector<std::int64_t> values, int percent) {
  if (values.empty()) return 0;
  const auto nth =
      values.begin() + static_cast<std::ptrdiff_t>(NearestRankIndex(values.size(), percent));
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

MeasuredSummary SummarizeMeasured(std::vector<std::int64_t> values) {
  MeasuredSummary summary;
  if (values.empty()) return summary;
  std::sort(values.begin(), values.end());
  summary.max = values.back();
  summary.median = values[NearestRankIndex(values.size(), 50)];
  summary.p95 = values[NearestRankIndex(values.size(), 95)];
  return summary;
}

}  // namespace tessera::exec
