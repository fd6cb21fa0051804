// estimates: what the plan counts per task, concurrency, task seconds (passes.hpp).
#include "op_cost.hpp"
#include "passes.hpp"
#include "tessera/memory/internal/footprint_estimate.hpp"

namespace tessera::planner {

// What the plan counts per task: its projection, or what history measured above it
// (footprint_estimate.hpp); concurrency follows the count. Then the seconds a task
// takes (op_cost.hpp).
void EstimatePass(PlanContext& context) {
  const Spec& spec = context.spec;
  for (std::size_t i = 0; i < context.state->ops.size(); ++i) {
    OpInfo& info = context.state->ops[i].mutable_info();
    std::optional<LearnedFootprint> learned;
    if (const auto found = context.learned.find(static_cast<int>(i));
        found != context.learned.end()) {
      learned = found->second;
    }
    const FootprintEstimate estimate =
        EstimateFootprint(info.projected_mem, spec.reserved_mem, spec.allowed_mem, learned);
    info.estimated_mem = estimate.bytes;
    info.estimate_from_history = estimate.from_history;
    info.learned_run = estimate.learned_run;
    info.learned_mem =
        estimate.learned_run != 0 ? estimate.learned_task_bytes + spec.reserved_mem : 0;
    info.concurrency = context.Concurrency(info.estimated_mem);
    EstimateTaskSeconds(info, spec, learned);
  }
}

}  // namespace tessera::planner
