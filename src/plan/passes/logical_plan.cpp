#include "logical_plan.hpp"

#include <sstream>
#include <utility>

#include "node_detail.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// order, by_address and consumers from the outputs.
void IndexPlan(LogicalPlan& plan) {
  for (PlanOutput& output : plan.outputs) {
    // A source asked for as an output is copied by an op of its own.
    if (IsSource(output.node->kind())) output.node = MakeAsType(output.node, output.node->dtype());
  }
  std::vector<NodePtr> roots;
  for (const PlanOutput& output : plan.outputs) roots.push_back(output.node);
  plan.order = TopologicalOrder(roots);
  plan.by_address.clear();
  plan.consumers.clear();
  for (const NodePtr& node : plan.order) {
    plan.by_address[node.get()] = node;
    for (const NodePtr& input : node->inputs()) plan.consumers[input.get()].insert(node.get());
  }
}

std::string Join(const std::vector<NodePtr>& nodes) {
  std::string text;
  for (const NodePtr& node : nodes) text += (text.empty() ? "" : ", ") + node->name();
  return text;
}

}  // namespace

std::vector<NodePtr> TopologicalOrder(const std::vector<NodePtr>& outputs) {
  std::vector<NodePtr> order;
  NodeSet visited;
  // Iterative DFS: deep chains must not overflow the stack.
  std::vector<std::pair<NodePtr, std::size_t>> stack;
  for (const NodePtr& output : outputs) {
    if (visited.contains(output.get())) continue;
    stack.emplace_back(output, 0);
    visited.insert(output.get());
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs().size()) {
        const NodePtr& input = node->inputs()[next++];
        if (visited.insert(input.get()).second) stack.emplace_back(input, 0);
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

LogicalPlan MakeLogicalPlan(std::vector<PlanOutput> outputs) {
  LogicalPlan plan;
  for (const PlanOutput& output : outputs) {
    if (output.node == nullptr) throw InvalidArgument("plan: an output array is empty");
  }
  plan.outputs = std::move(outputs);
  IndexPlan(plan);
  return plan;
}

void ReplaceNodes(LogicalPlan& plan, const std::unordered_map<const Node*, NodePtr>& replaced) {
  if (replaced.empty()) return;
  std::unordered_map<const Node*, NodePtr> now;  // what each node of the plan became
  // `node` reading what its inputs became (its inputs are mapped already).
  const auto remap = [&](const NodePtr& node) {
    std::vector<NodePtr> inputs;
    bool changed = false;
    for (const NodePtr& input : node->inputs()) {
      const auto found = now.find(input.get());
      inputs.push_back(found != now.end() ? found->second : input);
      changed = changed || inputs.back() != input;
    }
    return changed ? node->WithInputs(std::move(inputs)) : node;
  };
  for (const NodePtr& node : plan.order) {
    const auto replacement = replaced.find(node.get());
    if (replacement == replaced.end()) {
      now[node.get()] = remap(node);
      continue;
    }
    for (const NodePtr& part : TopologicalOrder({replacement->second})) {
      if (!now.contains(part.get())) now[part.get()] = remap(part);
    }
    now[node.get()] = now.at(replacement->second.get());
  }
  for (PlanOutput& output : plan.outputs) output.node = now.at(output.node.get());
  NodeSet boundary;
  std::unordered_map<const Node*, Tier> tiers;
  for (const auto& [old_node, new_node] : now) {
    if (plan.boundary.contains(old_node)) boundary.insert(new_node.get());
    if (const auto tier = plan.tiers.find(old_node); tier != plan.tiers.end()) {
      tiers[new_node.get()] = tier->second;
    }
  }
  plan.boundary = std::move(boundary);
  plan.tiers = std::move(tiers);
  IndexPlan(plan);
}

bool ReadsAligned(const Node& consumer, const Node& input) {
  // A reduction computes an elementwise input over its regions (FusedInputOf); other
  // ops planned alone read across chunks from storage.
  if (consumer.kind() == NodeKind::kReduce) return IsElementwise(input.kind());
  if (IsPlannedAlone(consumer.kind())) return false;
  if (IsGenerator(input.kind())) return true;  // computed from the index, any grid
  if (input.kind() == NodeKind::kBroadcast && consumer.kind() != NodeKind::kBroadcast &&
      consumer.shape() == input.shape()) {
    // A broadcast is evaluated over whatever region its reader asks for; only the
    // dimensions its own input spans must line up.
    for (int d = 0; d < input.inputs().front()->ndim(); ++d) {
      const std::size_t out = BroadcastDim(input, d);
      if (!IsStretched(input, d) && input.chunks()[out] != consumer.chunks()[out]) return false;
    }
    return true;
  }
  if (consumer.kind() != NodeKind::kBroadcast) return consumer.chunks() == input.chunks();
  for (int d = 0; d < input.ndim(); ++d) {
    const std::size_t out = BroadcastDim(consumer, d);
    if (!IsStretched(consumer, d) &&
        input.chunks()[static_cast<std::size_t>(d)] != consumer.chunks()[out]) {
      return false;
    }
  }
  return true;
}

NodeSet Members(const LogicalPlan& plan, const Node& root) {
  NodeSet members{&root};
  std::vector<const Node*> stack{&root};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const NodePtr& input : node->inputs()) {
      if (plan.boundary.contains(input.get()) || members.contains(input.get())) continue;
      members.insert(input.get());
      stack.push_back(input.get());
    }
  }
  return members;
}

