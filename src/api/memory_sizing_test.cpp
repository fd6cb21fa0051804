// Sizing the work by memory (allowed_mem "auto", Spec::memory_tiers), end to end: the
// budget a single planning call chooses is the smallest that plans (one byte less is
// refused), the run stays within it by measurement, and per-op sizes and costs follow
// the hand computation from what history measured.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "task_bounds.hpp"
#include "temp_dir.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/reduction.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

Spec AutoSpec() {
  Spec spec;
  spec.allowed_mem = Spec::kAutoAllowedMem;
  spec.total_mem = std::int64_t{2} << 30;
  spec.max_workers = 2;
  return spec;
}

// A stored float32 array of `shape` and `chunks` whose element i is value(i).
template <typename Value>
Array StoredFloat32(const Shape& shape, const Shape& chunks, const Spec& spec, Value value,
                    NDArray* values_out = nullptr) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = shape;
  metadata.chunks = chunks;
  metadata.dtype = float32;
  metadata.compressor = ParseCodecSpec("blosc-lz4");
  const ZarrArray array = ZarrArray::Create(store, "", metadata);
  NDArray values(shape, float32);
  auto data = values.mutable_data<float>();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(i);
  array.Write(values, 1);
  if (values_out != nullptr) *values_out = values;
  return from_zarr(store, "", spec);
}

// The dew point (K) from 2 m temperature (K) and relative humidity (%).
Array DewPoint(const Array& t2, const Array& rh) {
  return pow((1.0 / 273) -
                 0.0001844 * log(0.611 * exp(5423 * ((1.0 / 273) - (1.0 / t2))) * rh / 100 / 0.611),
             -1);
}

double DewPointOf(double t2, double rh) {
  return 1 / ((1.0 / 273) -
              0.0001844 *
                  std::log(0.611 * std::exp(5423 * ((1.0 / 273) - (1.0 / t2))) * rh / 100 / 0.611));
}

// Planning at `allowed_mem` (fixed) fails for memory.
bool RefusedAt(const Array& array, std::int64_t allowed_mem) {
  Spec fixed = array.spec();
  fixed.allowed_mem = allowed_mem;
  try {
    Array(array.node(), fixed).plan();
    return false;
  } catch (const MemoryBudgetError&) {
    return true;
  }
}

// Planning at `allowed_mem` (fixed) moves more than 10% more bytes than `moved`.
bool MovesMoreAt(const Array& array, std::int64_t allowed_mem, std::int64_t moved) {
  Spec fixed = array.spec();
  fixed.allowed_mem = allowed_mem;
  return Array(array.node(), fixed).plan().bytes_moved() > moved + moved / 10;
}

TEST(MemorySizing, DewPointOverThreeGridsGetsEachItsOwnBudgetInOnePlanningCall) {
  struct Grid {
    Shape shape;
    Shape chunks;
  };
  const std::vector<Grid> grids = {
      {{6, 45, 90}, {2, 45, 90}},        // 32 KB chunks
      {{4, 181, 360}, {2, 181, 360}},    // 521 KB chunks
      {{3, 721, 1440}, {1, 721, 1440}},  // 4.2 MB chunks
  };
  std::int64_t previous_budget = 0;
  for (const Grid& grid : grids) {
    SCOPED_TRACE(grid.shape[1]);
    const Spec spec = AutoSpec();
    NDArray t2_values;
    NDArray rh_values;
    const Array t2 = StoredFloat32(
        grid.shape, grid.chunks, spec,
        [](std::size_t i) { return 250.0f + static_cast<float>(i % 600) * 0.1f; }, &t2_values);
    const Array rh = StoredFloat32(
        grid.shape, grid.chunks, spec,
        [](std::size_t i) { return 5.0f + static_cast<float>((i * 7) % 950) * 0.1f; }, &rh_values);
    const Array td = DewPoint(t2, rh);

    const FinalizedPlan plan = td.plan();  // the single planning call
    ASSERT_TRUE(plan.allowed_mem_was_auto());
    const std::int64_t budget = plan.spec().allowed_mem;
    EXPECT_EQ(budget, plan.required_allowed_mem());
    EXPECT_EQ(budget, plan.max_projected_mem());
    // One fused op reading t2 and rh once: a byte less would split the chain and store
    // its pieces (more than 10% more bytes moved), or is refused; the chosen budget plans
    // as a fixed one too.
    ASSERT_EQ(plan.ops().size(), 1u);
    EXPECT_TRUE(RefusedAt(td, budget - 1) || MovesMoreAt(td, budget - 1, plan.bytes_moved()));
    EXPECT_FALSE(RefusedAt(td, budget));
    // Each grid its own budget, growing with its chunks (3 blocks of float32 at least).
    EXPECT_GT(budget, previous_budget);
    EXPECT_GE(budget, 3 * ShapeSize(grid.chunks) * 4);
    previous_budget = budget;
    std::cout << "grid " << grid.shape[1] << "x" << grid.shape[2] << ": allowed_mem auto -> "
              << budget << " bytes in " << plan.budget_plans() << " trial plans\n";

    ExecutionReport report;
    ComputeOptions options;
    options.report = &report;
    const NDArray result = td.compute(options);
    // Every task's footprint within the budget: its Buffers, blosc's block buffers while
    // it decodes (charged for the call's duration), and nothing else but the runtime's
    // bookkeeping.
    testing::ExpectFootprintsWithin(report, budget);
    ASSERT_EQ(result.dtype(), float32);
    const auto t2_data = t2_values.data<float>();
    const auto rh_data = rh_values.data<float>();
    const auto td_data = result.data<float>();
    for (std::size_t i = 0; i < td_data.size(); ++i) {
      const double expected = DewPointOf(t2_data[i], rh_data[i]);
      ASSERT_NEAR(td_data[i], expected, 1e-4 * std::abs(expected)) << "element " << i;
    }
  }
}

