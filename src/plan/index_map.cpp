// Building gathers and reshapes (tessera/plan/internal/index_map.hpp).
#include "tessera/plan/internal/index_map.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "node_detail.hpp"
#include "reshape_op.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// x as a node a planned-alone op can read by region: generators are computed into a
// stored array of their own (an astype to the same dtype), as sources asked for as
// outputs are.
NodePtr Storable(NodePtr x) {
  if (IsGenerator(x->kind())) return MakeAsType(x, x->dtype());
  return x;
}

// The longest table a composition makes from a middle axis that had none (inner tables
// are spelled out over the middle array's extent); beyond it the gathers stay two.
constexpr Index kMaxComposedTable = Index{1} << 22;

// `outer` (an axis of a gather over a middle array, `middle_extent` long) followed by
// `inner` (the middle array's axis over the input); nullopt when the two do not
// compose into one map.
std::optional<AxisMap> ComposeAxis(const AxisMap& outer, const AxisMap& inner,
                                   Index middle_extent) {
  if (outer.input_axis < 0) return outer;  // a new axis stays new
  if (inner.input_axis < 0) return AxisMap{};
  if (outer.IsIdentity()) return inner;
  if (inner.IsIdentity()) {
    AxisMap composed = outer;
    composed.input_axis = inner.input_axis;
    return composed;
  }
  if (outer.table != nullptr || inner.table != nullptr) {
    // outer's own index arithmetic, then one table: outer's entries (or, without one,
    // every middle index) mapped through inner.
    std::vector<Index> table;
    if (outer.table != nullptr) {
      table.reserve(outer.table->size());
      for (const Index k : *outer.table) table.push_back(inner.InputIndex(k));
    } else {
      if (middle_extent > kMaxComposedTable) return std::nullopt;
      table.reserve(static_cast<std::size_t>(middle_extent));
      for (Index k = 0; k < middle_extent; ++k) table.push_back(inner.InputIndex(k));
    }
    AxisMap composed = outer;
    composed.input_axis = inner.input_axis;
    composed.table = std::make_shared<const std::vector<Index>>(std::move(table));
    return composed;
  }
  if (outer.divisor != 1 || outer.modulus != 0 || inner.divisor != 1) return std::nullopt;
  // inner(outer(i)) = wrap(s + t * (a + b * i)) = wrap((s + t * a) + (t * b) * i).
  return AxisMap{inner.input_axis, inner.start + inner.step * outer.start, inner.step * outer.step,
                 1, inner.modulus};
}

// `outer` (a source reading a middle gather, of `middle_shape`, with one source
// `inner`) as a source reading the middle gather's input directly; nullopt when an axis
// does not compose.
std::optional<GatherSource> ComposeSource(const GatherSource& outer, const GatherSource& inner,
                                          const Shape& middle_shape) {
  GatherSource composed;
  composed.begin = outer.begin;
  composed.end = outer.end;
  for (const AxisMap& axis : outer.axes) {
    const AxisMap* inner_axis =
        axis.input_axis >= 0 ? &inner.axes[static_cast<std::size_t>(axis.input_axis)] : nullptr;
    std::optional<AxisMap> both =
        inner_axis ? ComposeAxis(axis, *inner_axis,
                                 middle_shape[static_cast<std::size_t>(axis.input_axis)])
                   : axis;
    if (!both) return std::nullopt;
    composed.axes.push_back(*both);
  }
  composed.fixed = inner.fixed;
  // Middle axes the outer source fixes fix the input axis they read.
  for (std::size_t middle = 0; middle < outer.fixed.size(); ++middle) {
    if (outer.fixed[middle] < 0) continue;
    const AxisMap& inner_axis = inner.axes[middle];
    if (inner_axis.input_axis < 0) continue;
    composed.fixed[static_cast<std::size_t>(inner_axis.input_axis)] =
        inner_axis.InputIndex(outer.fixed[middle]);
  }
  return composed;
}

