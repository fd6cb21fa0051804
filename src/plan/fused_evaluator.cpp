#include "fused_evaluator.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/generators.hpp"
#include "node_detail.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// The region of a broadcast's input that a region of the broadcast reads: broadcast
// dimensions collapse to their single element, new leading dimensions disappear.
// `byte_strides` receives, per dimension of the broadcast, the input block's stride
// (0 where broadcast).
Region InputRegionOfBroadcast(const Node& broadcast, const Region& region, Shape& byte_strides) {
  const Node& input = *broadcast.inputs().front();
  const auto ndim = static_cast<std::size_t>(input.ndim());
  Region source{Shape(ndim), Shape(ndim)};
  for (int d = 0; d < input.ndim(); ++d) {
    const auto in = static_cast<std::size_t>(d);
    const std::size_t out = BroadcastDim(broadcast, d);
    source.start[in] = IsStretched(broadcast, d) ? 0 : region.start[out];
    source.shape[in] = IsStretched(broadcast, d) ? 1 : region.shape[out];
  }
  const Shape input_strides = CStrides(source.shape);
  byte_strides.assign(static_cast<std::size_t>(broadcast.ndim()), 0);
  for (int d = 0; d < input.ndim(); ++d) {
    if (IsStretched(broadcast, d)) continue;
    byte_strides[BroadcastDim(broadcast, d)] =
        input_strides[static_cast<std::size_t>(d)] * input.dtype().itemsize();
  }
  return source;
}

Shape BlockIndexOf(const Node& node, const Region& region) {
  Shape block(region.start.size());
  for (std::size_t d = 0; d < block.size(); ++d) block[d] = region.start[d] / node.chunks()[d];
  return block;
}

void AddHeld(MemoryFigure& figure, const MemoryFigure& step) {
  figure.peak = std::max(figure.peak, figure.result + step.peak);
  figure.result += step.result;
}

}  // namespace

// The elementwise subtree under one root, flattened into slots in evaluation order
// (inputs before the nodes that use them), evaluated tile by tile.
class FusedEvaluator::TileProgram {
 public:
  enum class SlotKind { kBlock, kGathered, kGenerated, kComputed };
  struct Slot {
    const Node* node = nullptr;
    SlotKind kind = SlotKind::kComputed;
    std::vector<int> inputs;
    Region leaf_region;          // kBlock, kGathered: the region the leaf is read or computed over
    Shape byte_strides;          // kGathered
    const Node* leaf = nullptr;  // kBlock, kGathered: the node whose values are held whole
  };

  TileProgram(const FusedEvaluator& evaluator, const Node& root, const Region& region)
      : evaluator_(evaluator), region_(region) {
    Add(root);
  }

  const std::vector<Slot>& slots() const { return slots_; }

 private:
  int Add(const Node& node) {
    if (auto found = index_.find(&node); found != index_.end()) return found->second;
    Slot slot;
    slot.node = &node;
    const bool member = evaluator_.IsMember(node);
    if (!member || !IsElementwise(node.kind())) {
      slot.kind = SlotKind::kBlock;
      slot.leaf = &node;
      slot.leaf_region = region_;
    } else if (node.kind() == NodeKind::kBroadcast) {
      slot.kind = SlotKind::kGathered;
      slot.leaf = node.inputs().front().get();
      slot.leaf_region = InputRegionOfBroadcast(node, region_, slot.byte_strides);
    } else if (IsGenerator(node.kind())) {
      slot.kind = SlotKind::kGenerated;
    } else {
      slot.kind = SlotKind::kComputed;
      for (const NodePtr& input : node.inputs()) slot.inputs.push_back(Add(*input));
    }
    slots_.push_back(std::move(slot));
    const int index = static_cast<int>(slots_.size()) - 1;
    index_.emplace(&node, index);
    return index;
  }

  const FusedEvaluator& evaluator_;
  Region region_;
  std::vector<Slot> slots_;
  std::unordered_map<const Node*, int> index_;
};

FusedEvaluator::FusedEvaluator(NodePtr root, std::unordered_set<const Node*> members,
                               Boundary boundary, Index tile_elements)
    : root_(std::move(root)),
      members_(std::move(members)),
      boundary_(std::move(boundary)),
      tile_elements_(std::max<Index>(tile_elements, 1)) {}

NDArray FusedEvaluator::Evaluate(const Region& region) const {
  std::shared_ptr<const NDArray> result = EvaluateNode(*root_, region);
  if (result.use_count() == 1) return std::move(*std::const_pointer_cast<NDArray>(result));
  return *result;
}

MemoryFigure FusedEvaluator::Project(const Region& region) const {
  return ProjectNode(*root_, region);
}

