// History feeding plans back (issue 6): what a run measured changes the next plan of the
// same step, fingerprints say what "the same step" is, and a damaged history never
// stops a computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "concurrency_gauge.hpp"
#include "sanitizers.hpp"
#include "temp_dir.hpp"
#include "tessera/tessera.hpp"

namespace tessera {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr Index kRow = 256 * 1024;  // float32 elements: 1 MiB per block

Spec HistorySpec(const testing::TempDir& dir) {
  Spec spec;
  spec.allowed_mem = 100 * kMiB;
  spec.total_mem = 160 * kMiB;
  spec.max_workers = 4;
  spec.executor = "threads";
  spec.history = (dir.path() / "history.sqlite").string();
  return spec;
}

// `rows` blocks of 1 MiB each, row r holding the value r.
Array Rows(Index rows, const Spec& spec) {
  NDArray data({rows, kRow}, float32);
  auto values = data.mutable_data<float>();
  for (Index i = 0; i < static_cast<Index>(values.size()); ++i) {
    values[static_cast<std::size_t>(i)] = static_cast<float>(i / kRow);
  }
  return asarray(std::move(data), {1, kRow}, spec);
}

// A kernel that doubles its block and, declaring nothing, touches 50 MiB of scratch of
// its own while it runs; it counts how many of its calls run at once.
struct ScratchKernel {
  testing::ConcurrencyGauge* gauge;
  NDArray operator()(std::span<const NDArray> in, const BlockInfo&) const {
    gauge->Enter();
    std::vector<char> scratch(static_cast<std::size_t>(50 * kMiB));
    std::memset(scratch.data(), 1, scratch.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    NDArray out(in[0].shape(), float32);
    auto source = in[0].data<float>();
    auto target = out.mutable_data<float>();
    for (std::size_t i = 0; i < source.size(); ++i) target[i] = 2 * source[i] + scratch[i] - 1;
    gauge->Leave();
    return out;
  }
};

ComputeOptions Quiet(ExecutionReport* report = nullptr) {
  ComputeOptions options;
  options.execute.progress = ProgressMode::kNever;
  options.report = report;
  return options;
}

NDArray Same(std::span<const NDArray> in, const BlockInfo&) { return in[0]; }
NDArray AlsoSame(std::span<const NDArray> in, const BlockInfo&) { return in[0]; }

const OpInfo& OpOfKind(const FinalizedPlan& plan, const std::string& kind) {
  for (const OpInfo& info : plan.ops()) {
    if (info.kind == kind) return info;
  }
  throw std::runtime_error("no " + kind + " op in the plan:\n" + plan.summary());
}

TEST(HistoryFeedbackTest, AKernelsOwnMemoryIsLearnedAndPlansTheNextRun) {
  testing::TempDir dir("history");
  const Spec spec = HistorySpec(dir);
  testing::ConcurrencyGauge gauge;
  const ScratchKernel kernel{&gauge};

  // Run 1: the plan knows only the blocks (1 MiB in, 1 MiB out per task): 4 at once.
  const Array first = map_blocks(kernel, {Rows(8, spec)}, float32);
  const FinalizedPlan plan1 = first.plan();
  const OpInfo& op1 = OpOfKind(plan1, "map_blocks");
  EXPECT_FALSE(op1.estimate_from_history);
  EXPECT_EQ(op1.estimated_mem, op1.projected_mem);
  EXPECT_EQ(op1.concurrency, 4);
  std::vector<std::string> warnings;
  ExecutionReport report1;
  ComputeOptions options = Quiet(&report1);
  NDArray values1;
  {
    ScopedWarningHandler capture([&](const std::string& w) { warnings.push_back(w); });
    values1 = first.compute(options);
  }
  EXPECT_EQ(values1.data<float>()[3 * kRow + 5], 6.0f);
  const auto kernel_op = std::find_if(report1.ops.begin(), report1.ops.end(),
                                      [](const OpReport& r) { return r.kind == "map_blocks"; });
  ASSERT_NE(kernel_op, report1.ops.end());
  EXPECT_GE(kernel_op->unaccounted_mem_max, 49 * kMiB);
  EXPECT_LE(kernel_op->unaccounted_mem_max, 53 * kMiB * testing::kFreshPageFactor);
  EXPECT_LE(kernel_op->measured_mem_max, kernel_op->projected_mem);  // the blocks: exact
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("op \"" + kernel_op->name + "\" (map_blocks) measured"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("history keeps the figure"), std::string::npos) << warnings[0];
  EXPECT_GT(report1.history_run, 0);

  // Run 2, on other data of the same chunking: the plan counts the learned footprint
  // (x 1.25), so that total_mem 160 MiB holds 2 of these tasks at once, not 4.
  const int most_first = gauge.most();
  gauge.Reset();
  const Array second = map_blocks(kernel, {Rows(12, spec)}, float32);
  const FinalizedPlan plan2 = second.plan();
  const OpInfo& op2 = OpOfKind(plan2, "map_blocks");
  EXPECT_EQ(op2.fingerprint, op1.fingerprint);
  EXPECT_TRUE(op2.estimate_from_history);
  EXPECT_EQ(op2.learned_run, report1.history_run);
  EXPECT_EQ(op2.learned_mem, kernel_op->footprint_mem_max);
  EXPECT_EQ(op2.estimated_mem,
            static_cast<std::int64_t>(std::ceil(static_cast<double>(op2.learned_mem) * 1.25)));
  EXPECT_EQ(op2.concurrency, static_cast<int>(spec.total_mem / op2.estimated_mem));
  if (!testing::kAddressSanitizer) {
    EXPECT_EQ(op2.concurrency, 2);  // ASan's figures vary
  }
  EXPECT_EQ(plan2.required_allowed_mem(), op2.learned_mem);  // what ran, without the margin
  EXPECT_NE(plan2.summary().find(op2.name + ": from history, run " +
                                 std::to_string(report1.history_run) + " measured"),
            std::string::npos)
      << plan2.summary();
  warnings.clear();
  NDArray values2;
  {
    ScopedWarningHandler capture([&](const std::string& w) { warnings.push_back(w); });
    values2 = second.compute(Quiet());
  }
  EXPECT_EQ(values2.data<float>()[11 * kRow], 22.0f);
  EXPECT_LE(gauge.most(), op2.concurrency);
  EXPECT_GT(most_first, op2.concurrency);  // run 1 ran more of them at once
  EXPECT_TRUE(warnings.empty()) << warnings.front();

  // Under an allowed_mem between the measured footprint and that x 1.25, the step that
  // ran still plans: the margin stops at allowed_mem.
  Spec snug = spec;
  snug.allowed_mem = op2.learned_mem + kMiB;
  const FinalizedPlan snug_plan = map_blocks(kernel, {Rows(2, snug)}, float32).plan();
  EXPECT_EQ(OpOfKind(snug_plan, "map_blocks").estimated_mem, snug.allowed_mem);

  // Under an allowed_mem below the learned figure the plan is refused up front.
  Spec tight = spec;
  tight.allowed_mem = op2.projected_mem + 10 * kMiB;
  try {
    map_blocks(kernel, {Rows(2, tight)}, float32).plan();
    FAIL() << "planned under " << tight.allowed_mem;
  } catch (const MemoryBudgetError& error) {
    EXPECT_NE(std::string(error.what()).find("Memory learned from history"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("TESSERA_HISTORY=off"), std::string::npos)
        << error.what();
  }
}

TEST(HistoryFeedbackTest, FingerprintsFollowTheStepNotTheArray) {
  testing::TempDir dir("fingerprint");
  const Spec spec = HistorySpec(dir);
  const auto fingerprints = [](const Array& result) {
    std::vector<std::string> all;
    const FinalizedPlan plan = result.plan();
    for (const OpInfo& info : plan.ops()) all.push_back(info.fingerprint);
    return all;
  };
  const auto step = [](const Array& x) { return sqrt(x * 2.0f + 1.0f); };
  const auto doubled = [](std::span<const NDArray> in, const BlockInfo&) { return in[0]; };
  const auto tripled = [](std::span<const NDArray> in, const BlockInfo&) { return in[0]; };

  // Other arrays (other shapes and values) of the same chunking share fingerprints.
  const std::vector<std::string> a = fingerprints(step(Rows(4, spec)));
  EXPECT_EQ(a, fingerprints(step(Rows(9, spec))));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].size(), 16u);
  // Another chunking, dtype or function does not.
  const Array other_chunks = asarray(NDArray({4, kRow}, float32), {2, kRow}, spec);
  EXPECT_NE(a, fingerprints(step(other_chunks)));
  EXPECT_NE(a, fingerprints(sqrt(Rows(4, spec) * 2.0f - 1.0f)));
  EXPECT_NE(a, fingerprints(step(Rows(4, spec).astype(float64))));
  // Two kernels differ; one kernel on other arrays does not; a named kernel is its name.
  EXPECT_NE(fingerprints(map_blocks(doubled, {Rows(4, spec)}, float32)),
            fingerprints(map_blocks(tripled, {Rows(4, spec)}, float32)));
  EXPECT_EQ(fingerprints(map_blocks(doubled, {Rows(4, spec)}, float32)),
            fingerprints(map_blocks(doubled, {Rows(7, spec)}, float32)));
  EXPECT_EQ(fingerprints(map_blocks(doubled, {Rows(4, spec)}, float32, 0, "smooth-v1")),
            fingerprints(map_blocks(tripled, {Rows(4, spec)}, float32, 0, "smooth-v1")));
  EXPECT_NE(fingerprints(map_blocks(doubled, {Rows(4, spec)}, float32, 0, "smooth-v1")),
            fingerprints(map_blocks(doubled, {Rows(4, spec)}, float32, 0, "smooth-v2")));
  // Plain functions (one C++ type for all) are told apart by their address in the binary.
  EXPECT_NE(fingerprints(map_blocks(&Same, {Rows(4, spec)}, float32)),
            fingerprints(map_blocks(&AlsoSame, {Rows(4, spec)}, float32)));
  EXPECT_EQ(fingerprints(map_blocks(&Same, {Rows(4, spec)}, float32)),
            fingerprints(map_blocks(&Same, {Rows(6, spec)}, float32)));
}

TEST(HistoryFeedbackTest, ADamagedHistoryWarnsAndTheRunGoesOn) {
  testing::TempDir dir("damaged");
  const Spec spec = HistorySpec(dir);
  {
    std::ofstream garbage(spec.history, std::ios::binary);
    for (int i = 0; i < 512; ++i) garbage << "not a database " << i << '\n';
  }
  std::vector<std::string> warnings;
  NDArray values;
  ExecutionReport report;
  {
    ScopedWarningHandler capture([&](const std::string& w) { warnings.push_back(w); });
    values = (Rows(3, spec) + 1.0f).compute(Quiet(&report));
  }
  EXPECT_EQ(values.data<float>()[2 * kRow], 3.0f);
  EXPECT_EQ(report.history_run, 0);
  // One warning for the plan and the run together, naming the file; the file is as it was.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(spec.history), std::string::npos) << warnings[0];
  std::ifstream file(spec.history);
  const std::string content((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(content.substr(0, 16), "not a database 0");
  EXPECT_EQ(std::count(content.begin(), content.end(), '\n'), 512);
}

TEST(HistoryFeedbackTest, OrdinaryOpsMeasureNothingUnaccounted) {
  // compute() writes each block into the result array, whose pages the tasks touch
  // first; they are the caller's memory, not the tasks' own: no unaccounted memory, no
  // warning. 3 MiB of result: small pages, 256 faults per 1 MiB block.
  testing::TempDir dir("ordinary");
  Spec spec = HistorySpec(dir);
  spec.history = "off";
  std::vector<std::string> warnings;
  ExecutionReport report;
  {
    ScopedWarningHandler capture([&](const std::string& w) { warnings.push_back(w); });
    (Rows(3, spec) * 2.0f).compute(Quiet(&report));
  }
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(report.ops.size(), 1u);
  // Natively a task touches no page of its own; under ASan its allocator, shadow and
  // quarantine fault pages that vary from run to run (tests/support/task_bounds.hpp).
  if (!testing::kAddressSanitizer) {
    EXPECT_LT(report.ops[0].unaccounted_mem_max, 256 << 10);
  }
}

TEST(HistoryFeedbackTest, HistoryOffRecordsNothing) {
  testing::TempDir dir("off");
  Spec spec = HistorySpec(dir);
  spec.history = "off";
  ExecutionReport report;
  (Rows(2, spec) * 3.0f).compute(Quiet(&report));
  EXPECT_EQ(report.history_run, 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace tessera