// `outer` (one source reading a gather of several sources, `inner`, joined along its
// axis J) as a map of inner's inputs: when outer fixes J, the one input holding that
// index; when an output axis reads J unchanged, every input, joined along that axis.
// Sets `inputs` to the inputs read; nullopt (inputs untouched) otherwise.
std::optional<IndexMap> ComposeOverJoin(const GatherSource& outer, const Node& middle,
                                        std::vector<NodePtr>& inputs) {
  const IndexMap& inner = *middle.detail().index_map;
  const auto join = static_cast<std::size_t>(inner.join_axis);
  IndexMap composed;
  std::vector<NodePtr> read;
  if (outer.fixed[join] >= 0) {
    const Index at = outer.fixed[join];
    for (std::size_t k = 0; k < inner.sources.size(); ++k) {
      const GatherSource& source = inner.sources[k];
      if (at < source.begin || at >= source.end) continue;
      std::optional<GatherSource> both = ComposeSource(outer, source, middle.shape());
      if (!both) return std::nullopt;
      composed.sources.push_back(std::move(*both));
      read.push_back(middle.inputs()[k]);
      break;
    }
  } else {
    int reader = -1;
    for (std::size_t d = 0; d < outer.axes.size(); ++d) {
      if (outer.axes[d].input_axis == inner.join_axis) reader = static_cast<int>(d);
    }
    if (reader < 0 || !outer.axes[static_cast<std::size_t>(reader)].IsIdentity()) {
      return std::nullopt;
    }
    composed.join_axis = reader;
    for (std::size_t k = 0; k < inner.sources.size(); ++k) {
      std::optional<GatherSource> both = ComposeSource(outer, inner.sources[k], middle.shape());
      if (!both) return std::nullopt;
      both->begin = inner.sources[k].begin;
      both->end = inner.sources[k].end;
      composed.sources.push_back(std::move(*both));
      read.push_back(middle.inputs()[k]);
    }
  }
  if (composed.sources.empty()) return std::nullopt;
  inputs = std::move(read);
  return composed;
}

// Can a gather of `shape` from `x` be a gather of each of x's operands instead (x an
// elementwise op whose operands all have its shape)? Only when the result is no larger
// than x: then the elementwise op computes only what the gather keeps, and the gather
// reads only the chunks of the operands it needs rather than all of x, stored whole.
bool GathersThrough(const Node& x, const Shape& shape) {
  const NodeKind kind = x.kind();
  if (kind != NodeKind::kUnary && kind != NodeKind::kAsType && kind != NodeKind::kBinary &&
      kind != NodeKind::kWhere) {
    return false;
  }
  for (const NodePtr& operand : x.inputs()) {
    if (operand->shape() != x.shape() || operand->kind() == NodeKind::kBroadcast) return false;
  }
  return ShapeSize(shape) <= x.size();
}

bool IsIdentity(const IndexMap& map, const Node& input, const Shape& shape) {
  if (map.sources.size() != 1 || shape != input.shape()) return false;
  const GatherSource& source = map.sources.front();
  for (std::size_t d = 0; d < source.axes.size(); ++d) {
    if (source.axes[d].input_axis != static_cast<int>(d) || !source.axes[d].IsIdentity())
      return false;
  }
  return true;
}

}  // namespace

Index AxisMap::InputIndex(Index i) const {
  Index k = start + step * (i / divisor);
  if (modulus > 0) k = ((k % modulus) + modulus) % modulus;
  return table != nullptr ? (*table)[static_cast<std::size_t>(k)] : k;
}

bool operator==(const AxisMap& a, const AxisMap& b) {
  const bool same_table =
      a.table == b.table || (a.table != nullptr && b.table != nullptr && *a.table == *b.table);
  return a.input_axis == b.input_axis && a.start == b.start && a.step == b.step &&
         a.divisor == b.divisor && a.modulus == b.modulus && same_table;
}

IndexMap IdentityMap(const Node& x) {
  std::vector<AxisMap> axes;
  for (int d = 0; d < x.ndim(); ++d) axes.push_back(AxisMap{d});
  return OneSourceMap(std::move(axes), Shape(static_cast<std::size_t>(x.ndim()), -1), x.shape());
}

IndexMap OneSourceMap(std::vector<AxisMap> axes, Shape fixed, const Shape& shape) {
  GatherSource source{std::move(axes), std::move(fixed), 0, shape.empty() ? 1 : shape[0]};
  return IndexMap{0, {std::move(source)}};
}