std::shared_ptr<const NDArray> FusedEvaluator::EvaluateNode(const Node& node,
                                                            const Region& region) const {
  if (!IsMember(node)) {
    const auto found = boundary_.find(&node);
    if (found == boundary_.end()) {
      throw Error("internal error: node " + node.name() + " is neither fused nor stored");
    }
    return found->second->Read(region);
  }
  if (IsStoredCopy(node)) return EvaluateNode(*node.inputs().front(), region);
  if (node.kind() != NodeKind::kMapBlocks) return EvaluateElementwise(node, region);

  std::vector<NDArray> inputs;
  inputs.reserve(node.inputs().size());
  for (const NodePtr& input : node.inputs()) {
    std::shared_ptr<const NDArray> block = EvaluateNode(*input, region);
    if (block.use_count() == 1) {
      inputs.push_back(std::move(*std::const_pointer_cast<NDArray>(block)));
    } else {
      inputs.push_back(*block);
    }
  }
  const NodeDetail& detail = node.detail();
  NDArray out = detail.function(inputs, BlockInfo{BlockIndexOf(node, region), region});
  if (out.shape() != region.shape || out.dtype() != node.dtype()) {
    throw InvalidArgument(
        "map_blocks (" + node.name() + "): the function returned shape " +
        ShapeToString(out.shape()) + " and dtype " + std::string(out.dtype().name()) +
        " for block " + ShapeToString(BlockIndexOf(node, region)) + ", expected shape " +
        ShapeToString(region.shape) + " and dtype " + std::string(node.dtype().name()));
  }
  return std::make_shared<const NDArray>(std::move(out));
}

MemoryFigure FusedEvaluator::ProjectNode(const Node& node, const Region& region) const {
  if (!IsMember(node)) {
    const std::int64_t read = boundary_.at(&node)->ProjectRead(region);
    return {read, ShapeSize(region.shape) * node.dtype().itemsize()};
  }
  if (IsStoredCopy(node)) return ProjectNode(*node.inputs().front(), region);
  if (node.kind() != NodeKind::kMapBlocks) return ProjectElementwise(node, region);
  MemoryFigure figure;
  for (const NodePtr& input : node.inputs()) AddHeld(figure, ProjectNode(*input, region));
  const std::int64_t out = ShapeSize(region.shape) * node.dtype().itemsize();
  figure.peak = std::max(figure.peak, figure.result + out + node.detail().extra_projected_mem);
  return {figure.peak, out};
}

bool FusedEvaluator::IsStoredCopy(const Node& node) const {
  if (node.kind() != NodeKind::kAsType) return false;
  const Node& input = *node.inputs().front();
  return node.dtype() == input.dtype() && !IsMember(input);
}

const StoredArray* FusedEvaluator::StoredCopySource() const {
  if (!IsStoredCopy(*root_)) return nullptr;
  return boundary_.at(root_->inputs().front().get()).get();
}

Index FusedEvaluator::InputBlocks(const Region& region) const {
  return InputBlocksOf(*root_, region);
}

Index FusedEvaluator::InputBlocksOf(const Node& node, const Region& region) const {
  if (!IsMember(node)) return boundary_.at(&node)->BlocksTouched(region);
  if (node.kind() == NodeKind::kBroadcast) {
    Shape strides;
    return InputBlocksOf(*node.inputs().front(), InputRegionOfBroadcast(node, region, strides));
  }
  Index total = 0;
  std::unordered_set<const Node*> seen;
  for (const NodePtr& input : node.inputs()) {
    if (seen.insert(input.get()).second) total += InputBlocksOf(*input, region);
  }
  return total;
}

