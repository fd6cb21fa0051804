#include "op_statistics.hpp"

namespace tessera::exec {

std::size_t NearestRankIndex(std::size_t count, int percent) {
  const std::int64_t items = static_cast<std::int64_t>(count);
  const std::int64_t rank = std::clamp<std::int64_t>((percent * items + 99) / 100, 1, items);
  return static_cast<std::size_t>(rank - 1);
}

std::int64_t NearestRankPercentile(std::vector<std::int64_t> values, int percent) {
  if (values.empty()) return 0;
  const auto nth =
      values.begin() + static_cast<std::ptrdiff_t>(NearestRankIndex(values.size(), percent));
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

Overlap PeakOverlap(const std::vector<TaskSpan>& spans) {
  struct Edge {
    double moment;
    int change;  // +1 start, -1 end
    std::int64_t weight;
  };
  std::vector<Edge> edges;
  edges.reserve(spans.size() * 2);
  for (const TaskSpan& span : spans) {
    edges.push_back({span.start, 1, span.weight});
    edges.push_back({span.start + std::max(span.seconds, 1e-9), -1, span.weight});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return a.moment != b.moment ? a.moment < b.moment : a.change < b.change;
  });
  Overlap peak;
  std::int64_t tasks = 0;
  std::int64_t weight = 0;
  for (const Edge& edge : edges) {
    tasks += edge.change;
    weight += edge.change * edge.weight;
    peak.most_tasks = std::max(peak.most_tasks, tasks);
    peak.most_weight = std::max(peak.most_weight, weight);
  }
  return peak;
}

}  // namespace tessera::exec
