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

}  // namespace tessera::exec
