// Lowering: one stored computed node made into the ops that compute it, appended to the
// plan (PlanContext::AppendOp) as one group. One function per node kind, each in the
// file of its name; LoweringPass (lowering_pass.cpp) calls them in plan order. Internal
// to src/plan.
#pragma once

#include "plan_context.hpp"

namespace tessera::planner {

// A fused group rooted at `node` (elementwise, generators, broadcasts, map_blocks).
void LowerFusedGroup(PlanContext& context, const Node& node);
// A rechunk: its copies (stages); intermediates take RAM from what is left.
void LowerRechunk(PlanContext& context, const Node& node);
// A reduction: its rounds; round 1 computes a fused elementwise input inside its tasks.
void LowerReduce(PlanContext& context, const Node& node);
// A contraction (matmul, tensordot, ...).
void LowerContract(PlanContext& context, const Node& node);
// A gather (elements picked by an index map).
void LowerGather(PlanContext& context, const Node& node);
// A reshape.
void LowerReshape(PlanContext& context, const Node& node);

// The OpInfo of an op computing `node` alone: its name, kind, shape, chunks, dtype and
// tier (lowering_pass.cpp).
OpInfo SingleNodeInfo(const PlanContext& context, const Node& node, OpKind kind);

}  // namespace tessera::planner
