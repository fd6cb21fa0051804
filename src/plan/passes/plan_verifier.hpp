// The plan's invariants, checked by the pass manager after every pass. A violation is a
// bug of a pass, not of the user's input: it throws std::logic_error naming the pass.
// Internal to src/plan.
//
// Logical plan: every node once, after its inputs; chunks one per dimension and >= 1;
// elementwise nodes read inputs of their own shape (broadcasts excepted), binary ops
// operands of one dtype, a rechunk its own shape and dtype; every output and source
// stored once the boundaries are chosen.
// Physical plan (once lowered): every op reads only ops before it; its OpInfo agrees with
// its output's tier and with the node it computes (shape, dtype); its group lists it;
// every output has its op; after the memory check, every op counts at most allowed_mem
// per task.
#pragma once

#include <string_view>

#include "plan_context.hpp"

namespace tessera::planner {

void VerifyPlan(const PlanContext& context, std::string_view after_pass, bool memory_checked);

}  // namespace tessera::planner
