// Lowering of a rechunk: its copies, one op per stage, as one group (lowering.hpp).
#include <limits>

#include "lowering.hpp"
#include "rechunk_ops.hpp"

namespace tessera::planner {
namespace {

// The intermediates of rechunk `node`: in RAM, stored (on local disk or in the object
// store) or split, unless a tier is forced. The intermediates of one candidate layout
// (copies 1, 2, ...) are alive at once: each one's place counts the local disk the
// earlier ones of the same candidate take.
IntermediateFactory RechunkIntermediates(PlanContext& context, const Node& node) {
  auto pending = std::make_shared<std::int64_t>(0);
  return [&context, &node, pending](int copy, const Shape& chunks, const Shape& disk_chunks,
                                    Index blocks_in_memory,
                                    Index num_blocks) -> std::shared_ptr<OpOutput> {
    if (copy == 1) *pending = 0;  // a new candidate layout
    const PlanOptions& options = context.options;
    if (options.intermediate_tier == Tier::kMemory) blocks_in_memory = num_blocks;
    if (options.intermediate_tier == Tier::kDisk) blocks_in_memory = 0;
    if (blocks_in_memory >= num_blocks) {
      return MakeMemoryTierOutput(node.shape(), chunks, node.dtype());
    }
    const std::int64_t stored_bytes =
        num_blocks > 0 ? node.nbytes() / num_blocks * (num_blocks - blocks_in_memory) : 0;
    const StoredPlace place = context.IntermediatePlace(stored_bytes, *pending);
    if (place.object_url.empty()) *pending += stored_bytes;
    if (blocks_in_memory <= 0 && disk_chunks == chunks) {
      return MakeStoredTierOutput(node.shape(), chunks, node.dtype(), place,
                                  options.disk_compressor);
    }
    return MakeSplitTierOutput(node.shape(), chunks, disk_chunks, node.dtype(), blocks_in_memory,
                               place, options.disk_compressor);
  };
}

}  // namespace

void LowerRechunk(PlanContext& context, const Node& node) {
  const Node& input = *node.inputs().front();
  RechunkInput reader{context.InputArray(input), true};
  if (input.kind() == NodeKind::kInMemory) reader.decodes = false;
  if (auto found = context.outputs.find(&input); found != context.outputs.end()) {
    const Tier tier = found->second->tier();
    reader.decodes = tier != Tier::kMemory && tier != Tier::kResult;
  }
  const Tier forced = context.options.intermediate_tier;
  const std::int64_t memory_budget =
      forced == Tier::kNone
          ? std::max<std::int64_t>(context.ram_for_intermediates - context.in_memory, 0)
          : (forced == Tier::kMemory ? std::numeric_limits<std::int64_t>::max() / 4 : 0);
  RechunkOps ops = BuildRechunkOps(node, reader, context.outputs.at(&node), memory_budget,
                                   context.choice_spec, RechunkIntermediates(context, node));
  if (forced == Tier::kNone) context.in_memory += ops.peak_memory_in_ram;
  const auto input_op = context.op_index.find(&input);
  FinalizedPlan::State& state = *context.state;
  state.OpenGroup(OpGroupKind::kRechunkStages, node.name());
  for (std::size_t k = 0; k < ops.copies.size(); ++k) {
    PlannedOp planned;
    planned.op = ops.copies[k];
    planned.worst_task = ops.worst_tasks[k];
    if (k > 0) {
      planned.mutable_info().inputs = {static_cast<int>(state.ops.size()) - 1};
    } else if (input_op != context.op_index.end()) {
      planned.mutable_info().inputs = {input_op->second};
    } else {
      planned.sources.push_back(input.name());
    }
    if (k + 1 < ops.copies.size()) context.KeepLocalDisk(ops.copies[k]->info());
    state.AddOp(std::move(planned));
  }
  context.op_index[&node] = static_cast<int>(state.ops.size()) - 1;
}

}  // namespace tessera::planner
