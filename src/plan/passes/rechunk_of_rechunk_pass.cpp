// rechunk_of_rechunk: one shuffle, not two (passes.hpp).
#include <algorithm>
#include <unordered_map>

#include "passes.hpp"

namespace tessera::planner {
namespace {

// The grid of `node`, chunk lengths beyond an extent cut to it.
Shape EffectiveChunks(const Node& node) {
  Shape chunks = node.chunks();
  for (std::size_t d = 0; d < chunks.size(); ++d) {
    chunks[d] = std::min(chunks[d], std::max<Index>(node.shape()[d], 1));
  }
  return chunks;
}

}  // namespace

void RechunkOfRechunkPass(PlanContext& context) {
  std::unordered_map<const Node*, NodePtr> replaced;
  // What each rechunk reads once the rechunks before it are rewritten: plan order
  // visits a chain's first rechunk first.
  std::unordered_map<const Node*, NodePtr> reads;
  for (const NodePtr& node : context.logical.order) {
    if (node->kind() != NodeKind::kRechunk) continue;
    NodePtr input = node->inputs().front();
    if (const auto found = reads.find(input.get()); found != reads.end()) input = found->second;
    reads[node.get()] = input;
    if (input == node->inputs().front()) continue;
    // Its input is a rechunk: read that one's input instead; nothing to do when the
    // chunks are that input's own.
    replaced[node.get()] =
        EffectiveChunks(*input) == EffectiveChunks(*node) ? input : node->WithInputs({input});
  }
  ReplaceNodes(context.logical, replaced);
}

}  // namespace tessera::planner
