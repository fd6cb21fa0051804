// Manipulation functions as gathers and reshapes (tessera/api/manipulation.hpp).
#include "tessera/api/manipulation.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "tessera/api/elementwise.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/type_promotion.hpp"
#include "tessera/plan/internal/index_map.hpp"

namespace tessera {

using planner::AxisMap;
using planner::BroadcastShapes;
using planner::GatherSource;
using planner::IndexMap;
using planner::MakeGather;
using planner::MakeReshape;
using planner::NodePtr;
using planner::OneSourceMap;

namespace {

// A chunk length `chunk` cut to an axis of `extent` (at least 1).
Index ChunkFor(Index chunk, Index extent) { return std::max<Index>(1, std::min(chunk, extent)); }

// `axes` of an array of `ndim` dimensions, the error naming `function`.
std::vector<int> ResolveAxes(const char* function, const Axes& axes, int ndim) {
  try {
    return axes.Resolve(ndim);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string(function) + ": " + error.what());
  }
}

int ResolveAxis(const char* function, int axis, int ndim) {
  return ResolveAxes(function, Axes(axis), ndim).front();
}

std::string Plural(std::size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

Array Gather(const Array& x, std::vector<AxisMap> axes, Shape fixed, Shape shape, Shape chunks) {
  IndexMap map = OneSourceMap(std::move(axes), std::move(fixed), shape);
  return Array(
      MakeGather({x.node()}, std::move(map), std::move(shape), std::move(chunks), x.dtype()),
      x.spec());
}

// The same axis for every output axis but the ones `change` rewrites: an identity
// gather of x to edit.
struct AxisPlan {
  std::vector<AxisMap> axes;
  Shape shape;
  Shape chunks;
};
AxisPlan Identity(const Array& x) {
  AxisPlan plan{{}, x.shape(), x.chunks()};
  for (int d = 0; d < x.ndim(); ++d) plan.axes.push_back(AxisMap{d});
  return plan;
}
Array Apply(const Array& x, AxisPlan plan) {
  return Gather(x, std::move(plan.axes), Shape(static_cast<std::size_t>(x.ndim()), -1),
                std::move(plan.shape), std::move(plan.chunks));
}

// The arrays cast to their common dtype (ResultType), the error naming `function`.
std::vector<Array> Promoted(const char* function, const std::vector<Array>& arrays) {
  if (arrays.empty()) {
    throw InvalidArgument(std::string(function) + ": needs at least one array to join");
  }
  DType dtype = arrays.front().dtype();
  for (const Array& array : arrays) dtype = ResultType(dtype, array.dtype());
  std::vector<Array> cast;
  for (const Array& array : arrays) cast.push_back(array.astype(dtype));
  return cast;
}

}  // namespace

Array permute_dims(const Array& x, std::vector<int> axes) {
  if (static_cast<int>(axes.size()) != x.ndim()) {
    throw InvalidArgument("permute_dims: axes give " + Plural(axes.size(), "axis") +
                          " but the array " + ShapeToString(x.shape()) + " has " +
                          std::to_string(x.ndim()) + "; give a permutation of all of them");
  }
  AxisPlan plan = Identity(x);
  std::vector<bool> seen(axes.size(), false);
  for (std::size_t d = 0; d < axes.size(); ++d) {
    const int axis = ResolveAxis("permute_dims", axes[d], x.ndim());
    if (seen[static_cast<std::size_t>(axis)]) {
      throw InvalidArgument("permute_dims: axis " + std::to_string(axes[d]) +
                            " is repeated; give each axis once");
    }
    seen[static_cast<std::size_t>(axis)] = true;
    plan.axes[d] = AxisMap{axis};
    plan.shape[d] = x.shape()[static_cast<std::size_t>(axis)];
    plan.chunks[d] = x.chunks()[static_cast<std::size_t>(axis)];
  }
  return Apply(x, std::move(plan));
}

Array matrix_transpose(const Array& x) {
  if (x.ndim() < 2) {
    throw InvalidArgument("matrix_transpose: the array " + ShapeToString(x.shape()) + " has " +
                          std::to_string(x.ndim()) + " dimensions; it needs at least 2");
  }
  std::vector<int> axes;
  for (int d = 0; d < x.ndim(); ++d) axes.push_back(d);
  std::swap(axes[axes.size() - 1], axes[axes.size() - 2]);
  return permute_dims(x, std::move(axes));
}

Array expand_dims(const Array& x, Axes axis) {
  if (axis.all()) throw InvalidArgument("expand_dims: give the position(s) of the new axes");
  // How many axes are new (resolved against any rank large enough: only the count counts).
  constexpr int kAnyRank = 1 << 20;
  const int count = static_cast<int>(ResolveAxes("expand_dims", axis, kAnyRank).size());
  const std::vector<int> at = ResolveAxes("expand_dims", axis, x.ndim() + count);
  AxisPlan plan;
  int next = 0;
  for (int d = 0; d < x.ndim() + count; ++d) {
    if (std::find(at.begin(), at.end(), d) != at.end()) {
      plan.axes.push_back(AxisMap{});
      plan.shape.push_back(1);
      plan.chunks.push_back(1);
    } else {
      const auto dim = static_cast<std::size_t>(next);
      plan.axes.push_back(AxisMap{next++});
      plan.shape.push_back(x.shape()[dim]);
      plan.chunks.push_back(x.chunks()[dim]);
    }
  }
  return Apply(x, std::move(plan));
}

Array squeeze(const Array& x, Axes axis) {
  std::vector<int> axes;
  if (axis.all()) {
    for (int d = 0; d < x.ndim(); ++d) {
      if (x.shape()[static_cast<std::size_t>(d)] == 1) axes.push_back(d);
    }
  } else {
    axes = ResolveAxes("squeeze", axis, x.ndim());
  }
  AxisPlan plan;
  Shape fixed(static_cast<std::size_t>(x.ndim()), -1);
  for (int d = 0; d < x.ndim(); ++d) {
    const auto dim = static_cast<std::size_t>(d);
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      plan.axes.push_back(AxisMap{d});
      plan.shape.push_back(x.shape()[dim]);
      plan.chunks.push_back(x.chunks()[dim]);
    } else if (x.shape()[dim] != 1) {
      throw InvalidArgument("squeeze: cannot squeeze axis " + std::to_string(d) + " of the array " +
                            ShapeToString(x.shape()) + ": its extent is " +
                            std::to_string(x.shape()[dim]) + ", not 1");
    } else {
      fixed[dim] = 0;
    }
  }
  return Gather(x, std::move(plan.axes), std::move(fixed), std::move(plan.shape),
                std::move(plan.chunks));
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays) {
  Shape shape;
  for (const Array& array : arrays) shape = BroadcastShapes(shape, array.shape());
  std::vector<Array> result;
  for (const Array& array : arrays) result.push_back(broadcast_to(array, shape));
  return result;
}