bool IsComputedBoundary(const LogicalPlan& plan, const Node& node) {
  return plan.boundary.contains(&node) && !IsSource(node.kind());
}

NodeSet ChooseBoundaries(const LogicalPlan& plan, bool fuse) {
  LogicalPlan chosen;
  NodeSet& boundary = chosen.boundary;
  for (const PlanOutput& output : plan.outputs) boundary.insert(output.node.get());
  const NodeSet none;
  for (const NodePtr& node : plan.order) {
    const Node* raw = node.get();
    const auto found = plan.consumers.find(raw);
    const NodeSet& readers = found != plan.consumers.end() ? found->second : none;
    if (IsSource(node->kind())) {
      boundary.insert(raw);
      continue;
    }
    if (IsGenerator(node->kind())) {
      // Recomputed by each reader, for free; stored when an op planned alone reads it
      // from storage by region (a reduction computes it instead).
      for (const Node* reader : readers) {
        if (IsPlannedAlone(reader->kind()) && !ReadsAligned(*reader, *node)) boundary.insert(raw);
      }
      continue;
    }
    if (!fuse || IsPlannedAlone(node->kind())) boundary.insert(raw);
    if (readers.size() > 1) boundary.insert(raw);
    for (const Node* reader : readers) {
      if (!ReadsAligned(*reader, *node)) boundary.insert(raw);
    }
  }
  // A map_blocks function sees whole blocks: a reduction's input group holding one is
  // stored instead of computed over the reduction's regions.
  for (const NodePtr& node : plan.order) {
    if (node->kind() != NodeKind::kReduce) continue;
    const Node* input = node->inputs().front().get();
    if (boundary.contains(input)) continue;
    for (const Node* member : Members(chosen, *input)) {
      if (member->kind() == NodeKind::kMapBlocks) boundary.insert(input);
    }
  }
  return boundary;
}

std::string DescribeLogicalPlan(const LogicalPlan& plan) {
  std::ostringstream out;
  std::size_t lines = 0;
  for (const NodePtr& node : plan.order) {
    if (lines++ == kDescribedNodes) {
      out << "  ... and " << plan.order.size() - kDescribedNodes << " more nodes\n";
      break;
    }
    // A constant shows its value; other nodes their inputs.
    const std::string arguments = node->kind() == NodeKind::kConstant
                                      ? node->detail().constant.ToString()
                                      : Join(node->inputs());
    out << "  " << node->name() << " = " << node->op() << "(" << arguments << ") "
        << node->dtype().name() << " " << ShapeToString(node->shape()) << " chunks "
        << ShapeToString(node->chunks());
    if (plan.boundary.contains(node.get())) {
      out << (IsSource(node->kind()) ? "  [source]" : "  [stored");
      if (!IsSource(node->kind())) {
        const auto tier = plan.tiers.find(node.get());
        out << (tier != plan.tiers.end() ? std::string(": ") + std::string(TierName(tier->second))
                                         : std::string())
            << "]";
      }
    } else if (!plan.boundary.empty()) {
      out << "  [fused]";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace tessera::planner
