// Rechunk end to end: values equal the source for random shapes, chunkings, budgets and
// tiers; every task's measured peak is at or below its projection; intermediates go to
// RAM, disk or both as total_mem allows and are gone afterwards; the budget error names
// a figure that runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>

#include "era5_case.hpp"
#include "task_bounds.hpp"
#include "temp_dir.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

Spec SmallSpec(std::int64_t allowed, std::int64_t total = 0) {
  Spec spec;
  spec.allowed_mem = allowed;
  spec.reserved_mem = 0;
  spec.total_mem = total;
  spec.max_workers = 2;
  return spec;
}

NDArray Iota(const Shape& shape, DType dtype) {
  NDArray values(shape, dtype);
  auto bytes = values.mutable_bytes();
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>((i * 131 + i / 7) & 0xff);
  }
  return values;
}

// A Zarr source in memory holding `values` in `chunks`.
Array StoredSource(const NDArray& values, const Shape& chunks, std::optional<std::string> codec,
                   const Spec& spec) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = values.shape();
  metadata.chunks = chunks;
  metadata.dtype = values.dtype();
  if (codec)
    metadata.compressor = ParseCodecSpec(*codec);
  else
    metadata.compressor = std::nullopt;
  ZarrArray::Create(store, "", metadata).Write(values, 1);
  return from_zarr(store, "", spec);
}

// The figure a MemoryBudgetError names as the smallest allowed_mem that would run.
std::int64_t SmallestNamed(const std::string& message) {
  const std::regex figure("smallest allowed_mem that would run it is ([0-9]+)");
  std::smatch match;
  EXPECT_TRUE(std::regex_search(message, match, figure)) << message;
  return std::stoll(match[1].str());
}

void ExpectTasksWithinProjection(const ExecutionReport& report) {
  testing::ExpectFootprintsWithinProjection(report);
}

bool HasFiles(const std::filesystem::path& directory) {
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(directory, error);
       it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file()) return true;
  }
  return false;
}

TEST(RechunkTest, ValidatesChunksAndSkipsNoOps) {
  const Spec spec = SmallSpec(1 << 20);
  const Array x = asarray(Iota({10, 20}, int16), {5, 20}, spec);
  EXPECT_THROW(x.rechunk({5}), InvalidArgument);
  EXPECT_THROW(x.rechunk({0, 5}), InvalidArgument);
  EXPECT_THROW(x.rechunk({-2, 5}), InvalidArgument);
  EXPECT_EQ(x.rechunk({5, -1}).node(), x.node());   // -1: the whole extent
  EXPECT_EQ(x.rechunk({5, 999}).node(), x.node());  // cut to the extent
  EXPECT_EQ(x.rechunk({-1, 4}).chunks(), (Shape{10, 4}));
  // A generator is re-chunked for free: no copy in the plan.
  const Array r = random::random({100, 100}, {100, 10}, spec, 7);
  const FinalizedPlan plan = r.rechunk({10, 100}).plan();
  ASSERT_EQ(plan.ops().size(), 1u);
  EXPECT_EQ(plan.ops().front().kind, OpKind::kGenerate);
  EXPECT_EQ(r.rechunk({10, 100}).compute(), r.compute());
  // Rechunking twice shuffles once, from the first input; back to its chunks, not at all
  // (the planner's rechunk_of_rechunk pass: the nodes keep both rechunks).
  const Array twice = x.rechunk({2, 20}).rechunk({10, 3});
  const FinalizedPlan once = twice.plan();
  ASSERT_EQ(once.ops().back().kind, OpKind::kRechunk);
  EXPECT_EQ(static_cast<std::size_t>(once.ops().back().num_stages), once.ops().size());
  EXPECT_EQ(once.ops().front().input_chunks, x.chunks()) << once.summary();
  const FinalizedPlan none = x.rechunk({2, 20}).rechunk({5, 20}).plan();
  ASSERT_EQ(none.ops().size(), 1u) << none.summary();  // the copy of x as an output
  EXPECT_NE(none.ops().front().kind, OpKind::kRechunk);
  EXPECT_EQ(twice.compute(), x.compute());
  // An input whose chunks reach past its extent is already on the asked grid.
  const Array wide = asarray(Iota({6, 7}, int16), {4, 8}, spec);
  EXPECT_EQ(wide.rechunk({4, 8}).node(), wide.node());
  EXPECT_EQ(wide.rechunk({4, 7}).node(), wide.node());
  EXPECT_EQ(wide.rechunk({4, 8}).compute(), wide.compute());
}