Array concat(const std::vector<Array>& arrays, std::optional<int> axis) {
  std::vector<Array> inputs = Promoted("concat", arrays);
  if (!axis) {
    for (Array& input : inputs) input = reshape(input, {-1});
    axis = 0;
  }
  const Array& first = inputs.front();
  if (first.ndim() == 0) {
    throw InvalidArgument("concat: zero-dimensional arrays cannot be concatenated; use stack");
  }
  const int join = ResolveAxis("concat", *axis, first.ndim());
  const auto join_dim = static_cast<std::size_t>(join);
  IndexMap map{join, {}};
  Shape shape = first.shape();
  shape[join_dim] = 0;
  std::vector<NodePtr> nodes;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Array& input = inputs[k];
    Shape expected = first.shape();
    expected[join_dim] = input.ndim() == first.ndim() ? input.shape()[join_dim] : 0;
    if (input.shape() != expected) {
      throw InvalidArgument(
          "concat: array " + std::to_string(k) + " has shape " + ShapeToString(input.shape()) +
          " but array 0 has " + ShapeToString(first.shape()) +
          "; all must have the same shape except along axis " + std::to_string(join));
    }
    GatherSource source;
    for (int d = 0; d < first.ndim(); ++d) source.axes.push_back(AxisMap{d});
    source.fixed.assign(static_cast<std::size_t>(first.ndim()), -1);
    source.begin = shape[join_dim];
    source.end = source.begin + input.shape()[join_dim];
    source.axes[join_dim].start = -source.begin;
    shape[join_dim] = source.end;
    map.sources.push_back(std::move(source));
    nodes.push_back(input.node());
  }
  Shape chunks = first.chunks();
  chunks[join_dim] = ChunkFor(chunks[join_dim], shape[join_dim]);
  return Array(MakeGather(std::move(nodes), std::move(map), std::move(shape), std::move(chunks),
                          first.dtype()),
               first.spec());
}

Array stack(const std::vector<Array>& arrays, int axis) {
  const std::vector<Array> inputs = Promoted("stack", arrays);
  const Array& first = inputs.front();
  const int join = ResolveAxis("stack", axis, first.ndim() + 1);
  IndexMap map{join, {}};
  std::vector<NodePtr> nodes;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].shape() != first.shape()) {
      throw InvalidArgument("stack: array " + std::to_string(k) + " has shape " +
                            ShapeToString(inputs[k].shape()) + " but array 0 has " +
                            ShapeToString(first.shape()) + "; all must have the same shape");
    }
    GatherSource source;
    for (int d = 0; d < first.ndim(); ++d) source.axes.push_back(AxisMap{d});
    source.axes.insert(source.axes.begin() + join, AxisMap{});
    source.fixed.assign(static_cast<std::size_t>(first.ndim()), -1);
    source.begin = static_cast<Index>(k);
    source.end = source.begin + 1;
    map.sources.push_back(std::move(source));
    nodes.push_back(inputs[k].node());
  }
  Shape shape = first.shape();
  Shape chunks = first.chunks();
  shape.insert(shape.begin() + join, static_cast<Index>(inputs.size()));
  chunks.insert(chunks.begin() + join, 1);
  return Array(MakeGather(std::move(nodes), std::move(map), std::move(shape), std::move(chunks),
                          first.dtype()),
               first.spec());
}

