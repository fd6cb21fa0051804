// allowed_mem "auto" weighs requests (issue 18): the ERA5 rechunk, planned with no data
// ((350640, 721, 1440) float32, 1.5 TB, from (31, 721, 1440) to (350640, 10, 10)
// chunks), under a given 2.5 GB and under auto with 64 GB of total_mem. Auto once chose
// 295.7 MB and 237,824,287 requests (intermediate chunks of 12 KB); now its requests stay
// within twice the 2.5 GB plan's, its intermediate chunks on disk at or above the
// directory store's floor (2 MiB), and the summary says what the smallest budget passed
// over would cost. The figures checked are worked out from the plans' own chunk shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "era5_case.hpp"
#include "plan_io.hpp"
#include "temp_dir.hpp"
#include "tessera/api/array.hpp"

namespace tessera {
namespace {

// 64 GB of total_mem and 2 workers: the figures above (the auto search's ceiling and
// the tasks a copy keeps per worker follow both).
Spec AtBudget(std::int64_t allowed_mem) {
  Spec spec;
  spec.allowed_mem = allowed_mem;
  spec.total_mem = std::int64_t{64} * 1000 * 1000 * 1000;
  spec.max_workers = 2;
  return spec;
}

TEST(RequestFloorTest, AutoPlansEra5WithRequestsNearAGivenBudgets) {
  testing::TempDir dir("era5");
  const std::string target = (dir.path() / "out.zarr").string();
  const Shape target_chunks{350640, 10, 10};

  const Spec given = AtBudget(std::int64_t{2500} * 1000 * 1000);
  const FinalizedPlan at_given =
      testing::Era5Temperature(given).rechunk(target_chunks).plan_to_zarr(target);
  const Spec automatic = AtBudget(Spec::kAutoAllowedMem);
  const FinalizedPlan at_auto =
      testing::Era5Temperature(automatic).rechunk(target_chunks).plan_to_zarr(target);

  ASSERT_TRUE(at_auto.allowed_mem_was_auto());
  EXPECT_LE(at_auto.spec().allowed_mem, given.allowed_mem) << at_auto.summary();
  EXPECT_LE(testing::PlanRequests(at_auto), 2 * testing::PlanRequests(at_given))
      << at_auto.summary();
  EXPECT_GE(testing::SmallestDiskChunk(at_auto), std::int64_t{2} << 20) << at_auto.summary();
  // Every copy still decodes the 1.5 TB once: no more bytes for the fewer requests.
  EXPECT_LE(at_auto.bytes_moved(), at_given.bytes_moved() * 11 / 10);
  // The summary names a smaller budget it passed over, and what that would cost.
  const std::string summary = at_auto.summary();
  EXPECT_NE(summary.find("a smaller budget costs requests: at "), std::string::npos) << summary;
  EXPECT_NE(summary.find("intermediate chunks on disk of at least 2.1 MB"), std::string::npos)
      << summary;
}

}  // namespace
}  // namespace tessera
