// Rechunks into and out of sharded Zarr v3 arrays: a sharded target is written by tasks
// of whole shards (a shard is one value: two tasks writing parts of one would lose one
// part), so a shard larger than allowed_mem is refused at planning time with the
// smallest allowed_mem that runs; at that budget the run's every task is measured within
// it. A sharded source is read by its inner chunks, so a budget smaller than one shard
// still reads it.
#include <gtest/gtest.h>

#include <regex>

#include "task_bounds.hpp"
#include "temp_dir.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

Spec BudgetSpec(std::int64_t allowed) {
  Spec spec;
  spec.allowed_mem = allowed;
  spec.reserved_mem = 0;
  spec.max_workers = 2;
  return spec;
}

NDArray Values(const Shape& shape) {
  NDArray values(shape, float64);
  auto data = values.mutable_data<double>();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>(i % 977) * 0.25;
  return values;
}

// The figure a MemoryBudgetError names as the smallest allowed_mem that would run.
std::int64_t SmallestNamed(const std::string& message) {
  const std::regex figure("smallest allowed_mem that would run it is ([0-9]+)");
  std::smatch match;
  EXPECT_TRUE(std::regex_search(message, match, figure)) << message;
  return match.empty() ? 0 : std::stoll(match[1].str());
}

// A v2 source in memory, chunked by columns.
Array ColumnSource(const NDArray& values, const Spec& spec) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = values.shape();
  metadata.chunks = {values.shape()[0], 25};
  metadata.dtype = float64;
  metadata.compressor = ParseCodecSpec("blosc-lz4");
  ZarrArray::Create(store, "", metadata).Write(values, 1);
  return from_zarr(store, "", spec);
}

