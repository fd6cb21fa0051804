// FinalizedPlan: a plan pruned to what its outputs need, fused, projected and checked
// against allowed_mem — everything known before anything runs (API.md).
//
//   tessera::FinalizedPlan plan = tessera::Finalize({{y.node()}}, spec);  // or tessera::plan()
//   plan.max_projected_mem();      // largest task projection, reserved_mem included
//   std::cout << plan.summary();   // per op: kind, tasks, projected memory, fused members
//   plan.to_dot();                 // Graphviz
//   std::cout << plan.explain();   // the plan after each pass of the planner
//
// Finalize throws MemoryBudgetError when a task of any op projects above allowed_mem:
//   Projected blockwise memory (96) exceeds allowed_mem (60), including reserved_mem (0),
//   in op "add-3" (elementwise, 4 tasks); the smallest allowed_mem that would run it is 96
// A FinalizedPlan is run once (its ops write their outputs); copies share that state.
//
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/ndarray.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/plan/node_handle.hpp"
#include "tessera/plan/op_info.hpp"
#include "tessera/plan/plan_options.hpp"

namespace tessera {

// One array a plan produces: into memory (compute) or into Zarr (to_zarr).
struct PlanOutput {
  planner::NodePtr node;             // Array::node()
  std::optional<ZarrTarget> target;  // nullopt: an in-memory result
};

class FinalizedPlan;
namespace planner {
std::string EncodePlanRecipe(const FinalizedPlan& plan);  // plan/internal/plan_recipe.hpp
}

class FinalizedPlan {
 public:
  struct State;
  explicit FinalizedPlan(std::shared_ptr<State> state);

  std::int64_t max_projected_mem() const;
  // The largest task as the plan counts it: its projection, or history's larger
  // measurement with its margin (OpInfo::estimated_mem).
  std::int64_t max_estimated_mem() const;
  // The smallest allowed_mem under which this plan, as built (fused, its rechunk stages
  // and reduction rounds as chosen), passes the check: the largest SmallestAllowedMem of
  // its ops (at least reserved_mem + 1). Planned with allowed_mem "auto" it equals
  // spec().allowed_mem.
  std::int64_t required_allowed_mem() const;
  // Whether the spec asked for allowed_mem "auto"; spec().allowed_mem is then the size
  // the search chose, after `budget_plans()` trial plans.
  bool allowed_mem_was_auto() const;
  int budget_plans() const;
  // The sum of the ops' OpInfo::cost_gb_seconds.
  double estimated_cost_gb_seconds() const;
  // The bytes the ops read and write (decoded): the sum of OpInfo::bytes_read and
  // bytes_written, saturating. allowed_mem "auto" keeps plans that move at most 10% more
  // than the plan given all the memory.
  std::int64_t bytes_moved() const;
  std::int64_t num_tasks() const;
  const std::vector<OpInfo>& ops() const;
  const Spec& spec() const;
  std::string to_dot() const;
  // A table a person reads: per op its kind, tasks, projected memory (marked "*" where
  // history counts more), where its output goes, fused members; then a line per figure
  // that came from history, and the totals.
  std::string summary() const;
  // Lines saying where the plan exceeds a limit because its options allowed it
  // (PlanOptions::allow_over_total_mem); summary() prints them too.
  const std::vector<std::string>& warnings() const;
  // The plan after every pass of the planner (plan/pass_manager.hpp), in the order they
  // ran: "== <pass>" then the plan as that pass left it ("(unchanged)" when it changed
  // nothing that prints; "== <pass> (off)" for a pass switched off). Deterministic (no paths, no
  // times) unless `with_timings`, which adds each pass's seconds to its heading.
  std::string explain(bool with_timings = false) const;

  // For executors.
  const std::vector<std::shared_ptr<planner::ExecutableOp>>& executable_ops() const;
  // The in-memory result of output `index` (nullopt-like empty NDArray for Zarr
  // outputs), after a run. Moves it out: call once.
  NDArray TakeResult(std::size_t index);

 private:
  friend std::string planner::EncodePlanRecipe(const FinalizedPlan& plan);

  std::shared_ptr<State> state_;
};

// The smallest allowed_mem under which `op` passes the plan's check: its projection, or
// the footprint history measured (OpInfo::learned_mem) where the plan counts history.
std::int64_t SmallestAllowedMem(const OpInfo& op);

// Prunes the DAG to what `outputs` need, fuses (PlanOptions), chooses where
// intermediates live, projects every task and checks it against spec.allowed_mem.
// With allowed_mem "auto" (Spec::kAutoAllowedMem) it plans with the smallest budget
// that runs: budgets are bisected, each trial re-planning everything whose shape
// depends on the budget (fusion splits, rechunk stages, reduction fan-in, contraction
// slabs), within total_mem (and the largest memory tier when the spec lists tiers);
// the plan returned was built with allowed_mem equal to its required_allowed_mem().
// With Spec::memory_tiers, every op gets the smallest tier holding its tasks
// (OpInfo::memory_size) and a cost in GB-seconds.
// Throws InvalidArgument for an invalid spec, MemoryBudgetError as above (and when no
// budget up to total_mem or the largest tier runs the plan, or an op's tasks need more
// than the largest tier).
FinalizedPlan Finalize(const std::vector<PlanOutput>& outputs, const Spec& spec,
                       const PlanOptions& options = {});

}  // namespace tessera