Array flip(const Array& x, Axes axis) {
  AxisPlan plan = Identity(x);
  for (const int d : ResolveAxes("flip", axis, x.ndim())) {
    const Index extent = x.shape()[static_cast<std::size_t>(d)];
    if (extent > 0) plan.axes[static_cast<std::size_t>(d)] = AxisMap{d, extent - 1, -1};
  }
  return Apply(x, std::move(plan));
}

Array roll(const Array& x, Index shift, std::optional<int> axis) {
  if (!axis) return reshape(roll(reshape(x, {-1}), shift, 0), x.shape());
  return roll(x, std::vector<Index>{shift}, std::vector<int>{*axis});
}

Array roll(const Array& x, std::vector<Index> shifts, std::vector<int> axes) {
  if (shifts.size() != axes.size() && shifts.size() != 1 && axes.size() != 1) {
    throw InvalidArgument("roll: " + Plural(shifts.size(), "shift") + " for " +
                          Plural(axes.size(), "axis") +
                          "; give one shift per axis (or one for all)");
  }
  const std::size_t count = std::max(shifts.size(), axes.size());
  Shape total(static_cast<std::size_t>(x.ndim()), 0);
  for (std::size_t k = 0; k < count; ++k) {
    const int d = ResolveAxis("roll", axes[axes.size() == 1 ? 0 : k], x.ndim());
    total[static_cast<std::size_t>(d)] += shifts[shifts.size() == 1 ? 0 : k];
  }
  AxisPlan plan = Identity(x);
  for (std::size_t d = 0; d < total.size(); ++d) {
    const Index extent = x.shape()[d];
    if (extent == 0 || total[d] % extent == 0) continue;
    plan.axes[d] = AxisMap{static_cast<int>(d), -(total[d] % extent), 1, 1, extent};
  }
  return Apply(x, std::move(plan));
}

Array reshape(const Array& x, Shape shape) {
  std::optional<std::size_t> unknown;
  Index known = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      if (unknown) {
        throw InvalidArgument("reshape: shape " + ShapeToString(shape) +
                              " has more than one -1; only one extent can be inferred");
      }
      unknown = d;
    } else if (shape[d] < 0) {
      throw InvalidArgument("reshape: shape " + ShapeToString(shape) +
                            " has a negative extent; extents are >= 0, or -1 for one inferred");
    } else {
      known = CheckedMul(known, shape[d]);
    }
  }
  if (unknown) {
    if (known == 0 || x.size() % known != 0) {
      throw InvalidArgument("reshape: cannot reshape an array of size " + std::to_string(x.size()) +
                            " into shape " + ShapeToString(shape) +
                            "; the other extents must divide the size");
    }
    shape[*unknown] = x.size() / known;
  }
  return Array(MakeReshape(x.node(), std::move(shape)), x.spec());
}

Array repeat(const Array& x, Index repeats, std::optional<int> axis) {
  if (repeats < 0) {
    throw InvalidArgument("repeat: repeats must be >= 0, got " + std::to_string(repeats));
  }
  if (!axis) return repeat(reshape(x, {-1}), repeats, 0);
  const auto d = static_cast<std::size_t>(ResolveAxis("repeat", *axis, x.ndim()));
  AxisPlan plan = Identity(x);
  plan.shape[d] = CheckedMul(x.shape()[d], repeats);
  plan.chunks[d] = ChunkFor(x.chunks()[d], plan.shape[d]);
  if (repeats > 1) plan.axes[d] = AxisMap{static_cast<int>(d), 0, 1, repeats};
  return Apply(x, std::move(plan));
}

Array tile(const Array& x, Shape reps) {
  for (const Index rep : reps) {
    if (rep < 0) {
      throw InvalidArgument("tile: reps " + ShapeToString(reps) + " must all be >= 0");
    }
  }
  const std::size_t ndim = std::max(reps.size(), static_cast<std::size_t>(x.ndim()));
  reps.insert(reps.begin(), ndim - reps.size(), 1);
  const std::size_t added = ndim - static_cast<std::size_t>(x.ndim());
  AxisPlan plan;
  for (std::size_t d = 0; d < ndim; ++d) {
    if (d < added) {
      plan.axes.push_back(AxisMap{});
      plan.shape.push_back(reps[d]);
      plan.chunks.push_back(1);
      continue;
    }
    const std::size_t dim = d - added;
    const Index extent = x.shape()[dim];
    plan.shape.push_back(CheckedMul(extent, reps[d]));
    plan.chunks.push_back(ChunkFor(x.chunks()[dim], plan.shape.back()));
    plan.axes.push_back(reps[d] > 1 ? AxisMap{static_cast<int>(dim), 0, 1, 1, extent}
                                    : AxisMap{static_cast<int>(dim)});
  }
  return Gather(x, std::move(plan.axes), Shape(static_cast<std::size_t>(x.ndim()), -1),
                std::move(plan.shape), std::move(plan.chunks));
}

}  // namespace tessera
