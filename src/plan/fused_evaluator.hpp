// FusedEvaluator: computes one op's output block from a fused group of nodes, and
// projects the memory that computation holds — the two side by side, so the
// projection follows the code that allocates.
//
// A group is a root node and the nodes fused into it; its other inputs ("boundary"
// nodes) are StoredArrays read by region. Evaluation is recursive over the group:
//   - a boundary node over a region: StoredArray::Read (also for an astype to the
//     dtype a boundary node already has: its block is the result, not copied);
//   - map_blocks: its input blocks, whole, then the user's function;
//   - an elementwise subtree: its leaves (boundary reads, map_blocks results, the
//     inputs of broadcasts) are prepared whole, then the output is computed in tiles
//     of `tile_elements`: every node of the subtree holds one tile, never a block.
// Projection mirrors that order: leaves held one after another (each at its own peak
// while it is made), then the output block, then the tiles.
// Thread safety: Evaluate and Project are const and may run concurrently.
// Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "op_output.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::planner {

struct MemoryFigure {
  std::int64_t peak = 0;    // most bytes held at once while computing
  std::int64_t result = 0;  // bytes of the computed block, held afterwards
};

class FusedEvaluator {
 public:
  using Boundary = std::unordered_map<const Node*, std::shared_ptr<const StoredArray>>;

  // `members`: the nodes computed inside (root included). Every input of a member is a
  // member or in `boundary`.
  FusedEvaluator(NodePtr root, std::unordered_set<const Node*> members, Boundary boundary,
                 Index tile_elements);

  const NodePtr& root() const { return root_; }
  // The root's values over `region` (a block of the root's grid).
  NDArray Evaluate(const Region& region) const;
  MemoryFigure Project(const Region& region) const;
  // Stored blocks the boundary reads of one task touch.
  Index InputBlocks(const Region& region) const;
  Index tile_elements() const { return tile_elements_; }
  // When the group is a stored node's copy (IsStoredCopy of the root): the StoredArray
  // its blocks come from; null otherwise.
  const StoredArray* StoredCopySource() const;

 private:
  class TileProgram;

  std::shared_ptr<const NDArray> EvaluateNode(const Node& node, const Region& region) const;
  MemoryFigure ProjectNode(const Node& node, const Region& region) const;
  Index InputBlocksOf(const Node& node, const Region& region) const;
  bool IsMember(const Node& node) const { return members_.contains(&node); }
  // An astype to the dtype its stored input already has (the op of its own that a
  // source asked for as an output gets): evaluated as the stored block itself, no copy.
  bool IsStoredCopy(const Node& node) const;

  std::shared_ptr<const NDArray> EvaluateElementwise(const Node& node, const Region& region) const;
  MemoryFigure ProjectElementwise(const Node& node, const Region& region) const;

  NodePtr root_;
  std::unordered_set<const Node*> members_;
  Boundary boundary_;
  Index tile_elements_;
};

// The root's values computed when read, as a StoredArray: lets an op that reads its
// input by region (a reduction's first round) compute a fused elementwise group inside
// its own tasks instead of storing it first. Any region works unless the group holds a
// map_blocks node (whose function sees whole blocks): the planner never asks for one.
std::shared_ptr<const StoredArray> MakeEvaluatedArray(
    std::shared_ptr<const FusedEvaluator> evaluator);

}  // namespace tessera::planner
