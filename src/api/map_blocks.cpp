#include "tessera/api/map_blocks.hpp"

#include <utility>

#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera {

using planner::MakeMapBlocks;
using planner::NodePtr;

Array map_blocks(BlockFunction fn, const std::vector<Array>& inputs, DType dtype,
                 std::int64_t extra_projected_mem, std::string identity, FunctionRecipe recipe) {
  if (inputs.empty()) throw InvalidArgument("map_blocks: give at least one input array");
  std::vector<NodePtr> nodes;
  for (const Array& input : inputs) nodes.push_back(input.node());
  const Array& first = inputs.front();
  return Array(MakeMapBlocks(std::move(fn), std::move(nodes), first.shape(), first.chunks(), dtype,
                             extra_projected_mem, std::move(identity), std::move(recipe)),
               first.spec());
}

}  // namespace tessera