// Random shapes (1-4 dimensions, empty and size-1 ones), chunkings, dtypes, sources,
// budgets and tiers: the values equal the source's, the result has the asked chunks,
// and every task stays within its projection.
TEST(RechunkTest, MatchesTheSourceForRandomLayouts) {
  std::mt19937_64 random(20261129);
  auto pick = [&](Index low, Index high) {
    return std::uniform_int_distribution<Index>(low, high)(random);
  };
  const DType dtypes[] = {int8, int32, float32, float64, uint16};
  std::map<Tier, int> tiers_seen;
  for (int round = 0; round < 60; ++round) {
    const int ndim = static_cast<int>(pick(1, 4));
    Shape shape(static_cast<std::size_t>(ndim));
    Shape source_chunks(shape.size());
    Shape target_chunks(shape.size());
    const Index max_extent = ndim <= 2 ? 60 : 14;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      shape[d] = pick(0, 9) == 0 ? pick(0, 1) : pick(2, max_extent);
      source_chunks[d] = pick(1, std::max<Index>(shape[d], 1));
      // -1 (the whole dimension) one time in six.
      target_chunks[d] = pick(0, 5) == 0 ? -1 : pick(1, std::max<Index>(shape[d], 1));
    }
    // The chunks asked for, as the rechunk contract states them: -1 is the whole
    // dimension, and an empty dimension counts as one element long.
    Shape asked(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const Index whole = shape[d] == 0 ? 1 : shape[d];
      asked[d] = target_chunks[d] == -1 ? whole : std::min(target_chunks[d], whole);
    }
    const DType dtype = dtypes[pick(0, 4)];
    const NDArray values = Iota(shape, dtype);
    const int source_kind = static_cast<int>(pick(0, 2));
    const Tier tiers[] = {Tier::kNone, Tier::kMemory, Tier::kDisk};
    PlanOptions options;
    options.intermediate_tier = tiers[pick(0, 2)];
    // total_mem from "nothing left for intermediates" to ample.
    const std::int64_t nbytes = ShapeSize(shape) * dtype.itemsize();
    const std::int64_t total = pick(0, 1) == 0 ? 0 : (8 << 20) + pick(0, 2 * nbytes);
    SCOPED_TRACE("round " + std::to_string(round) + ": shape " + ShapeToString(shape) + " " +
                 std::string(dtype.name()) + " chunks " + ShapeToString(source_chunks) + " -> " +
                 ShapeToString(target_chunks) + " source kind " + std::to_string(source_kind) +
                 " tier " + std::string(TierName(options.intermediate_tier)) + " total " +
                 std::to_string(total));
    auto build = [&](std::int64_t allowed) {
      Spec spec = SmallSpec(allowed, total > 0 ? std::max(total, allowed) : 0);
      spec.total_mem = total > 0 ? std::max(total, allowed) + 2 * allowed : 0;
      const Array source =
          source_kind == 0
              ? asarray(values, source_chunks, spec)
              : StoredSource(
                    values, source_chunks,
                    source_kind == 1 ? std::nullopt : std::optional<std::string>("blosc-lz4"),
                    spec);
      return source.rechunk(target_chunks);
    };
    // The smallest budget the error names must run; a random one above it too.
    std::int64_t smallest = 1;
    try {
      build(1).plan(options);
    } catch (const MemoryBudgetError& error) {
      smallest = SmallestNamed(error.what());
    }
    for (const std::int64_t allowed : {smallest, smallest + pick(0, 3 * smallest)}) {
      const Array y = build(std::max<std::int64_t>(allowed, 1));
      ComputeOptions compute;
      compute.plan = options;
      ExecutionReport report;
      compute.report = &report;
      const FinalizedPlan plan = y.plan(options);
      for (const OpInfo& op : plan.ops()) ++tiers_seen[op.tier];
      const NDArray result = y.compute(compute);
      EXPECT_EQ(y.chunks(), asked);
      // What the plan writes last has those chunks too, when it is a copy.
      if (plan.ops().back().kind == OpKind::kRechunk) {
        EXPECT_EQ(plan.ops().back().chunks, asked) << plan.summary();
      }
      ASSERT_EQ(result.shape(), shape);
      ASSERT_EQ(result.dtype(), dtype);
      ASSERT_EQ(result, values) << "allowed_mem " << allowed;
      ExpectTasksWithinProjection(report);
      for (const OpReport& op : report.ops)
        EXPECT_LE(op.projected_mem, std::max<std::int64_t>(allowed, 1));
    }
  }
}

