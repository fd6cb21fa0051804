#include "tessera/memory/internal/footprint_estimate.hpp"

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

TEST(FootprintEstimateTest, NoHistoryMeansTheProjection) {
  const FootprintEstimate e = EstimateFootprint(12 * kMiB, 2 * kMiB, 100 * kMiB, std::nullopt);
  EXPECT_EQ(e.bytes, 12 * kMiB);
  EXPECT_FALSE(e.from_history);
  EXPECT_EQ(e.learned_task_bytes, 0);
}

TEST(FootprintEstimateTest, NoiseIsFourMiBOrATenth) {
  EXPECT_EQ(NoiseAllowance(1000), 4 * kMiB);
  EXPECT_EQ(NoiseAllowance(100 * kMiB), 10 * kMiB);
  EXPECT_FALSE(ExceedsProjection(14 * kMiB, 10 * kMiB));  // 4 MiB over: noise
  EXPECT_TRUE(ExceedsProjection(14 * kMiB + 1, 10 * kMiB));
  EXPECT_FALSE(ExceedsProjection(110 * kMiB, 100 * kMiB));
  EXPECT_TRUE(ExceedsProjection(110 * kMiB + 1, 100 * kMiB));
}

TEST(FootprintEstimateTest, HistoryWithinNoiseKeepsTheProjection) {
  // Measured 13 MiB of task memory against a 10 MiB projection (+2 MiB reserved).
  const LearnedFootprint learned{13 * kMiB, 10 * kMiB, 7, 1};
  const FootprintEstimate e = EstimateFootprint(12 * kMiB, 2 * kMiB, 100 * kMiB, learned);
  EXPECT_EQ(e.bytes, 12 * kMiB);
  EXPECT_FALSE(e.from_history);
  EXPECT_EQ(e.learned_task_bytes, 13 * kMiB);
  EXPECT_EQ(e.learned_run, 7);
}

TEST(FootprintEstimateTest, ALargerMeasurementIsCountedWithTheMargin) {
  // A kernel of 10 MiB blocks that allocates 50 MiB of its own measured 60 MiB per task:
  // counted as 2 MiB reserved + 60 MiB x 1.25 = 77 MiB.
  const LearnedFootprint learned{60 * kMiB, 10 * kMiB, 3, 2};
  const FootprintEstimate e = EstimateFootprint(12 * kMiB, 2 * kMiB, 100 * kMiB, learned);
  EXPECT_TRUE(e.from_history);
  EXPECT_EQ(e.bytes, 2 * kMiB + 75 * kMiB);
  EXPECT_EQ(e.learned_run, 3);
}

TEST(FootprintEstimateTest, TheMarginStopsAtAllowedMem) {
  // 52 MiB measured (+2 MiB reserved) ran under allowed_mem 62 MiB: with the margin it
  // would be 67 MiB, which would refuse the same step next time. Counted: 62 MiB.
  const LearnedFootprint learned{52 * kMiB, 10 * kMiB, 3, 1};
  const FootprintEstimate capped = EstimateFootprint(12 * kMiB, 2 * kMiB, 62 * kMiB, learned);
  EXPECT_TRUE(capped.from_history);
  EXPECT_EQ(capped.bytes, 62 * kMiB);
  // Under allowed_mem 50 MiB the measured 54 MiB does not fit: counted as measured, so
  // the plan's check refuses it, naming 54 MiB (not 67).
  const FootprintEstimate over = EstimateFootprint(12 * kMiB, 2 * kMiB, 50 * kMiB, learned);
  EXPECT_EQ(over.bytes, 54 * kMiB);
}

}  // namespace
}  // namespace tessera
