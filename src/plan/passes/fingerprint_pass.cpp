// fingerprint: what names each op across runs, and each target's writer (passes.hpp).
#include <unordered_map>

#include "op_fingerprint.hpp"
#include "passes.hpp"

namespace tessera::planner {

void FingerprintPass(PlanContext& context) {
  std::unordered_map<std::string, const Node*> by_name;
  for (const NodePtr& node : context.logical.order) by_name[node->name()] = node.get();
  for (PlannedOp& planned : context.state->ops) {
    OpInfo& info = planned.mutable_info();
    std::vector<const Node*> members;
    for (const std::string& name : info.fused) {
      if (auto found = by_name.find(name); found != by_name.end()) members.push_back(found->second);
    }
    info.fingerprint = OpFingerprint(info, members);
  }
  // A target records what writes it, so that a resume continues only the same work.
  for (const PlanOutput& output : context.logical.outputs) {
    if (!output.target) continue;
    const OpInfo& writer =
        context.state->ops[static_cast<std::size_t>(context.op_index.at(output.node.get()))].info();
    context.outputs.at(output.node.get())
        ->SetWriterLayout(std::string(OpKindName(writer.kind)) + " " +
                          std::to_string(writer.num_tasks) + " tasks " + writer.fingerprint);
  }
}

}  // namespace tessera::planner
