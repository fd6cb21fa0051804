// allowed_mem "auto" weighs requests (issue 18): the ERA5 rechunk, planned with no data
// ((350640, 721, 1440) float32, 1.5 TB, from (31, 721, 1440) to (350640, 10, 10)
// chunks), under a given 2.5 GB and under auto with 64 GB of total_mem. Auto once chose
// 295.7 MB and 237,824,287 requests (intermediate chunks of 12 KB); now its requests stay
// within twice the 2.5 GB plan's, its intermediate chunks on disk at or above the
// directory store's floor (2 MiB), and the summary says what the smallest budget passed
// over would cost. The figures checked are worked out from the plans' own chunk shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "temp_dir.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

Spec Era5Spec(std::int64_t allowed_mem) {
  Spec spec;
  spec.allowed_mem = allowed_mem;
  spec.total_mem = std::int64_t{64} * 1000 * 1000 * 1000;
  spec.max_workers = 2;
  return spec;
}

Array Era5(const Spec& spec) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = {350640, 721, 1440};
  metadata.chunks = {31, 721, 1440};
  metadata.dtype = float32;
  metadata.compressor = ParseCodecSpec("blosc-lz4");
  ZarrArray::Create(store, "t2m", metadata);  // metadata only: no chunk is stored
  return from_zarr(store, "t2m", spec);
}

std::int64_t Requests(const FinalizedPlan& plan) {
  std::int64_t requests = 0;
  for (const OpInfo& op : plan.ops()) requests += op.chunk_reads + op.chunk_writes;
  return requests;
}

// The smallest chunk of an intermediate on disk, in bytes (max when there is none).
std::int64_t SmallestDiskChunk(const FinalizedPlan& plan) {
  std::int64_t smallest = std::numeric_limits<std::int64_t>::max();
  for (const OpInfo& op : plan.ops()) {
    if (op.tier != Tier::kDisk && op.tier != Tier::kMixed) continue;
    const Shape& chunks = op.disk_chunks.empty() ? op.chunks : op.disk_chunks;
    std::int64_t bytes = op.dtype.itemsize();
    for (std::size_t d = 0; d < chunks.size(); ++d) bytes *= std::min(chunks[d], op.shape[d]);
    smallest = std::min(smallest, bytes);
  }
  return smallest;
}

TEST(RequestFloorTest, AutoPlansEra5WithRequestsNearAGivenBudgets) {
  testing::TempDir dir("era5");
  const std::string target = (dir.path() / "out.zarr").string();
  const Shape target_chunks{350640, 10, 10};

  const Spec given = Era5Spec(std::int64_t{2500} * 1000 * 1000);
  const FinalizedPlan at_given = Era5(given).rechunk(target_chunks).plan_to_zarr(target);
  const Spec automatic = Era5Spec(Spec::kAutoAllowedMem);
  const FinalizedPlan at_auto = Era5(automatic).rechunk(target_chunks).plan_to_zarr(target);

  ASSERT_TRUE(at_auto.allowed_mem_was_auto());
  EXPECT_LE(at_auto.spec().allowed_mem, given.allowed_mem) << at_auto.summary();
  EXPECT_LE(Requests(at_auto), 2 * Requests(at_given)) << at_auto.summary();
  EXPECT_GE(SmallestDiskChunk(at_auto), std::int64_t{2} << 20) << at_auto.summary();
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