// With an s3:// work_dir, an intermediate the RAM left cannot hold goes to local disk while
// Spec::local_disk holds it, and to the object store after: planned so (no request is made
// until it runs; python/tests/s3 runs it against a server), and said so by the plan.
// Restores the buffer pool's capacity when a test ends, however it ends.
class ScopedPoolCapacity {
 public:
  explicit ScopedPoolCapacity(std::int64_t bytes) : before_(BufferPoolCapacity()) {
    SetBufferPoolCapacity(bytes);
  }
  ~ScopedPoolCapacity() { SetBufferPoolCapacity(before_); }
  ScopedPoolCapacity(const ScopedPoolCapacity&) = delete;
  ScopedPoolCapacity& operator=(const ScopedPoolCapacity&) = delete;

 private:
  std::int64_t before_;
};

TEST(RechunkTest, ObjectStoreTierTakesWhatLocalDiskCannot) {
  const ScopedPoolCapacity pool(2'000'000);
  const NDArray values = Iota({1000, 1000}, float64);
  struct Case {
    std::int64_t local_disk;
    Tier tier;
  };
  // 4 MB of total_mem leave no RAM for the 8 MB intermediate (2 tasks of 4 MB, the pool).
  for (const Case& c : {Case{0, Tier::kObject}, Case{7'000'000, Tier::kObject},
                        Case{9'000'000, Tier::kDisk}, Case{Spec::kAutoLocalDisk, Tier::kDisk}}) {
    SCOPED_TRACE(c.local_disk);
    Spec spec = SmallSpec(4'000'000, 4'000'000);
    spec.work_dir = "s3://tessera-bucket/work";
    spec.local_disk = c.local_disk;
    const Array y = StoredSource(values, {1000, 100}, "blosc-lz4", spec).rechunk({100, 1000});
    const FinalizedPlan plan = y.plan();
    ASSERT_GE(plan.ops().size(), 2u) << plan.summary();
    EXPECT_EQ(plan.ops().front().tier, c.tier) << plan.summary();
    const bool said = plan.summary().find("object store") != std::string::npos;
    EXPECT_EQ(said, c.tier == Tier::kObject) << plan.summary();
  }
  Spec bad = SmallSpec(4'000'000);
  EXPECT_THROW(bad.set("local_disk", "-5"), InvalidArgument);
  bad.local_disk = -7;
  EXPECT_THROW(bad.validate(), InvalidArgument);
  bad = SmallSpec(4'000'000);
  bad.work_dir = "s3://";
  EXPECT_THROW(StoredSource(values, {1000, 100}, "blosc-lz4", bad).rechunk({100, 1000}).plan(),
               InvalidArgument);
}

// Local disk is counted for the intermediates a plan keeps: of two 8 MB intermediates in
// one plan, under local_disk 9 MB, the first goes to local disk and the second to the
// object store. (And below: an intermediate that RAM holds part of puts the rest in the
// object store when local disk holds none, the tier "memory+object store".)
TEST(RechunkTest, LocalDiskIsCountedForTheIntermediatesKept) {
  const ScopedPoolCapacity pool(2'000'000);
  const NDArray values = Iota({1000, 1000}, float64);
  Spec spec = SmallSpec(4'000'000, 4'000'000);
  spec.work_dir = "s3://tessera-bucket/work";
  spec.local_disk = 9'000'000;
  const Array a = StoredSource(values, {1000, 100}, "blosc-lz4", spec).rechunk({100, 1000});
  const Array b = StoredSource(values, {1000, 100}, "blosc-lz4", spec).rechunk({100, 1000});
  const FinalizedPlan both = plan({a, b});
  std::vector<Tier> tiers;
  for (const OpInfo& op : both.ops()) {
    if (op.tier != Tier::kResult) tiers.push_back(op.tier);
  }
  EXPECT_EQ(tiers, (std::vector<Tier>{Tier::kDisk, Tier::kObject})) << both.summary();
}

