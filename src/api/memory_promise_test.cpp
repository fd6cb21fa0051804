// The memory promise, measured: for every kind of op the planner makes, every task's
// measured peak (exact Buffer bytes, from the accounting allocator) is at or below its
// projection. Also prints measured / projected so drift towards loose projections shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <vector>

#include "plan_io.hpp"
#include "task_bounds.hpp"
#include "temp_dir.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/indexing.hpp"
#include "tessera/api/manipulation.hpp"
#include "tessera/api/map_blocks.hpp"
#include "tessera/api/reduction.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

struct Case {
  std::string name;
  Array array;
  PlanOptions plan;
  std::optional<std::string> codec;  // to_zarr with this codec; nullopt: compute()
  // Its tasks hold nothing of their own: they read views of an in-memory array and
  // write into the caller's result.
  bool holds_nothing = false;
};

Spec TestSpec() {
  Spec spec;
  spec.allowed_mem = 64 << 20;
  spec.reserved_mem = 1 << 20;
  spec.max_workers = 2;
  return spec;
}

// A stored float32 array: blosc-lz4 or raw, edge chunks in both dimensions.
Array Stored(const Spec& spec, std::optional<CodecConfig> codec, Shape chunks) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = {250, 130};
  metadata.chunks = std::move(chunks);
  metadata.dtype = float32;
  metadata.compressor = std::move(codec);
  const ZarrArray array = ZarrArray::Create(store, "", metadata);
  NDArray values(metadata.shape, float32);
  auto data = values.mutable_data<float>();
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<float>((i * 37) % 1000) * 0.5f + 1.0f;
  array.Write(values, 1);
  return from_zarr(store, "", spec);
}

std::vector<Case> Cases() {
  const Spec spec = TestSpec();
  const Array raw = Stored(spec, std::nullopt, {64, 50});
  const Array lz4 = Stored(spec, ParseCodecSpec("blosc-lz4"), {64, 50});
  const Array other_grid = Stored(spec, ParseCodecSpec("zstd:1"), {100, 130});
  NDArray row_values({130}, float32);
  for (Index i = 0; i < 130; ++i)
    row_values.mutable_data<float>()[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const Array row = asarray(row_values, {50}, spec);
  PlanOptions unfused;
  unfused.fuse = false;
  PlanOptions disk = unfused;
  disk.intermediate_tier = Tier::kDisk;
  const auto doubled = [](std::span<const NDArray> in, const BlockInfo&) {
    NDArray scratch = in[0];  // declared below as extra memory
    NDArray out = in[0];
    for (float& v : out.mutable_data<float>()) v *= 2;
    return out;
  };
  std::vector<Case> cases;
  const auto add_case = [&](std::string name, Array array, const PlanOptions& plan,
                            std::optional<std::string> codec) {
    cases.push_back(Case{std::move(name), std::move(array), plan, std::move(codec)});
  };
  const PlanOptions fused;
  // A source asked for as an output: its blocks are the op's results, not copied.
  add_case("compressed source as the result", lz4, fused, std::nullopt);
  add_case("raw source as the result", raw, fused, std::nullopt);
  add_case("in-memory array as the result", row, fused, std::nullopt);
  cases.back().holds_nothing = true;
  add_case("compressed source to zarr", lz4, fused, "blosc-lz4");
  // Encoded straight from the caller's memory: only the codec's scratch is held.
  add_case("in-memory array to zarr", row, fused, "blosc-lz4");
  add_case("raw source chain", exp(log(raw) * 0.5f) - 1.0f, fused, std::nullopt);
  add_case("compressed source chain", sqrt(lz4) + lz4 * 2.0f, fused, std::nullopt);
  add_case("where and comparisons", where(lz4 > 100.0f, raw, lz4 - raw), fused, std::nullopt);
  add_case("astype chain", (-lz4).astype(int32).astype(float64), fused, std::nullopt);
  add_case("misaligned grids (region reads)", raw + exp(other_grid * 0.001f), fused, std::nullopt);
  add_case("broadcast of a small array", lz4 + broadcast_to(row * 2.0f, {250, 130}), fused,
           std::nullopt);
  add_case("generators",
           ones({250, 130}, float32, {64, 50}, spec) +
               random::random({250, 130}, {64, 50}, spec, 7).astype(float32),
           fused, std::nullopt);
  add_case("map_blocks with declared extra",
           map_blocks(doubled, {raw}, float32, 64 * 50 * 4) + 1.0f, fused, std::nullopt);
  add_case("unfused, RAM intermediates", exp(log(lz4) * 0.5f), unfused, std::nullopt);
  add_case("unfused, disk intermediates", exp(log(lz4) * 0.5f), disk, std::nullopt);
  add_case("to_zarr blosc-lz4", exp(log(lz4) * 0.5f), fused, "blosc-lz4");
  add_case("to_zarr raw", lz4 * 3.0f, fused, "none");
  PlanOptions ram = fused;
  ram.intermediate_tier = Tier::kMemory;
  PlanOptions on_disk = fused;
  on_disk.intermediate_tier = Tier::kDisk;
  add_case("rechunk through RAM", lz4.rechunk({250, 13}), ram, std::nullopt);
  add_case("rechunk through disk", lz4.rechunk({7, 130}), on_disk, std::nullopt);
  add_case("rechunk of raw chunks to zarr", raw.rechunk({128, 100}), fused, "blosc-lz4");
  add_case("rechunk of an in-memory array", row.rechunk({13}), fused, std::nullopt);
  cases.back().holds_nothing = true;
  add_case("sum over axis 0 of compressed chunks", sum(lz4, 0), fused, std::nullopt);
  add_case("mean of a fused elementwise input", mean(raw * 2.0f - lz4), fused, std::nullopt);
  add_case("var with partials on disk", var(lz4, 1, false, 1), on_disk, std::nullopt);
  add_case("argmax over axis 1", argmax(raw, 1), fused, std::nullopt);
  add_case("max over both axes to zarr", max(lz4, {0, 1}, true), fused, "blosc-lz4");
  add_case("strided, reversed slice of compressed chunks",
           lz4[{Slice::Every(3), Slice(120, 5, -7)}], fused, std::nullopt);
  add_case("transpose of raw chunks", permute_dims(raw, {1, 0}), fused, std::nullopt);
  add_case("concat to zarr", concat({raw, lz4 * 2.0f}, 1), fused, "blosc-lz4");
  add_case("roll, tile and flip", flip(tile(roll(lz4, 17, 0), {1, 2})), fused, std::nullopt);
  add_case("reshape through a rechunk", reshape(lz4, {130, 250}), fused, std::nullopt);
  add_case("reshape of a RAM intermediate", reshape(exp(raw), {-1}), ram, std::nullopt);
  add_case("stack and index of a disk intermediate", stack({lz4, lz4 + 1.0f}, 2)[{ellipsis, 1}],
           on_disk, std::nullopt);
  return cases;
}

// Runs `c` (compute, or to_zarr into `directory` or else a MemoryStore) with `spec`,
// returning what ran.
ExecutionReport RunCase(const Case& c, const Spec& spec, const std::string& directory = "") {
  ExecutionReport report;
  ComputeOptions options;
  options.plan = c.plan;
  options.report = &report;
  options.execute.progress = ProgressMode::kNever;
  const Array array(c.array.node(), spec);
  if (c.codec) {
    ToZarrOptions zarr;
    zarr.compressor = *c.codec == "none" ? std::nullopt : std::optional(ParseCodecSpec(*c.codec));
    zarr.compute = options;
    if (directory.empty()) {
      array.to_zarr(std::make_shared<MemoryStore>(), "", zarr);
    } else {
      array.to_zarr(directory, zarr);
    }
  } else {
    array.compute(options);
  }
  return report;
}

TEST(MemoryPromiseTest, MeasuredNeverExceedsProjectedForAnyTask) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const ExecutionReport report = RunCase(c, TestSpec());
    ASSERT_FALSE(report.tasks.empty());
    testing::ExpectFootprintsWithinProjection(report);
    for (const TaskRecord& task : report.tasks) {
      if (c.holds_nothing) {
        EXPECT_EQ(task.measured_mem, TestSpec().reserved_mem) << "op " << task.op_name;
      } else {
        EXPECT_GT(task.measured_mem, TestSpec().reserved_mem) << "op " << task.op_name;
      }
    }
    for (const OpReport& op : report.ops) {
      std::cout << "  " << c.name << ": " << op.name << " (" << op.kind << ") measured "
                << op.measured_mem_max << " / projected " << op.projected_mem << " = "
                << static_cast<double>(op.measured_mem_max) / static_cast<double>(op.projected_mem)
                << "\n";
    }
  }
}

