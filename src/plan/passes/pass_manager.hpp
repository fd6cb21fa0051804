// The planner as named passes under one manager, in the manner of DuckDB's optimizer:
// each pass is one function in a file of its own (passes.hpp lists them); the manager
// runs them in order, skips those switched off, times each, verifies the plan after each
// (plan_verifier.hpp) and records the plan as each left it (FinalizedPlan::explain).
// Internal to src/plan.
//
//   PlanContext context(outputs, spec, options, history);
//   PassManager().Run(context);                  // throws what a pass throws
//   std::shared_ptr<FinalizedPlan::State> plan = context.state;   // sealed
//
// Passes are switched off by name through PlanOptions::disabled_passes, PlanOptions::fuse
// (false switches off "fusion") and the environment variable TESSERA_DISABLE_PASSES
// (names separated by commas: how test suites rerun under configurations). Naming a
// pass that does not exist, or one that cannot be off, is an InvalidArgument that lists
// the passes that may be off.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan_context.hpp"

namespace tessera::planner {

struct PlanPass {
  std::string_view name;
  // False for the passes a plan cannot be made without (lowering, the memory check...).
  bool may_be_off = true;
  void (*run)(PlanContext& context) = nullptr;
};

class PassManager {
 public:
  // The planner's passes, in the order they run.
  static const std::vector<PlanPass>& StandardPasses();

  explicit PassManager(std::vector<PlanPass> passes = StandardPasses());

  // For tests: runs `pass` right after the pass named `after` (which must exist).
  void InsertAfter(std::string_view after, PlanPass pass);

  // The passes `options` and TESSERA_DISABLE_PASSES switch off. InvalidArgument for an
  // unknown name or a pass that cannot be off.
  std::vector<std::string> DisabledPasses(const PlanOptions& options) const;

  // Runs every pass not switched off on `context`, verifying the plan after each, then
  // seals context.state (FinalizedPlan::State::Seal). Records each pass in
  // context.state->passes. A failed verification throws std::logic_error naming the pass.
  void Run(PlanContext& context) const;

 private:
  std::vector<PlanPass> passes_;
};

}  // namespace tessera::planner
