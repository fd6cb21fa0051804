// memory_check: the plan's promise, checked before anything runs (passes.hpp).
#include <algorithm>
#include <limits>

#include "budget_text.hpp"
#include "passes.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// a + b for non-negative byte counts, capped at the largest int64 instead of overflowing.
std::int64_t AddCapped(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max()
                                                          : a + b;
}

// A forced RAM tier (PlanOptions::intermediate_tier kMemory) must fit what total_mem
// leaves for intermediates, as the automatic choice does; the sum of every RAM
// intermediate is counted, as if all were held at once.
void CheckForcedMemoryTier(PlanContext& context) {
  const PlanOptions& options = context.options;
  if (options.intermediate_tier != Tier::kMemory) return;
  std::int64_t in_ram = 0;
  for (const PlannedOp& planned : context.state->ops) {
    const OpInfo& info = planned.info();
    if (info.tier != Tier::kMemory) continue;
    in_ram = AddCapped(in_ram, CheckedMul(ShapeSize(info.shape), info.dtype.itemsize()));
  }
  // Compared with total_mem less reserved_mem, not with what the running tasks leave:
  // the allowed_mem auto search plans with budgets up to total_mem, where tasks alone
  // would leave nothing, and must still find the budgets where the intermediates fit.
  const std::int64_t total = context.spec.effective_total_mem();
  const std::int64_t budget = std::max<std::int64_t>(total - context.spec.reserved_mem, 0);
  if (in_ram <= budget) return;
  const std::string what = "intermediates forced into memory hold " + format_bytes(in_ram) + " (" +
                           std::to_string(in_ram) + " bytes), more than the " +
                           format_bytes(budget) + " total_mem " + format_bytes(total) +
                           " leaves beside reserved_mem, before any task runs";
  if (options.allow_over_total_mem) {
    context.state->warnings.push_back(
        what + "; allowed by allow_over_total_mem, the run may use about " +
        format_bytes(AddCapped(total, in_ram - budget)) + ", more than total_mem");
    return;
  }
  throw MemoryBudgetError(what +
                          ". Let Tessera choose (intermediate tier auto), put them on "
                          "disk, or raise total_mem to at least " +
                          format_bytes(AddCapped(total, in_ram - budget)) +
                          "; to run over total_mem anyway, set allow_over_total_mem "
                          "(--allow-over-total-mem)");
}

// Refuses the plan when a task of any op is counted above allowed_mem. Of the ops over
// the budget it names the one that needs the most (the first in plan order among equals),
// so that "the smallest allowed_mem that would run it" is also the smallest that runs the
// plan as built: naming the first op over budget would name a budget another op still
// exceeds.
void CheckTasks(const PlanContext& context) {
  const Spec& spec = context.spec;
  const PlannedOp* refused = nullptr;
  for (const PlannedOp& planned : context.state->ops) {
    if (planned.info().estimated_mem <= spec.allowed_mem) continue;
    if (refused == nullptr ||
        SmallestAllowedMem(planned.info()) > SmallestAllowedMem(refused->info())) {
      refused = &planned;
    }
  }
  if (refused != nullptr) {
    const PlannedOp& planned = *refused;
    const OpInfo& info = planned.info();
    const std::string block = planned.op->DescribeTask(planned.worst_task);
    const std::string op = "in op \"" + info.name + "\" (" + std::string(OpKindName(info.kind)) +
                           ", " + std::to_string(info.num_tasks) +
                           (info.num_tasks == 1 ? " task" : " tasks") + ", largest at " + block +
                           ")";
    std::string message;
    if (info.estimate_from_history) {
      message = "Memory learned from history (" + std::to_string(info.learned_mem) +
                ") exceeds allowed_mem (" + std::to_string(spec.allowed_mem) +
                "), including reserved_mem (" + std::to_string(spec.reserved_mem) + "), " + op +
                ": run " + std::to_string(info.learned_run) + " measured " +
                format_bytes(info.learned_mem) + " per task against a projection of " +
                format_bytes(info.projected_mem) + "; " +
                SmallestBudgetText(SmallestAllowedMem(info));
    } else {
      message = "Projected blockwise memory (" + std::to_string(info.projected_mem) +
                ") exceeds allowed_mem (" + std::to_string(spec.allowed_mem) +
                "), including reserved_mem (" + std::to_string(spec.reserved_mem) + "), " + op +
                "; " + SmallestBudgetText(SmallestAllowedMem(info));
    }
    message += info.estimate_from_history
                   ? ". Raise allowed_mem, make the step allocate less, or plan without "
                     "history (Spec::history \"off\" or TESSERA_HISTORY=off)."
                   : ". Raise allowed_mem or use smaller chunks.";
    throw MemoryBudgetError(message, SmallestAllowedMem(info));
  }
}

}  // namespace

void MemoryCheckPass(PlanContext& context) {
  CheckForcedMemoryTier(context);
  CheckTasks(context);
}

}  // namespace tessera::planner
