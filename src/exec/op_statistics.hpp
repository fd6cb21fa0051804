// Summaries of an op's task measurements (memory, durations) for the ExecutionReport.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::exec {

// A task's span (seconds, as TaskRecord counts them) and what it holds while it runs.
struct TaskSpan {
  double start = 0;
  double seconds = 0;
  std::int64_t weight = 0;
};
struct Overlap {
  std::int64_t most_tasks = 0;   // the most spans open at one moment
  std::int64_t most_weight = 0;  // the largest sum of weights of spans open at one moment
};
// A sweep over the spans' starts and ends (an end before a start at the same moment; a
// span too short for the clock still counts as open).
Overlap PeakOverlap(const std::vector<TaskSpan>& spans);

// The 0-based index, in `count` sorted values, of the nearest rank for `percent`
// (ceil(percent / 100 * count), computed in integers so that 95% of 20 is rank 19).
std::size_t NearestRankIndex(std::size_t count, int percent);

// The nearest-rank percentile: the smallest value with at least `percent`% of `values`
// at or below it (percent in [1, 100]; 50 is the lower median of an even count). Always
// one of the values; 0 when there are none.
std::int64_t NearestRankPercentile(std::vector<std::int64_t> values, int percent);

template <typename T>
struct Summary {
  T max{};
  T median{};
  T p95{};
};

// Max, median and p95 (nearest rank) of `values`; zeros when there are none.
template <typename T>
Summary<T> Summarize(std::vector<T> values) {
  Summary<T> summary;
  if (values.empty()) return summary;
  std::sort(values.begin(), values.end());
  summary.max = values.back();
  summary.median = values[NearestRankIndex(values.size(), 50)];
  summary.p95 = values[NearestRankIndex(values.size(), 95)];
  return summary;
}

}  // namespace tessera::exec
