// Every planner pass that may be off, switched off alone and all together: the results
// stay those computed by hand, while the plans show what the pass did.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "scoped_environment.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/reduction.hpp"

namespace tessera {
namespace {

// The passes PlanOptions::disabled_passes may name (plan/passes/pass_manager.cpp).
const std::vector<std::string> kOptionalPasses = {
    "rechunk_of_rechunk", "power_by_constant", "fusion", "fusion_split", "tiers", "history"};

Spec TestSpec() {
  Spec spec;
  spec.allowed_mem = 1 << 20;
  spec.total_mem = std::int64_t{1} << 30;
  spec.max_workers = 2;
  return spec;
}

// x[i] = 1 + i / 4 over 12 x 10 float64 in (4, 5) chunks.
NDArray Values() {
  NDArray values({12, 10}, float64);
  auto data = values.mutable_data<double>();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = 1 + static_cast<double>(i) / 4;
  return values;
}

// x ** 2 + x ** 0.5 + x ** -1 + x ** 1 on x rechunked twice, and its sum over axis 0.
struct Computation {
  Array y;
  Array column_sums;
};

Computation Build() {
  const Array x = asarray(Values(), {4, 5}, TestSpec()).rechunk({3, 10}).rechunk({6, 2});
  const Array y = pow(x, 2) + pow(x, 0.5) + pow(x, -1) + pow(x, 1);
  return {y, sum(y, 0)};
}

double Expected(double x) { return x * x + std::sqrt(x) + 1 / x + x; }

void ExpectHandComputed(const std::vector<NDArray>& results) {
  const auto y = results[0].data<double>();
  const auto sums = results[1].data<double>();
  ASSERT_EQ(y.size(), 120u);
  ASSERT_EQ(sums.size(), 10u);
  std::vector<double> column(10, 0.0);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double expected = Expected(1 + static_cast<double>(i) / 4);
    EXPECT_NEAR(y[i], expected, 1e-12 * expected) << "element " << i;
    column[i % 10] += expected;
  }
  for (std::size_t c = 0; c < 10; ++c) EXPECT_NEAR(sums[c], column[c], 1e-11 * column[c]);
}

std::vector<NDArray> ComputeWithout(const std::vector<std::string>& off, std::size_t* ops) {
  const Computation computation = Build();
  ComputeOptions options;
  options.plan.disabled_passes = off;
  *ops = plan({computation.y, computation.column_sums}, options.plan).ops().size();
  return compute({computation.y, computation.column_sums}, options);
}

TEST(PlanPassesTest, EveryPassOffAloneOrAllTogetherKeepsTheResults) {
  const testing::ScopedEnvironment passes("TESSERA_DISABLE_PASSES", std::nullopt);
  std::size_t all_on = 0;
  ExpectHandComputed(ComputeWithout({}, &all_on));
  for (const std::string& pass : kOptionalPasses) {
    SCOPED_TRACE(pass);
    std::size_t ops = 0;
    ExpectHandComputed(ComputeWithout({pass}, &ops));
    // Without the pass the plan has the ops it saved: two rechunks instead of one, the
    // elementwise chain's nodes stored one by one.
    if (pass == "rechunk_of_rechunk" || pass == "fusion") {
      EXPECT_GT(ops, all_on);
    }
  }
  std::size_t ops = 0;
  ExpectHandComputed(ComputeWithout(kOptionalPasses, &ops));
  EXPECT_GT(ops, all_on);
}

TEST(PlanPassesTest, PowerByConstantRewritesOnlyWhenOn) {
  const testing::ScopedEnvironment passes("TESSERA_DISABLE_PASSES", std::nullopt);
  const Array x = asarray(Values(), {4, 5}, TestSpec());
  PlanOptions unfused;
  unfused.disabled_passes = {"fusion"};
  const std::string fast = pow(x, 2).plan(unfused).summary();
  EXPECT_NE(fast.find("square-"), std::string::npos) << fast;
  unfused.disabled_passes.push_back("power_by_constant");
  const std::string slow = pow(x, 2).plan(unfused).summary();
  EXPECT_EQ(slow.find("square-"), std::string::npos) << slow;
  EXPECT_NE(slow.find("pow-"), std::string::npos) << slow;
}

}  // namespace
}  // namespace tessera
