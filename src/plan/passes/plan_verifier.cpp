#include "plan_verifier.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tessera::planner {
namespace {

class Verifier {
 public:
  Verifier(const PlanContext& context, std::string_view pass) : context_(context), pass_(pass) {}

  void Logical() const {
    const LogicalPlan& plan = context_.logical;
    NodeSet seen;
    for (const NodePtr& node : plan.order) {
      const std::string name = node->name();
      if (!seen.insert(node.get()).second) Fail("node " + name + " is planned twice");
      for (const NodePtr& input : node->inputs()) {
        if (!seen.contains(input.get())) {
          Fail("node " + name + " reads " + input->name() + ", which is not planned before it");
        }
      }
      if (node->chunks().size() != node->shape().size()) {
        Fail("node " + name + " has chunks " + ShapeToString(node->chunks()) + " for shape " +
             ShapeToString(node->shape()));
      }
      for (const Index chunk : node->chunks()) {
        if (chunk < 1) Fail("node " + name + " has a chunk < 1");
      }
      const Node& n = *node;
      const bool elementwise = n.kind() == NodeKind::kUnary || n.kind() == NodeKind::kBinary ||
                               n.kind() == NodeKind::kWhere || n.kind() == NodeKind::kAsType;
      for (const NodePtr& input : n.inputs()) {
        if ((elementwise || n.kind() == NodeKind::kRechunk) && input->shape() != n.shape()) {
          Fail("node " + name + " (" + n.op() + ") of shape " + ShapeToString(n.shape()) +
               " reads " + input->name() + " of shape " + ShapeToString(input->shape()));
        }
      }
      if (n.kind() == NodeKind::kBinary && n.inputs()[0]->dtype() != n.inputs()[1]->dtype()) {
        Fail("node " + name + " (" + n.op() + ") reads operands of dtypes " +
             std::string(n.inputs()[0]->dtype().name()) + " and " +
             std::string(n.inputs()[1]->dtype().name()));
      }
      if (n.kind() == NodeKind::kRechunk && n.inputs()[0]->dtype() != n.dtype()) {
        Fail("rechunk " + name + " changes the dtype");
      }
    }
    for (const PlanOutput& output : plan.outputs) {
      if (!seen.contains(output.node.get()))
        Fail("output " + output.node->name() + " is not planned");
      if (!plan.boundary.empty() && !plan.boundary.contains(output.node.get())) {
        Fail("output " + output.node->name() + " is not stored");
      }
    }
    if (plan.boundary.empty()) return;
    for (const NodePtr& node : plan.order) {
      if (IsSource(node->kind()) && !plan.boundary.contains(node.get())) {
        Fail("source " + node->name() + " is not marked stored");
      }
    }
    for (const Node* stored : plan.boundary) {
      if (!seen.contains(stored)) Fail("a stored node is not in the plan");
    }
  }

  void Physical(bool memory_checked) const {
    const FinalizedPlan::State& state = *context_.state;
    for (std::size_t i = 0; i < state.ops.size(); ++i) {
      const PlannedOp& planned = state.ops[i];
      if (planned.op == nullptr) Fail("op #" + std::to_string(i) + " is empty");
      const OpInfo& info = planned.info();
      const std::string name = "op #" + std::to_string(i) + " " + info.name;
      for (const int input : info.inputs) {
        if (input < 0 || static_cast<std::size_t>(input) >= i) {
          Fail(name + " reads op #" + std::to_string(input) + ", which is not planned before it");
        }
      }
      if (planned.output() == nullptr || planned.output()->tier() != info.tier) {
        Fail(name + " says it writes to " + std::string(TierName(info.tier)) +
             " but its output is elsewhere");
      }
      if (info.projected_mem <= 0 && info.num_tasks > 0) Fail(name + " projects no memory");
      if (planned.group < 0 || static_cast<std::size_t>(planned.group) >= state.groups.size()) {
        Fail(name + " belongs to no group");
      }
      const std::vector<int>& members = state.groups[static_cast<std::size_t>(planned.group)].ops;
      if (std::find(members.begin(), members.end(), static_cast<int>(i)) == members.end()) {
        Fail(name + " is missing from its group");
      }
      if (memory_checked && info.estimated_mem > state.spec.allowed_mem) {
        Fail(name + " counts " + std::to_string(info.estimated_mem) +
             " per task, above allowed_mem " + std::to_string(state.spec.allowed_mem) +
             ", after the memory check");
      }
    }
    for (const auto& [node, op] : context_.op_index) {
      const OpInfo& info = state.ops.at(static_cast<std::size_t>(op)).info();
      if (info.shape != node->shape() || info.dtype != node->dtype()) {
        Fail("op #" + std::to_string(op) + " " + info.name + " computes " + node->name() + " " +
             ShapeToString(node->shape()) + " " + std::string(node->dtype().name()) +
             " but writes " + ShapeToString(info.shape) + " " + std::string(info.dtype.name()));
      }
    }
    for (const int op : state.result_ops) {
      if (op < 0 || static_cast<std::size_t>(op) >= state.ops.size()) {
        Fail("an output has no op (#" + std::to_string(op) + ")");
      }
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw std::logic_error("plan verifier, after pass \"" + std::string(pass_) + "\": " + what);
  }

  const PlanContext& context_;
  std::string_view pass_;
};

}  // namespace

void VerifyPlan(const PlanContext& context, std::string_view after_pass, bool memory_checked) {
  const Verifier verifier(context, after_pass);
  verifier.Logical();
  if (context.lowered) verifier.Physical(memory_checked);
}

}  // namespace tessera::planner