TEST(RechunkTest, WhatRamLeavesGoesToTheObjectStoreWithoutLocalDisk) {
  const ScopedPoolCapacity pool(2'000'000);
  const NDArray values = Iota({1000, 1000}, float64);
  // 17 MB of total_mem leave 7 MB of RAM for the 8 MB intermediate (2 tasks of 4 MB and
  // the pool): its first blocks in RAM, the rest in the object store.
  Spec split = SmallSpec(4'000'000, 17'000'000);
  split.work_dir = "s3://tessera-bucket/work";
  split.local_disk = 0;
  const FinalizedPlan mixed =
      StoredSource(values, {1000, 100}, "blosc-lz4", split).rechunk({100, 1000}).plan();
  ASSERT_GE(mixed.ops().size(), 2u);
  EXPECT_EQ(mixed.ops().front().tier, Tier::kMemoryAndObject) << mixed.summary();
  EXPECT_NE(mixed.summary().find("in the object store"), std::string::npos) << mixed.summary();
  EXPECT_EQ(TierName(Tier::kMemoryAndObject), "memory+object store");
}

// The seed's case, scaled down: 1000 x 1000 float64 (8 MB) from (1000, 100) chunks to
// (100, 1000) under allowed_mem 4 MB. With RAM to spare nothing reaches the work_dir;
// with total_mem below the intermediate part of it goes to disk, and is gone after.
TEST(RechunkTest, IntermediateGoesToDiskOnlyWhenRamIsShort) {
  // RAM for intermediates is total_mem less the tasks (2 x 4 MB) and the buffer pool.
  const std::int64_t pool = BufferPoolCapacity();
  SetBufferPoolCapacity(2'000'000);
  testing::TempDir work;
  const NDArray values = Iota({1000, 1000}, float64);
  for (const bool ample : {true, false}) {
    SCOPED_TRACE(ample ? "ample total_mem" : "short total_mem");
    // Short: 17 MB - 2 x 4 MB - 2 MB leaves 7 MB of RAM for the 8 MB intermediate.
    Spec spec = SmallSpec(4'000'000, ample ? (1LL << 30) : 17'000'000);
    spec.work_dir = work.path().string();
    const Array source = StoredSource(values, {1000, 100}, "blosc-lz4", spec);
    const Array y = source.rechunk({100, 1000});
    const FinalizedPlan plan = y.plan();
    ASSERT_GE(plan.ops().size(), 2u) << plan.summary();
    const OpInfo& intermediate = plan.ops().front();
    EXPECT_EQ(intermediate.tier, ample ? Tier::kMemory : Tier::kMixed) << plan.summary();
    bool files_seen = false;
    ComputeOptions compute;
    ExecutionReport report;
    compute.report = &report;
    compute.execute.on_task = [&](const TaskRecord&) {
      files_seen = files_seen || HasFiles(work.path());
    };
    EXPECT_EQ(y.compute(compute), values);
    EXPECT_EQ(files_seen, !ample);
    EXPECT_FALSE(HasFiles(work.path()));
    ExpectTasksWithinProjection(report);
  }
  SetBufferPoolCapacity(pool);
}

