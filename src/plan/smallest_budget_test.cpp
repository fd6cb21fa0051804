// PlanWithSmallestBudget against planners whose choices follow the budget, with the
// smallest budget known by construction.
#include "smallest_budget.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

Spec AutoSpec(std::int64_t total_mem, std::int64_t reserved_mem = 0) {
  Spec spec;
  spec.allowed_mem = Spec::kAutoAllowedMem;
  spec.total_mem = total_mem;
  spec.reserved_mem = reserved_mem;
  return spec;
}

// A plan of one op whose task projects `projected`, built at `trial`.
std::shared_ptr<FinalizedPlan::State> PlanOfOneOp(const Spec& trial, std::int64_t projected,
                                                  std::int64_t choice_budget = 0,
                                                  std::int64_t bytes_read = 0) {
  auto state = std::make_shared<FinalizedPlan::State>();
  state->spec = trial;
  state->choice_budget = choice_budget != 0 ? choice_budget : trial.allowed_mem;
  OpInfo info;
  info.name = "op";
  info.projected_mem = projected;
  info.estimated_mem = projected;
  info.bytes_read = bytes_read;
  state->infos.push_back(info);
  return state;
}

// Like a reduction's fan-in: the planner fills the budget it is given in steps of
// `step` bytes, and nothing below `minimum` plans.
PlanAtBudget GreedyPlanner(std::int64_t minimum, std::int64_t step, int* calls = nullptr) {
  return [=](const Spec& trial, std::int64_t) {
    if (calls != nullptr) ++*calls;
    if (trial.allowed_mem < minimum) {
      throw MemoryBudgetError("needs " + std::to_string(minimum));
    }
    const std::int64_t filled = minimum + (trial.allowed_mem - minimum) / step * step;
    return PlanOfOneOp(trial, filled);
  };
}

