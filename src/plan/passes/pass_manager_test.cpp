// The pass manager: passes switched off by name (options and TESSERA_DISABLE_PASSES),
// required passes refused, the verifier catching a plan a pass broke, explain() listing
// every pass.
#include "pass_manager.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "scoped_environment.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/finalized_plan.hpp"

namespace tessera::planner {
namespace {

// TESSERA_DISABLE_PASSES as a test sets it (unset for nullopt), then what the suite ran
// with (a configuration rerun may set it).
class ScopedDisabledPasses : public testing::ScopedEnvironment {
 public:
  explicit ScopedDisabledPasses(const std::optional<std::string>& value)
      : ScopedEnvironment("TESSERA_DISABLE_PASSES", value) {}
};

Spec SmallSpec() {
  Spec spec;
  spec.allowed_mem = 1 << 20;
  spec.total_mem = std::int64_t{1} << 30;
  return spec;
}

// (x + 1) * 2 over a 4 x 4 float64 array in 2 x 2 blocks.
NodePtr SmallChain() {
  NDArray values({4, 4}, float64);
  const NodePtr x = MakeInMemory(values, {2, 2});
  return MakeBinaryWithScalar("multiply", MakeBinaryWithScalar("add", x, 1.0, false), 2.0, false);
}

std::string PlanError(const PlanOptions& options) {
  try {
    Finalize({PlanOutput{SmallChain(), std::nullopt}}, SmallSpec(), options);
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "";
}

constexpr const char* kMayBeOff =
    "the passes that may be off: rechunk_of_rechunk, power_by_constant, fusion, fusion_split, "
    "tiers, history";

TEST(PassManagerTest, ReadsDisabledPassesFromOptionsFuseAndTheEnvironment) {
  const ScopedDisabledPasses variable(" tiers,history ,,");
  PlanOptions options;
  options.fuse = false;
  options.disabled_passes = {"power_by_constant", "tiers"};
  EXPECT_EQ(PassManager().DisabledPasses(options),
            (std::vector<std::string>{"power_by_constant", "tiers", "fusion", "history"}));
}

TEST(PassManagerTest, RefusesUnknownPassesAndPassesThatCannotBeOff) {
  const ScopedDisabledPasses variable(std::nullopt);
  PlanOptions unknown;
  unknown.disabled_passes = {"fuse"};
  const std::string unknown_error = PlanError(unknown);
  EXPECT_NE(unknown_error.find("no pass is named \"fuse\""), std::string::npos) << unknown_error;
  EXPECT_NE(unknown_error.find(kMayBeOff), std::string::npos) << unknown_error;
  for (const char* required : {"prune", "boundaries", "lowering", "memory_check"}) {
    PlanOptions options;
    options.disabled_passes = {required};
    const std::string error = PlanError(options);
    EXPECT_NE(error.find("pass \"" + std::string(required) + "\" cannot be off"), std::string::npos)
        << error;
    EXPECT_NE(error.find(kMayBeOff), std::string::npos) << error;
  }
  const ScopedDisabledPasses lowering("lowering");
  EXPECT_NE(PlanError({}).find("pass \"lowering\" cannot be off"), std::string::npos);
}

// What the verifier says about the plan `breaker` leaves after pass `after`.
std::string VerifierError(std::string_view after, void (*breaker)(PlanContext&)) {
  PlanContext context({PlanOutput{SmallChain(), std::nullopt}}, SmallSpec(), {}, nullptr);
  PassManager passes;
  passes.InsertAfter(after, PlanPass{"breaker", true, breaker});
  try {
    passes.Run(context);
  } catch (const std::logic_error& error) {
    return error.what();
  }
  return "";
}

TEST(PassManagerTest, VerifierCatchesAPlanAPassBroke) {
  const ScopedDisabledPasses variable(std::nullopt);
  // A logical plan whose source is no longer stored.
  const std::string unstored = VerifierError("boundaries", [](PlanContext& context) {
    for (const NodePtr& node : context.logical.order) {
      if (IsSource(node->kind())) context.logical.boundary.erase(node.get());
    }
  });
  EXPECT_NE(unstored.find("plan verifier, after pass \"breaker\": source asarray-"),
            std::string::npos)
      << unstored;
  EXPECT_NE(unstored.find("is not marked stored"), std::string::npos) << unstored;
  // A node reading a node planned after it.
  const std::string reordered = VerifierError("prune", [](PlanContext& context) {
    std::swap(context.logical.order.front(), context.logical.order.back());
  });
  EXPECT_NE(reordered.find("which is not planned before it"), std::string::npos) << reordered;
  // An op reading an op planned after it.
  const std::string forward = VerifierError("lowering", [](PlanContext& context) {
    context.state->ops.front().mutable_info().inputs = {3};
  });
  EXPECT_NE(forward.find("op #0 multiply-"), std::string::npos) << forward;
  EXPECT_NE(forward.find("reads op #3, which is not planned before it"), std::string::npos)
      << forward;
  // An op counting more than allowed_mem once the memory check has passed.
  const std::string over = VerifierError("memory_check", [](PlanContext& context) {
    context.state->ops.front().mutable_info().estimated_mem = context.spec.allowed_mem + 1;
  });
  EXPECT_NE(over.find("above allowed_mem 1048576, after the memory check"), std::string::npos)
      << over;
  // The same pass, harmless, leaves a plan the verifier accepts.
  EXPECT_EQ(VerifierError("memory_check", [](PlanContext&) {}), "");
}

TEST(PassManagerTest, ExplainShowsThePlanAfterEveryPassInOrder) {
  const ScopedDisabledPasses variable(std::nullopt);
  PlanOptions options;
  options.disabled_passes = {"history"};
  const FinalizedPlan plan =
      Finalize({PlanOutput{SmallChain(), std::nullopt}}, SmallSpec(), options);
  const std::string explain = plan.explain();
  std::size_t at = 0;
  for (const PlanPass& pass : PassManager::StandardPasses()) {
    const std::string heading =
        "== " + std::string(pass.name) + (pass.name == "history" ? " (off)\n" : "\n");
    const std::size_t found = explain.find(heading, at);
    ASSERT_NE(found, std::string::npos) << heading << " after " << at << " in\n" << explain;
    at = found + heading.size();
  }
  EXPECT_EQ(explain.find(" s)"), std::string::npos);  // no times unless asked
  EXPECT_NE(plan.explain(/*with_timings=*/true).find("== prune ("), std::string::npos);
  // Unfused, then fused: the add is computed inside the multiply's task.
  const std::string after_boundaries = explain.substr(explain.find("== boundaries\n"));
  EXPECT_NE(after_boundaries.find("[stored"), std::string::npos);
  EXPECT_NE(explain.substr(explain.find("== fusion\n")).find("[fused]"), std::string::npos);
}

}  // namespace
}  // namespace tessera::planner