// A killed run's work directory carries Tessera's marker and is removed by the next plan
// that spills (work_directory_test.cpp, and the SIGKILL case of interop/test_rechunk.py);
// a user's folder that is merely named like one, without the marker, is not.
TEST(RechunkTest, KeepsUnmarkedFoldersNamedLikeWorkDirectories) {
  testing::TempDir work;
  const auto named_like_stale = work.path() / "tessera-999999999-12345-1";  // no such process
  const auto not_ours = work.path() / "tessera-notes";
  std::filesystem::create_directories(named_like_stale / "x.zarr");
  std::ofstream(named_like_stale / "x.zarr" / "0.0") << "user data";
  std::filesystem::create_directories(not_ours);
  Spec spec = SmallSpec(4'000'000, 1LL << 30);
  spec.work_dir = work.path().string();
  PlanOptions options;
  options.intermediate_tier = Tier::kDisk;
  const Array source = StoredSource(Iota({1000, 1000}, float64), {1000, 100}, "blosc-lz4", spec);
  const Array y = source.rechunk({100, 1000});
  ComputeOptions compute;
  compute.plan = options;
  bool spilled = false;
  compute.execute.on_task = [&](const TaskRecord&) {
    for (const auto& entry : std::filesystem::directory_iterator(work.path())) {
      spilled = spilled || entry.path().filename().string().rfind(
                               "tessera-" + std::to_string(getpid()) + "-", 0) == 0;
    }
  };
  EXPECT_EQ(y.compute(compute), Iota({1000, 1000}, float64));
  EXPECT_TRUE(spilled);  // its intermediate went through the work_dir
  std::ifstream kept(named_like_stale / "x.zarr" / "0.0");
  std::string text;
  std::getline(kept, text);
  EXPECT_EQ(text, "user data");
  EXPECT_TRUE(std::filesystem::exists(not_ours));
  // The plan's own work directory is gone; the user's two folders are all that is left.
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(work.path())) {
    left.push_back(entry.path().filename().string());
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"tessera-999999999-12345-1", "tessera-notes"}));
}

// Issue 14: a chunk that does not decode reads the same on every attempt, so the run
// fails at its first attempt (no retries) with a FormatError naming the task.
TEST(RechunkTest, ACorruptChunkFailsAtTheFirstAttempt) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = {40, 40};
  metadata.chunks = {40, 10};
  metadata.dtype = float64;
  metadata.compressor = ParseCodecSpec("blosc-lz4");
  ZarrArray::Create(store, "", metadata).Write(Iota({40, 40}, float64), 1);
  const std::vector<std::byte> garbage(300, std::byte{0x5a});
  store->Set("0.2", garbage);
  const Array source = from_zarr(store, "", SmallSpec(4'000'000));
  ComputeOptions compute;
  compute.execute.retries = 2;
  int attempts_seen = 0;
  try {
    source.rechunk({10, 40}).compute(compute);
    ADD_FAILURE() << "a corrupt chunk computed";
  } catch (const FormatError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(" after 1 attempt: "), std::string::npos) << message;
    attempts_seen = 1;
  }
  EXPECT_EQ(attempts_seen, 1);
}

