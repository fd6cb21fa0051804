#include "budget_that_plans.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::planner {
namespace {

// A planner whose largest task needs `needs(budget)` at each budget: the choices it makes
// follow the budget, as an intermediate's disk chunks or a reduction's fan-in do.
PlanAtBudget PlannerNeeding(std::function<std::int64_t(std::int64_t)> needs,
                            std::vector<std::int64_t>* tried) {
  return [needs, tried](const Spec& trial, std::int64_t) {
    tried->push_back(trial.allowed_mem);
    const std::int64_t needed = needs(trial.allowed_mem);
    if (needed > trial.allowed_mem) {
      throw MemoryBudgetError("in op \"op-" + std::to_string(needed) + "\"; " +
                                  SmallestBudgetText(needed) + ". Raise allowed_mem.",
                              needed);
    }
    return std::shared_ptr<FinalizedPlan::State>();
  };
}

Spec SpecOf(std::int64_t allowed_mem) {
  Spec spec;
  spec.allowed_mem = allowed_mem;
  return spec;
}

MemoryBudgetError RefusalNaming(std::int64_t bytes) {
  return MemoryBudgetError(
      "in op \"reduce-1\"; " + SmallestBudgetText(bytes) + ". Raise allowed_mem.", bytes);
}

TEST(BudgetThatPlans, NamesTheBudgetAtWhichThePlanPasses) {
  std::vector<std::int64_t> tried;
  // At 50 the plan chooses otherwise and needs 80; at 80 it needs 70.
  const auto plan_at = PlannerNeeding([](std::int64_t b) { return b < 80 ? 80 : 70; }, &tried);
  try {
    ThrowNamingABudgetThatPlans(RefusalNaming(50), SpecOf(4), plan_at);
  } catch (const MemoryBudgetError& error) {
    EXPECT_EQ(error.required_allowed_mem(), 80);
    const std::string message = error.what();
    EXPECT_NE(message.find("in op \"reduce-1\""), std::string::npos) << message;
    EXPECT_NE(message.find(SmallestBudgetText(80)), std::string::npos) << message;
    EXPECT_NE(message.find("op \"op-80\" needs the most"), std::string::npos) << message;
    EXPECT_EQ(message.find(SmallestBudgetText(50)), std::string::npos) << message;
  }
  EXPECT_EQ(tried, (std::vector<std::int64_t>{50, 80}));
}

TEST(BudgetThatPlans, KeepsTheRefusalWhenItsFigurePlans) {
  std::vector<std::int64_t> tried;
  const auto plan_at = PlannerNeeding([](std::int64_t) { return 50; }, &tried);
  try {
    ThrowNamingABudgetThatPlans(RefusalNaming(50), SpecOf(4), plan_at);
  } catch (const MemoryBudgetError& error) {
    EXPECT_EQ(error.required_allowed_mem(), 50);
    EXPECT_EQ(std::string(error.what()), RefusalNaming(50).what());
  }
  EXPECT_EQ(tried, (std::vector<std::int64_t>{50}));
}

TEST(BudgetThatPlans, KeepsTheRefusalWhenNoBudgetPlansWithinTheReplans) {
  std::vector<std::int64_t> tried;
  const auto plan_at = PlannerNeeding([](std::int64_t b) { return 2 * b; }, &tried);
  try {
    ThrowNamingABudgetThatPlans(RefusalNaming(50), SpecOf(4), plan_at);
  } catch (const MemoryBudgetError& error) {
    EXPECT_EQ(error.required_allowed_mem(), 50);
  }
  EXPECT_EQ(tried.size(), static_cast<std::size_t>(kMaxBudgetReplans));
}

TEST(BudgetThatPlans, KeepsARefusalThatNamesNoFigure) {
  std::vector<std::int64_t> tried;
  const auto plan_at = PlannerNeeding([](std::int64_t) { return 1; }, &tried);
  EXPECT_THROW(ThrowNamingABudgetThatPlans(MemoryBudgetError("over total_mem"), SpecOf(4), plan_at),
               MemoryBudgetError);
  EXPECT_TRUE(tried.empty());
}

}  // namespace
}  // namespace tessera::planner