namespace {

// The gathers made while one map is pushed through elementwise ops, by the node they
// gather: an operand shared by several ops is gathered once.
using GatheredOperands = std::unordered_map<const Node*, NodePtr>;

NodePtr Gather(std::vector<NodePtr> inputs, IndexMap map, Shape shape, Shape chunks, DType dtype,
               GatheredOperands& gathered) {
  if (inputs.size() != map.sources.size() || inputs.empty()) {
    throw InvalidArgument("gather: " + std::to_string(inputs.size()) + " inputs for " +
                          std::to_string(map.sources.size()) + " sources");
  }
  if (inputs.size() == 1 && inputs.front()->kind() == NodeKind::kGather &&
      inputs.front()->inputs().size() > 1) {
    const NodePtr middle = inputs.front();
    if (auto composed = ComposeOverJoin(map.sources.front(), *middle, inputs)) {
      map = std::move(*composed);
    }
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    NodePtr& input = inputs[k];
    if (input->dtype() != dtype) {
      throw InvalidArgument("gather: input " + input->name() + " is " +
                            std::string(input->dtype().name()) + ", the result " +
                            std::string(dtype.name()) + "; cast it first");
    }
    if (input->kind() == NodeKind::kGather && input->inputs().size() == 1) {
      if (auto composed = ComposeSource(map.sources[k], input->detail().index_map->sources[0],
                                        input->shape())) {
        map.sources[k] = std::move(*composed);
        input = input->inputs().front();
      }
    }
  }
  if (inputs.size() == 1 && inputs.front()->dtype() == dtype &&
      GathersThrough(*inputs.front(), shape) && !IsIdentity(map, *inputs.front(), shape)) {
    const Node& elementwise = *inputs.front();
    std::vector<NodePtr> operands;
    for (const NodePtr& operand : elementwise.inputs()) {
      NodePtr& done = gathered[operand.get()];
      if (!done) done = Gather({operand}, map, shape, chunks, operand->dtype(), gathered);
      operands.push_back(done);
    }
    return std::make_shared<const Node>(elementwise.kind(), elementwise.op(), std::move(shape),
                                        std::move(chunks), dtype, std::move(operands),
                                        std::make_shared<const NodeDetail>(elementwise.detail()));
  }
  if (IsIdentity(map, *inputs.front(), shape) && inputs.front()->chunks() == chunks) {
    return inputs.front();
  }
  if (inputs.size() == 1 && inputs.front()->kind() == NodeKind::kConstant) {
    return MakeConstant(std::move(shape), inputs.front()->detail().constant, dtype,
                        std::move(chunks), inputs.front()->op());
  }
  for (NodePtr& input : inputs) input = Storable(std::move(input));
  NodeDetail detail;
  detail.index_map = std::make_shared<const IndexMap>(std::move(map));
  return std::make_shared<const Node>(NodeKind::kGather, "gather", std::move(shape),
                                      std::move(chunks), dtype, std::move(inputs),
                                      std::make_shared<const NodeDetail>(std::move(detail)));
}

}  // namespace

NodePtr MakeGather(std::vector<NodePtr> inputs, IndexMap map, Shape shape, Shape chunks,
                   DType dtype) {
  GatheredOperands gathered;
  return Gather(std::move(inputs), std::move(map), std::move(shape), std::move(chunks), dtype,
                gathered);
}

NodePtr MakeReshape(NodePtr x, Shape shape) {
  if (ShapeSize(shape) != x->size()) {
    throw InvalidArgument("reshape: cannot reshape an array of size " + std::to_string(x->size()) +
                          " (shape " + ShapeToString(x->shape()) + ") into shape " +
                          ShapeToString(shape) + "; the sizes must be equal");
  }
  if (shape == x->shape()) return x;
  Shape chunks(shape.size());
  if (x->size() == 0) {
    // Nothing to read: any grid will do.
    for (std::size_t d = 0; d < shape.size(); ++d) chunks[d] = std::max<Index>(shape[d], 1);
  } else {
    const std::vector<ReshapeGroup> groups = ReshapeGroups(x->shape(), shape);
    const Shape aligned = AlignedInputChunks(groups, x->shape(), x->chunks(), shape);
    // Only when they differ: MakeRechunk cuts chunks longer than their axis, and a
    // rechunk to the same grid plans no copy at all.
    if (aligned != x->chunks()) x = MakeRechunk(std::move(x), aligned);
    chunks = ReshapeOutputChunks(groups, x->shape(), x->chunks(), shape);
  }
  x = Storable(std::move(x));
  const DType dtype = x->dtype();
  return std::make_shared<const Node>(NodeKind::kReshape, "reshape", std::move(shape),
                                      std::move(chunks), dtype, std::vector<NodePtr>{std::move(x)},
                                      std::make_shared<const NodeDetail>());
}

}  // namespace tessera::planner
