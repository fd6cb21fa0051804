#include "op_statistics.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace tessera::exec {
namespace {

TEST(NearestRankPercentile, PicksAMeasuredValue) {
  std::vector<std::int64_t> values;
  for (std::int64_t value = 20; value >= 1; --value) values.push_back(value * 10);
  EXPECT_EQ(NearestRankPercentile(values, 95), 190);  // rank 19 of 20
  EXPECT_EQ(NearestRankPercentile(values, 50), 100);  // the lower median
  EXPECT_EQ(NearestRankPercentile(values, 100), 200);
  EXPECT_EQ(NearestRankPercentile(values, 1), 10);
  EXPECT_EQ(NearestRankPercentile({7}, 95), 7);
  EXPECT_EQ(NearestRankPercentile({}, 50), 0);
}

TEST(Summarize, MaxMedianP95) {
  const Summary<std::int64_t> summary = Summarize<std::int64_t>({5, 1, 4, 2, 3});
  EXPECT_EQ(summary.max, 5);
  EXPECT_EQ(summary.median, 3);
  EXPECT_EQ(summary.p95, 5);
  const Summary<std::int64_t> none = Summarize<std::int64_t>({});
  EXPECT_EQ(none.max, 0);
  EXPECT_EQ(none.median, 0);
  EXPECT_EQ(none.p95, 0);
}

TEST(Summarize, Durations) {
  std::vector<double> seconds;
  for (int i = 1; i <= 20; ++i) seconds.push_back(0.5 * i);
  const Summary<double> summary = Summarize(seconds);
  EXPECT_EQ(summary.max, 10.0);
  EXPECT_EQ(summary.median, 5.0);  // rank 10 of 20
  EXPECT_EQ(summary.p95, 9.5);     // rank 19 of 20
}

}  // namespace
}  // namespace tessera::exec