TEST(MemorySizing, AutoReplansAReductionsFanInToTheSmallestBudget) {
  const Spec spec = AutoSpec();
  NDArray values;
  const Array x = StoredFloat32(
      {4000, 64}, {50, 64}, spec, [](std::size_t i) { return static_cast<float>(i % 97); },
      &values);
  const Array total = sum(x, 0);
  const FinalizedPlan plan = total.plan();
  const std::int64_t budget = plan.spec().allowed_mem;
  EXPECT_EQ(budget, plan.required_allowed_mem());
  EXPECT_TRUE(RefusedAt(total, budget - 1));
  // A generous budget combines more partial results per task: fewer rounds, larger tasks.
  Spec generous = spec;
  generous.allowed_mem = 256 << 20;
  const FinalizedPlan wide = Array(total.node(), generous).plan();
  EXPECT_GE(wide.required_allowed_mem(), budget);
  EXPECT_GE(plan.ops().size(), wide.ops().size());

  const NDArray result = total.compute();
  const auto data = values.data<float>();
  for (Index column = 0; column < 64; ++column) {
    double expected = 0;
    for (Index row = 0; row < 4000; ++row)
      expected += data[static_cast<std::size_t>(row * 64 + column)];
    EXPECT_NEAR(result.data<float>()[static_cast<std::size_t>(column)], expected, 1e-3 * expected);
  }
}

TEST(MemorySizing, AutoRechunksAtTheSmallestBudgetThatDoesNotMultiplyItsReads) {
  const Spec spec = AutoSpec();
  NDArray values;
  const Array x = StoredFloat32(
      {600, 600}, {600, 8}, spec, [](std::size_t i) { return static_cast<float>(i); }, &values);
  const Array y = x.rechunk({8, 600});
  const FinalizedPlan plan = y.plan();
  const std::int64_t budget = plan.spec().allowed_mem;
  EXPECT_EQ(budget, plan.required_allowed_mem());
  // With all of total_mem the rechunk decodes each source chunk once; auto stays within
  // 10% of that, where the very least budget would decode each chunk 75 times.
  Spec generous = spec;
  generous.allowed_mem = spec.total_mem;
  const FinalizedPlan wide = Array(y.node(), generous).plan();
  EXPECT_LE(plan.bytes_moved(), wide.bytes_moved() * 11 / 10);
  EXPECT_LT(budget, wide.required_allowed_mem());
  // A byte less is refused, or moves more than that.
  Spec below = spec;
  below.allowed_mem = budget - 1;
  try {
    EXPECT_GT(Array(y.node(), below).plan().bytes_moved(), wide.bytes_moved() * 11 / 10);
  } catch (const MemoryBudgetError&) {
  }

  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  const NDArray result = y.compute(options);
  testing::ExpectFootprintsWithin(report, budget);
  const auto expected = values.data<float>();
  const auto actual = result.data<float>();
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) ASSERT_EQ(actual[i], expected[i]) << i;
}