// allowed_mem "auto" on every kind of op: the budget found is the plan's requirement,
// a byte less is refused (or costs more I/O than auto allows: tests/support/plan_io.hpp),
// it never exceeds what the plan given all the memory requires, and every task of the
// run measures within it.
TEST(MemoryPromiseTest, AutoBudgetIsTheSmallestAndEveryTaskRunsWithinIt) {
  testing::TempDir dir("auto-budget");
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::cout << "  " << c.name << std::endl;
    Spec automatic = TestSpec();
    automatic.allowed_mem = Spec::kAutoAllowedMem;
    automatic.total_mem = std::int64_t{1} << 30;
    const std::string target = (dir.path() / "out.zarr").string();
    // The plan the run makes: compute()'s, or to_zarr()'s with its encode buffers.
    const auto plan_at = [&](const Spec& spec) {
      const Array array(c.array.node(), spec);
      if (!c.codec) return array.plan(c.plan);
      ToZarrOptions zarr;
      zarr.compressor = *c.codec == "none" ? std::nullopt : std::optional(ParseCodecSpec(*c.codec));
      zarr.compute.plan = c.plan;
      return array.plan_to_zarr(target, zarr);
    };
    const FinalizedPlan plan = plan_at(automatic);
    const std::int64_t budget = plan.spec().allowed_mem;
    EXPECT_TRUE(plan.allowed_mem_was_auto());
    EXPECT_EQ(budget, plan.required_allowed_mem());
    // Never more than the plan given all the memory requires; a byte less is refused,
    // or costs over 10% more I/O than that plan, or keeps smaller chunks on disk than
    // both that plan and 2 MiB.
    Spec ceiling = automatic;
    ceiling.allowed_mem = automatic.total_mem;
    const FinalizedPlan wide = plan_at(ceiling);
    EXPECT_LE(budget, wide.required_allowed_mem());
    const double io_limit = testing::PlanIoCost(wide) * 1.1;
    EXPECT_LE(testing::PlanIoCost(plan), io_limit);
    const std::int64_t floor = std::min(testing::SmallestDiskChunk(wide), std::int64_t{2} << 20);
    Spec below = automatic;  // the same total_mem: it decides where intermediates live
    below.allowed_mem = budget - 1;
    try {
      const FinalizedPlan smaller = plan_at(below);
      EXPECT_TRUE(testing::PlanIoCost(smaller) > io_limit ||
                  testing::SmallestDiskChunk(smaller) < floor)
          << smaller.summary();
    } catch (const MemoryBudgetError&) {
    }

    const ExecutionReport report = RunCase(c, automatic, target);
    ASSERT_FALSE(report.tasks.empty());
    testing::ExpectFootprintsWithin(report, budget);
  }
}

}  // namespace
}  // namespace tessera