TEST(SmallestBudget, FindsTheSmallestBudgetOfAPlannerThatFillsWhatItIsGiven) {
  int calls = 0;
  const auto state =
      PlanWithSmallestBudget(AutoSpec(1'000'000'000), GreedyPlanner(123'457, 1'000, &calls));
  // At the ceiling the plan requires ~1 GB; only bisection finds 123'457.
  EXPECT_EQ(state->spec.allowed_mem, 123'457);
  EXPECT_EQ(FinalizedPlan(state).required_allowed_mem(), 123'457);
  EXPECT_TRUE(state->allowed_mem_was_auto);
  EXPECT_EQ(state->budget_plans, calls);
  EXPECT_LE(calls, 60);  // a scan by x0.75 and a bisection over 1 GB, not a byte-by-byte search
}

TEST(SmallestBudget, AFixedRequirementIsFoundExactly) {
  int calls = 0;
  const PlanAtBudget fixed = [&](const Spec& trial, std::int64_t) {
    ++calls;
    if (trial.allowed_mem < 5'000) throw MemoryBudgetError("too small");
    return PlanOfOneOp(trial, 5'000);
  };
  const auto state = PlanWithSmallestBudget(AutoSpec(1'000'000), fixed);
  EXPECT_EQ(state->spec.allowed_mem, 5'000);
  EXPECT_EQ(FinalizedPlan(state).required_allowed_mem(), 5'000);
  // The ceiling, then bisection below 5'000 (each trial fails), then the plan at 5'000.
  EXPECT_EQ(state->budget_plans, calls);
}

TEST(SmallestBudget, ReservedMemIsTheFloor) {
  const auto state = PlanWithSmallestBudget(AutoSpec(1'000'000, 700), GreedyPlanner(650, 10));
  // Every budget must exceed reserved_mem, whatever the planner would accept.
  EXPECT_EQ(state->spec.allowed_mem, 701);
}

TEST(SmallestBudget, NothingUpToTotalMemRunsThePlan) {
  try {
    PlanWithSmallestBudget(AutoSpec(1'000'000), GreedyPlanner(2'000'000, 1));
    FAIL() << "planned above total_mem";
  } catch (const MemoryBudgetError& error) {
    EXPECT_EQ(std::string(error.what()),
              "allowed_mem \"auto\": no budget up to total_mem (1.0 MB) runs this plan. At that "
              "budget: needs 2000000");
  }
}

TEST(SmallestBudget, WithTiersTheBudgetIsTheSmallestTierThatPlans) {
  Spec spec = AutoSpec(10'000'000);
  spec.memory_tiers = {1'000'000, 2'000'000, 3'000'000, 4'000'000, 20'000'000};
  int calls = 0;
  const auto state = PlanWithSmallestBudget(spec, GreedyPlanner(1'500'000, 1, &calls));
  // 20 MB is above total_mem: the ceiling is 4 MB. 2 MB is the smallest tier that plans.
  EXPECT_EQ(state->spec.allowed_mem, 2'000'000);
  EXPECT_EQ(FinalizedPlan(state).required_allowed_mem(), 2'000'000);  // greedy: fills it
  EXPECT_EQ(calls, 3);                                                // 4 MB, then 2 MB and 1 MB
  EXPECT_EQ(state->budget_plans, 3);
  try {
    PlanWithSmallestBudget(spec, GreedyPlanner(5'000'000, 1));
    FAIL() << "planned above the largest tier within total_mem";
  } catch (const MemoryBudgetError& error) {
    EXPECT_NE(std::string(error.what()).find("no budget up to the largest memory tier (4.0 MB)"),
              std::string::npos)
        << error.what();
  }
  spec.memory_tiers = {20'000'000};
  EXPECT_THROW(PlanWithSmallestBudget(spec, GreedyPlanner(1, 1)), InvalidArgument);
}

TEST(SmallestBudget, OtherErrorsPropagate) {
  const PlanAtBudget broken = [](const Spec&,
                                 std::int64_t) -> std::shared_ptr<FinalizedPlan::State> {
    throw InvalidArgument("bad input");
  };
  EXPECT_THROW(PlanWithSmallestBudget(AutoSpec(1'000'000), broken), InvalidArgument);
}

TEST(SmallestBudget, APlanThatNeedsLessThanItWasGivenIsRebuiltAtItsRequirement) {
  // Plans at any budget >= 4'000, requiring 4'000 only when given exactly 4'000 (a
  // planner that spends spare budget on bigger tasks): the result is built at 4'000.
  const PlanAtBudget spends = [](const Spec& trial, std::int64_t) {
    if (trial.allowed_mem < 4'000) throw MemoryBudgetError("too small");
    return PlanOfOneOp(trial, trial.allowed_mem == 4'000 ? 4'000 : trial.allowed_mem - 1);
  };
  const auto state = PlanWithSmallestBudget(AutoSpec(100'000), spends);
  EXPECT_EQ(state->spec.allowed_mem, 4'000);
  EXPECT_EQ(FinalizedPlan(state).required_allowed_mem(), 4'000);
}

TEST(SmallestBudget, ChoicesThatNeedLessThanTheirBudgetAreKeptAndCheckedAtTheirNeed) {
  // Like the rechunk model: given 10'000 or more it finds tasks of 2'500; given less than
  // 10'000 it finds nothing. Planned at 2'500 with the choices made for 10'000, it fits.
  std::int64_t kept_choices = 0;
  const PlanAtBudget model = [&](const Spec& trial, std::int64_t choice_budget) {
    const std::int64_t choices = choice_budget != 0 ? choice_budget : trial.allowed_mem;
    if (choices < 10'000 || trial.allowed_mem < 2'500) throw MemoryBudgetError("no layout");
    kept_choices = choices;
    return PlanOfOneOp(trial, 2'500, choices);
  };
  const auto state = PlanWithSmallestBudget(AutoSpec(1'000'000), model);
  EXPECT_EQ(state->spec.allowed_mem, 2'500);
  EXPECT_EQ(FinalizedPlan(state).required_allowed_mem(), 2'500);
  EXPECT_GE(state->choice_budget, 10'000);
  EXPECT_EQ(kept_choices, state->choice_budget);
}

TEST(SmallestBudget, ABudgetWhosePlanMovesFarMoreBytesIsNotChosen) {
  // Like a rechunk: any budget from 1'000 plans, but below 50'000 each source chunk is
  // read in pieces and decoded once per piece: 1 GB moved instead of 10 MB.
  const PlanAtBudget rechunk = [](const Spec& trial, std::int64_t) {
    if (trial.allowed_mem < 1'000) throw MemoryBudgetError("too small");
    const bool whole = trial.allowed_mem >= 50'000;
    return PlanOfOneOp(trial, whole ? 50'000 : 1'000, 0, whole ? 10'000'000 : 1'000'000'000);
  };
  const auto state = PlanWithSmallestBudget(AutoSpec(1'000'000), rechunk);
  EXPECT_EQ(state->spec.allowed_mem, 50'000);
  EXPECT_EQ(BytesMoved(*state), 10'000'000);
  // Within kAutoIoSlack of the ceiling's plan, the smaller budget wins.
  const PlanAtBudget close = [](const Spec& trial, std::int64_t) {
    if (trial.allowed_mem < 1'000) throw MemoryBudgetError("too small");
    const bool whole = trial.allowed_mem >= 50'000;
    return PlanOfOneOp(trial, whole ? 50'000 : 1'000, 0, whole ? 10'000'000 : 10'900'000);
  };
  EXPECT_EQ(PlanWithSmallestBudget(AutoSpec(1'000'000), close)->spec.allowed_mem, 1'000);
}

}  // namespace
}  // namespace tessera::planner