TEST(MemorySizing, EveryOpGetsTheSmallestTierAndACostFromHistoryDurations) {
  testing::TempDir dir("sizing");
  Spec spec = AutoSpec();
  spec.history = (dir.path() / "history.sqlite").string();
  spec.set_memory_tiers("1MB,8MB,64MB");
  // Small elementwise tasks (2 blocks of 40 kB and tiles: under 1 MB), then a rechunk
  // into one 4 MB block (at least that block: over 1 MB, and with a 40 kB source chunk
  // and its codec buffer, under 8 MB).
  const Array x = StoredFloat32({1000, 1000}, {100, 100}, spec,
                                [](std::size_t i) { return static_cast<float>(i % 13); });
  const Array y = (x * 2.0f + 1.0f).rechunk({1000, 1000});

  const FinalizedPlan first = y.plan();
  ASSERT_GE(first.ops().size(), 2u);
  const OpInfo& small = first.ops().front();
  const OpInfo& large = first.ops().back();
  EXPECT_EQ(small.kind, OpKind::kElementwise);
  EXPECT_EQ(small.memory_size, 1'000'000);
  EXPECT_EQ(large.kind, OpKind::kRechunk);
  EXPECT_EQ(large.memory_size, 8'000'000);
  // With tiers the budget is the smallest tier that runs the plan.
  EXPECT_EQ(first.spec().allowed_mem, 8'000'000);
  for (const OpInfo& op : first.ops()) EXPECT_FALSE(op.task_seconds_from_history) << op.name;

  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  y.compute(options);
  ASSERT_NE(report.history_run, 0);

  // The next plan of the same steps times each task by the median its run measured.
  const FinalizedPlan second = y.plan();
  ASSERT_EQ(second.ops().size(), report.ops.size());
  double expected_total = 0;
  for (std::size_t i = 0; i < second.ops().size(); ++i) {
    const OpInfo& op = second.ops()[i];
    SCOPED_TRACE(op.name);
    EXPECT_TRUE(op.task_seconds_from_history);
    EXPECT_EQ(op.task_seconds, report.ops[i].task_seconds_median);
    const double gb = static_cast<double>(op.memory_size) / 1e9;
    const double expected =
        gb * report.ops[i].task_seconds_median * static_cast<double>(op.num_tasks);
    EXPECT_DOUBLE_EQ(op.cost_gb_seconds, expected);
    expected_total += expected;
  }
  EXPECT_DOUBLE_EQ(second.estimated_cost_gb_seconds(), expected_total);
  const std::string summary = second.summary();
  EXPECT_NE(summary.find("GB-seconds"), std::string::npos) << summary;
  EXPECT_NE(summary.find("estimated cost"), std::string::npos) << summary;
  EXPECT_NE(summary.find("allowed_mem auto"), std::string::npos) << summary;
}

TEST(MemorySizing, AStepAboveTheLargestTierIsRefusedAtPlanning) {
  Spec spec = AutoSpec();
  spec.set_memory_tiers("100KB,200KB");
  const Array x = StoredFloat32({1000, 1000}, {500, 500}, spec,
                                [](std::size_t i) { return static_cast<float>(i); });
  try {
    (x + 1.0f).plan();
    FAIL() << "planned 1 MB blocks under a 200 KB tier";
  } catch (const MemoryBudgetError& error) {
    EXPECT_NE(std::string(error.what()).find("no budget up to the largest memory tier (200.0 kB)"),
              std::string::npos)
        << error.what();
  }
  // With a fixed allowed_mem above the largest tier the plan fits allowed_mem but no tier.
  spec.allowed_mem = 64 << 20;
  const Array fixed = StoredFloat32({1000, 1000}, {500, 500}, spec,
                                    [](std::size_t i) { return static_cast<float>(i); });
  try {
    (fixed + 1.0f).plan();
    FAIL() << "assigned a tier to a task above the largest";
  } catch (const MemoryBudgetError& error) {
    EXPECT_NE(std::string(error.what()).find("more than the largest memory tier (200.0 kB)"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace tessera
