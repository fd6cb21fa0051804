// Lowering of a reduction: its rounds, one op each, as one group (lowering.hpp).
#include "lowering.hpp"
#include "reduction_rounds.hpp"

namespace tessera::planner {
namespace {

// How a reduction reads `input`: stored, or — when the input is a fused group (not a
// boundary) — computed when read, from the group's stored inputs.
struct FusedInput {
  std::shared_ptr<const StoredArray> array;
  PlanContext::GroupReads reads;
};

FusedInput FusedInputOf(PlanContext& context, const Node& input) {
  if (context.logical.boundary.contains(&input)) {
    return {context.InputArray(input), {{}, {&input}}};
  }
  const NodeSet members = Members(context.logical, input);
  return {MakeEvaluatedArray(context.MakeEvaluator(input, members)), context.ReadsOf(members)};
}

}  // namespace

// Partial states take RAM from what the intermediates so far leave, else go to disk.
void LowerReduce(PlanContext& context, const Node& node) {
  const Node& input = *node.inputs().front();
  FusedInput values = FusedInputOf(context, input);
  const auto make_partials = [&](int /*round*/, const Shape& shape,
                                 const Shape& chunks) -> std::shared_ptr<OpOutput> {
    const std::int64_t bytes = ShapeSize(shape);
    const bool in_ram = context.options.intermediate_tier == Tier::kNone
                            ? context.in_memory + bytes <= context.ram_for_intermediates
                            : context.options.intermediate_tier == Tier::kMemory;
    if (in_ram) return MakeMemoryTierOutput(shape, chunks, uint8);
    return MakeStoredTierOutput(shape, chunks, uint8, context.IntermediatePlace(bytes),
                                context.options.disk_compressor);
  };
  ReductionOps ops = BuildReductionOps(node, values.array, context.outputs.at(&node),
                                       context.choice_spec, make_partials);
  context.state->OpenGroup(OpGroupKind::kReductionRounds, node.name());
  for (std::size_t k = 0; k < ops.rounds.size(); ++k) {
    const std::shared_ptr<ReduceOp>& round = ops.rounds[k];
    if (round->output()->tier() == Tier::kMemory) {
      context.in_memory += ShapeSize(round->info().shape);
    }
    if (k + 1 < ops.rounds.size()) context.KeepLocalDisk(round->info());
    const bool last = k + 1 == ops.rounds.size();
    if (k == 0) {
      std::vector<std::string>& fused = round->mutable_info().fused;
      fused.insert(fused.begin(), values.reads.fused.begin(), values.reads.fused.end());
      context.AppendOp(last ? &node : nullptr, round, values.reads.stored);
    } else {
      context.AppendOp(last ? &node : nullptr, round, {},
                       {static_cast<int>(context.state->ops.size()) - 1});
    }
  }
}

}  // namespace tessera::planner