std::shared_ptr<const NDArray> FusedEvaluator::EvaluateElementwise(const Node& root,
                                                                   const Region& region) const {
  const TileProgram program(*this, root, region);
  const std::vector<TileProgram::Slot>& slots = program.slots();
  const std::size_t count = slots.size();

  // 1. Leaves, whole, in slot order (the projection's order).
  std::vector<std::shared_ptr<const NDArray>> leaves(count);
  for (std::size_t i = 0; i < count; ++i) {
    const TileProgram::Slot& slot = slots[i];
    if (slot.kind == TileProgram::SlotKind::kBlock ||
        slot.kind == TileProgram::SlotKind::kGathered) {
      leaves[i] = EvaluateNode(*slot.leaf, slot.leaf_region);
    }
  }
  // 2. The output block.
  auto out = std::make_shared<NDArray>(region.shape, root.dtype());
  const Index elements = out->size();
  if (elements == 0) return out;
  // 3. One tile per slot that computes (the root writes straight into the output).
  const Index tile = std::min(tile_elements_, elements);
  std::vector<Buffer> tiles(count);
  for (std::size_t i = 0; i + 1 < count; ++i) {
    if (slots[i].kind != TileProgram::SlotKind::kBlock) {
      tiles[i] = Buffer(tile * slots[i].node->dtype().itemsize());
    }
  }
  std::vector<const std::byte*> current(count, nullptr);
  kernels::TilePosition position{root.shape(), region.start, region.shape, 0, 0};

  // Constants never change between tiles: fill them once.
  for (std::size_t i = 0; i + 1 < count; ++i) {
    const Node& node = *slots[i].node;
    if (slots[i].kind == TileProgram::SlotKind::kGenerated && node.kind() == NodeKind::kConstant) {
      kernels::FillConstant(node.detail().constant, node.dtype(), tiles[i].data(), tile);
    }
  }

  std::byte* const out_bytes = out->mutable_bytes().data();
  for (Index start = 0; start < elements; start += tile) {
    const Index n = std::min(tile, elements - start);
    position.tile_start = start;
    position.count = n;
    for (std::size_t i = 0; i < count; ++i) {
      const TileProgram::Slot& slot = slots[i];
      const Node& node = *slot.node;
      const std::int64_t itemsize = node.dtype().itemsize();
      const bool is_root = i + 1 == count;
      std::byte* target = is_root ? out_bytes + start * itemsize : tiles[i].data();
      const NodeDetail& detail = node.detail();
      switch (slot.kind) {
        case TileProgram::SlotKind::kBlock:
          current[i] = leaves[i]->bytes().data() + start * itemsize;
          continue;
        case TileProgram::SlotKind::kGathered:
          kernels::GatherStrided(leaves[i]->bytes().data(), slot.byte_strides, itemsize, target,
                                 position);
          break;
        case TileProgram::SlotKind::kGenerated:
          if (node.kind() == NodeKind::kConstant) {
            if (is_root) kernels::FillConstant(detail.constant, node.dtype(), target, n);
          } else if (node.kind() == NodeKind::kArange) {
            kernels::FillArange(detail.start, detail.step, node.dtype(), target, position);
          } else {
            kernels::FillRandom(detail.seed, reinterpret_cast<double*>(target), position);
          }
          break;
        case TileProgram::SlotKind::kComputed: {
          const std::vector<int>& in = slot.inputs;
          const auto input = [&](std::size_t k) {
            return static_cast<const void*>(current[static_cast<std::size_t>(in[k])]);
          };
          switch (node.kind()) {
            case NodeKind::kUnary:
              detail.unary(input(0), target, n);
              break;
            case NodeKind::kAsType:
              detail.cast(input(0), target, n);
              break;
            case NodeKind::kBinary:
              detail.binary(input(0), input(1), target, n);
              break;
            case NodeKind::kWhere:
              detail.where(static_cast<const bool*>(input(0)), input(1), input(2), target, n);
              break;
            default:
              throw Error("internal error: " + node.name() + " is not elementwise");
          }
          break;
        }
      }
      current[i] = target;
    }
  }
  return out;
}

MemoryFigure FusedEvaluator::ProjectElementwise(const Node& root, const Region& region) const {
  const TileProgram program(*this, root, region);
  const std::vector<TileProgram::Slot>& slots = program.slots();
  MemoryFigure figure;
  for (const TileProgram::Slot& slot : slots) {
    if (slot.kind == TileProgram::SlotKind::kBlock ||
        slot.kind == TileProgram::SlotKind::kGathered) {
      AddHeld(figure, ProjectNode(*slot.leaf, slot.leaf_region));
    }
  }
  const Index elements = ShapeSize(region.shape);
  const std::int64_t out = elements * root.dtype().itemsize();
  std::int64_t tiles = 0;
  if (elements > 0) {
    const Index tile = std::min(tile_elements_, elements);
    for (std::size_t i = 0; i + 1 < slots.size(); ++i) {
      if (slots[i].kind != TileProgram::SlotKind::kBlock) {
        tiles += tile * slots[i].node->dtype().itemsize();
      }
    }
  }
  figure.peak = std::max(figure.peak, figure.result + out + tiles);
  return {figure.peak, out};
}

namespace {

class EvaluatedArray : public StoredArray {
 public:
  explicit EvaluatedArray(std::shared_ptr<const FusedEvaluator> evaluator)
      : evaluator_(std::move(evaluator)) {}
  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    return std::make_shared<const NDArray>(evaluator_->Evaluate(region));
  }
  std::int64_t ProjectRead(const Region& region) const override {
    const MemoryFigure figure = evaluator_->Project(region);
    return std::max(figure.peak, figure.result);
  }
  Index BlocksTouched(const Region& region) const override {
    return evaluator_->InputBlocks(region);
  }

 private:
  std::shared_ptr<const FusedEvaluator> evaluator_;
};

}  // namespace

std::shared_ptr<const StoredArray> MakeEvaluatedArray(
    std::shared_ptr<const FusedEvaluator> evaluator) {
  return std::make_shared<EvaluatedArray>(std::move(evaluator));
}

}  // namespace tessera::planner
