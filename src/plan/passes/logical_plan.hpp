// LogicalPlan: what the optimisation passes work on — the nodes the requested outputs
// need, in dependency order, which of them are stored (the fusion boundaries) and where
// each stored node's output lives. Plain data; passes change it (pass_manager.hpp).
// Internal to src/plan.
//
//   LogicalPlan plan = MakeLogicalPlan(outputs);   // the "prune" pass
//   ReplaceNodes(plan, {{old_node, new_node}});    // a rewrite: readers re-pointed
//   NodeSet group = Members(plan, *root);          // what root's task computes
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tessera/plan/finalized_plan.hpp"
#include "tessera/plan/internal/executable_op.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::planner {

using NodeSet = std::unordered_set<const Node*>;

struct LogicalPlan {
  std::vector<PlanOutput> outputs;  // as requested; a source output is copied (astype)
  std::vector<NodePtr> order;       // every node the outputs need, inputs first
  std::unordered_map<const Node*, NodePtr> by_address;
  std::unordered_map<const Node*, NodeSet> consumers;
  // The stored nodes: sources, outputs and the computed nodes whose output an op writes
  // (every other computed node is computed inside its reader's task). Empty until the
  // "boundaries" pass.
  NodeSet boundary;
  // Where each computed stored node's output lives (the "tiers" pass); a node missing
  // here goes where PlanOptions::intermediate_tier forces, or to disk.
  std::unordered_map<const Node*, Tier> tiers;
};

// Every node `outputs` need, inputs before the nodes that read them.
std::vector<NodePtr> TopologicalOrder(const std::vector<NodePtr>& outputs);

// The logical plan of `outputs`, pruned to what they need. InvalidArgument for an empty
// output.
LogicalPlan MakeLogicalPlan(std::vector<PlanOutput> outputs);

// Puts each replacement (value) in place of its node (key) wherever the plan reads it:
// readers are rebuilt with their names kept (Node::WithInputs), outputs re-pointed, and
// order and consumers made again. Boundaries and tiers of rebuilt nodes follow them.
void ReplaceNodes(LogicalPlan& plan, const std::unordered_map<const Node*, NodePtr>& replaced);

// Does `consumer` read `input` block by block on the same grid (so `input` can be
// computed inside the consumer's task)?
bool ReadsAligned(const Node& consumer, const Node& input);

// The group computed by `root`'s tasks: root and the non-boundary nodes it reaches.
NodeSet Members(const LogicalPlan& plan, const Node& root);

bool IsComputedBoundary(const LogicalPlan& plan, const Node& node);

// The stored nodes as ChooseBoundaries finds them: sources, outputs, nodes read by
// several ops or on another grid, ops planned alone; with `fuse` false, every computed
// node too (generators excepted: they are recomputed by their readers).
NodeSet ChooseBoundaries(const LogicalPlan& plan, bool fuse);

// One line per node, in order: name, op, shape, chunks, dtype, inputs, and whether it
// is stored (and where). Names as the nodes carry them. At most kDescribedNodes lines:
// explain() keeps one description per pass, and a graph of 10^5 nodes must not make
// every plan hold megabytes of text.
inline constexpr std::size_t kDescribedNodes = 500;
std::string DescribeLogicalPlan(const LogicalPlan& plan);

}  // namespace tessera::planner