TEST(ShardedRechunkTest, AShardLargerThanTheBudgetIsRefusedWithTheSmallestThatRuns) {
  testing::TempDir dir("sharded_rechunk");
  const Shape shape{400, 400};
  const NDArray values = Values(shape);  // 1.28 MB
  ToZarrOptions options;
  options.zarr_format = 3;
  options.shards = Shape{200, 200};  // 320 kB decoded per shard, 4 shards
  options.compressor = ParseCodecSpec("zstd:1");
  const std::string out = (dir.path() / "out.zarr").string();

  std::int64_t smallest = 0;
  try {
    ColumnSource(values, BudgetSpec(200'000)).rechunk({50, 50}).plan_to_zarr(out, options);
    FAIL() << "a 320 kB shard cannot be written within 200 kB";
  } catch (const MemoryBudgetError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("exceeds allowed_mem (200000)"), std::string::npos) << message;
    smallest = SmallestNamed(message);
  }
  // A task holds at least its shard, decoded.
  EXPECT_GT(smallest, 200 * 200 * 8);
  EXPECT_FALSE(std::filesystem::exists(out));

  const Array y = ColumnSource(values, BudgetSpec(smallest)).rechunk({50, 50});
  const FinalizedPlan plan = y.plan_to_zarr(out, options);
  EXPECT_LE(plan.max_projected_mem(), smallest);
  // The op writing the target has one task per shard: no two tasks share one.
  EXPECT_EQ(plan.ops().back().num_tasks, 4);
  ExecutionReport report;
  options.compute.report = &report;
  y.to_zarr(out, options);
  testing::ExpectFootprintsWithinProjection(report);
  testing::ExpectFootprintsWithin(report, smallest);

  const ZarrArray written = ZarrArray::Open(DirectoryStore::Open(out));
  EXPECT_EQ(written.metadata().zarr_format, 3);
  EXPECT_EQ(ShardShape(written.metadata()), (Shape{200, 200}));
  EXPECT_EQ(written.metadata().read_chunks(), (Shape{50, 50}));
  EXPECT_EQ(written.Read(), values);
}

TEST(ShardedRechunkTest, ASourceShardLargerThanTheBudgetIsReadByItsInnerChunks) {
  testing::TempDir dir("sharded_source");
  const Shape shape{400, 400};
  const NDArray values = Values(shape);
  // One shard of the whole array (1.28 MB) in inner chunks of 50 x 50 (20 kB).
  auto store = DirectoryStore::Open(dir.path() / "in.zarr");
  ZarrArray::Create(
      store, "",
      MakeV3Metadata(shape, {50, 50}, float64, ParseCodecSpec("zstd:1"), Shape{400, 400}))
      .Write(values, 1);
  const Spec spec = BudgetSpec(1'000'000);  // less than the 1.28 MB shard
  const Array source = from_zarr(store, "", spec);
  EXPECT_EQ(source.chunks(), (Shape{50, 50}));  // tasks read inner chunks

  ComputeOptions compute;
  ExecutionReport report;
  compute.report = &report;
  EXPECT_EQ(source.rechunk({400, 50}).compute(compute), values);
  testing::ExpectFootprintsWithinProjection(report);
  testing::ExpectFootprintsWithin(report, spec.allowed_mem);

  // Written on: a rechunk of a v3 source keeps v3 unless told otherwise.
  const std::string out = (dir.path() / "out.zarr").string();
  source.rechunk({400, 50}).to_zarr(out);
  const ZarrArray written = ZarrArray::Open(DirectoryStore::Open(out));
  EXPECT_EQ(written.metadata().zarr_format, 3);
  EXPECT_FALSE(written.metadata().sharded());
  EXPECT_EQ(written.Read(), values);
  ToZarrOptions v2;
  v2.zarr_format = 2;
  const std::string out_v2 = (dir.path() / "out_v2.zarr").string();
  source.rechunk({400, 50}).to_zarr(out_v2, v2);
  EXPECT_EQ(ZarrArray::Open(DirectoryStore::Open(out_v2)).metadata().zarr_format, 2);
  EXPECT_EQ(ZarrArray::Open(DirectoryStore::Open(out_v2)).Read(), values);
}

// compute() of a sharded source reads each task's values straight into the result: a
// task takes a whole shard (its index read once) when there are enough shards to keep
// every core busy, and still holds only one inner chunk's scratch, within a budget
// smaller than one shard; with fewer shards it reads inner chunks, in parallel.
TEST(ShardedRechunkTest, ComputeOfASourceReadsAShardPerTaskWhenThereAreEnough) {
  testing::TempDir dir("sharded_compute");
  const Spec spec = BudgetSpec(200'000);  // less than one 320 kB shard
  for (const Index shards_per_side : {Index{1}, Index{2 * HardwareThreads()}}) {
    SCOPED_TRACE(shards_per_side);
    const Shape shape{200 * shards_per_side, 200};
    const NDArray values = Values(shape);
    auto store = DirectoryStore::Open(dir.path() / ("in" + std::to_string(shards_per_side)));
    ZarrArray::Create(
        store, "",
        MakeV3Metadata(shape, {50, 50}, float64, ParseCodecSpec("zstd:1"), Shape{200, 200}))
        .Write(values, 1);
    const Array source = from_zarr(store, "", spec);
    ComputeOptions compute;
    ExecutionReport report;
    compute.report = &report;
    EXPECT_EQ(source.compute(compute), values);
    ASSERT_EQ(report.ops.size(), 1u);
    const bool by_shard = shards_per_side >= 2 * HardwareThreads();
    EXPECT_EQ(static_cast<Index>(report.tasks.size()),
              by_shard ? shards_per_side : shards_per_side * 16);
    testing::ExpectFootprintsWithinProjection(report);
    testing::ExpectFootprintsWithin(report, spec.allowed_mem);
  }
}

TEST(ShardedRechunkTest, ShardsMustBeMultiplesOfTheChunks) {
  testing::TempDir dir("shard_multiples");
  const Array x = ColumnSource(Values({40, 40}), BudgetSpec(10 << 20));
  ToZarrOptions options;
  options.shards = Shape{40, 30};  // 30 is no multiple of the 25-column chunks
  const std::string out = (dir.path() / "out.zarr").string();
  try {
    x.to_zarr(out, options);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("whole multiples"), std::string::npos) << error.what();
  }
  options.shards = Shape{40, 50};
  options.zarr_format = 2;
  EXPECT_THROW(x.to_zarr(out, options), InvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace tessera