TEST(RechunkTest, ChunksThatCannotFitNameTheSmallestBudget) {
  const NDArray values = Iota({2000, 2000}, float64);
  const Spec spec = SmallSpec(4'000'000);
  const Array source = StoredSource(values, {2000, 1000}, "blosc-lz4", spec);  // 16 MB chunks
  try {
    source.rechunk({1000, 2000}).plan();
    FAIL() << "expected MemoryBudgetError";
  } catch (const MemoryBudgetError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("Projected blockwise memory (", 0), 0u) << message;
    EXPECT_NE(message.find("exceeds allowed_mem (4000000), including reserved_mem (0)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("rechunk from chunks (2000, 1000), 16.0 MB"), std::string::npos)
        << message;
    const std::int64_t smallest = SmallestNamed(message);
    EXPECT_GT(smallest, 16'000'000);
    const Array fits = StoredSource(values, {2000, 1000}, "blosc-lz4", SmallSpec(smallest));
    ExecutionReport report;
    ComputeOptions compute;
    compute.report = &report;
    EXPECT_EQ(fits.rechunk({1000, 2000}).compute(compute), values);
    ExpectTasksWithinProjection(report);
  }
}

TEST(RechunkTest, ComposesWithElementwiseOps) {
  const Spec spec = SmallSpec(1 << 20);
  const NDArray values = Iota({30, 40}, int32);
  const Array x = asarray(values, {30, 7}, spec);
  const Array y = (x + 1).rechunk({4, 40}) * 2;
  const NDArray expected = ((asarray(values, {30, 40}, spec) + 1) * 2).compute();
  EXPECT_EQ(y.compute(), expected);
  EXPECT_EQ(y.chunks(), (Shape{4, 40}));
}

// The ERA5 case of rechunker's docs, planned only (no data): (350640, 721, 1440) float32
// (1.456 TB) from chunks (31, 721, 1440) to (350640, 10, 10) under allowed_mem 2.5 GB.
// What plan() does not promise, counted here by hand from each stage's chunks: every
// stored chunk is read exactly once per stage (a stage's read region is a whole number
// of its input chunks), so each stage decodes the 1.456 TB once; the task, write and
// read counts are those of the grids; a task projects at least the region it holds.
TEST(RechunkTest, PlansTheEra5CaseReadingEveryChunkOncePerStage) {
  const Spec spec = testing::Era5Spec();
  const Array t2m = testing::Era5Temperature();
  const FinalizedPlan plan = t2m.rechunk({350640, 10, 10}).plan();
  const std::string summary = plan.summary();
  const Shape shape = {350640, 721, 1440};
  const std::int64_t nbytes = std::int64_t{350640} * 721 * 1440 * 4;  // 1,456,193,894,400
  const auto blocks = [&](const Shape& chunks) {
    std::int64_t count = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) count *= (shape[d] + chunks[d] - 1) / chunks[d];
    return count;
  };
  // Two copies: one alone would read every source chunk for each of the 10,512 targets.
  ASSERT_EQ(plan.ops().size(), 2u) << summary;
  Shape input = {31, 721, 1440};
  std::int64_t operations = 0;
  for (const OpInfo& op : plan.ops()) {
    SCOPED_TRACE(op.name);
    EXPECT_EQ(op.kind, OpKind::kRechunk);
    EXPECT_EQ(op.input_chunks, input) << summary;
    std::int64_t region_bytes = 4;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      // A read region of whole input chunks (or the whole dimension): no chunk twice.
      EXPECT_TRUE(op.task_shape[d] % input[d] == 0 || op.task_shape[d] >= shape[d])
          << ShapeToString(op.task_shape) << " over " << ShapeToString(input);
      region_bytes *= std::min(op.task_shape[d], shape[d]);
    }
    const Shape written = op.disk_chunks.empty() ? op.chunks : op.disk_chunks;
    EXPECT_EQ(op.num_tasks, blocks(op.task_shape)) << summary;
    EXPECT_EQ(op.chunk_reads, blocks(input)) << summary;
    EXPECT_EQ(op.chunk_writes, blocks(written)) << summary;
    EXPECT_EQ(op.bytes_read, nbytes) << summary;
    EXPECT_EQ(op.bytes_written, nbytes) << summary;
    EXPECT_GE(op.projected_mem, region_bytes) << summary;
    EXPECT_LE(op.projected_mem, spec.allowed_mem) << summary;
    // An intermediate of 1.46 TB cannot be in 16 GB of RAM.
    if (op.tier != Tier::kTarget) {
      EXPECT_EQ(op.bytes_in_memory, 0) << summary;
    }
    operations += op.chunk_reads + op.chunk_writes;
    input = written;
  }
  EXPECT_EQ(plan.ops().front().chunk_reads, 11311);  // ceil(350640 / 31) source chunks
  EXPECT_EQ(plan.ops().back().chunks, (Shape{350640, 10, 10}));
  EXPECT_EQ(plan.ops().back().chunk_writes, 73 * 144);  // ceil(721 / 10) x ceil(1440 / 10)
  // Each stage decodes the array once and writes it once: 4 x 1.456 TB in all.
  EXPECT_EQ(plan.bytes_moved(), 4 * nbytes) << summary;
  std::string with_commas = std::to_string(operations);
  for (int at = static_cast<int>(with_commas.size()) - 3; at > 0; at -= 3)
    with_commas.insert(static_cast<std::size_t>(at), ",");
  EXPECT_NE(summary.find("In all: " + with_commas + " I/O operations"), std::string::npos)
      << summary;
}

}  // namespace
}  // namespace tessera
