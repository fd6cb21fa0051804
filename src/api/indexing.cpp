// Basic indexing and take as gathers (tessera/api/indexing.hpp).
#include "tessera/api/indexing.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/index_map.hpp"

namespace tessera {

using planner::AxisMap;
using planner::IndexMap;
using planner::MakeGather;
using planner::OneSourceMap;

namespace {

// The first index, step and length a slice selects along an axis of `extent`
// (Python's slice.indices).
struct SliceRange {
  Index start = 0;
  Index step = 1;
  Index length = 0;
};

SliceRange Resolve(const Slice& slice, Index extent) {
  const Index step = slice.step.value_or(1);
  if (step == 0) {
    throw InvalidArgument("index: a slice step cannot be zero; use 1 or more, or -1 or less");
  }
  // Bounds for the start and stop: [0, extent] going up, [-1, extent - 1] going down.
  const Index lower = step > 0 ? 0 : -1;
  const Index upper = step > 0 ? extent : extent - 1;
  const auto clamp = [&](std::optional<Index> value, Index otherwise) {
    if (!value) return otherwise;
    Index v = *value;
    if (v < 0) v += extent;
    return std::clamp(v, lower, upper);
  };
  const Index start = clamp(slice.start, step > 0 ? lower : upper);
  const Index stop = clamp(slice.stop, step > 0 ? upper : lower);
  SliceRange range{start, step, 0};
  if (step > 0 && stop > start) range.length = (stop - start - 1) / step + 1;
  if (step < 0 && start > stop) range.length = (start - stop - 1) / -step + 1;
  if (range.length == 0) range.start = 0;
  return range;
}

}  // namespace

Array index(const Array& x, const std::vector<IndexItem>& items) {
  int consumed = 0;  // axes of x the items index
  int ellipses = 0;
  for (const IndexItem& item : items) {
    if (std::holds_alternative<EllipsisIndex>(item.value())) {
      ++ellipses;
    } else if (!std::holds_alternative<NewAxisIndex>(item.value())) {
      ++consumed;
    }
  }
  if (ellipses > 1) {
    throw InvalidArgument("index: an index can only have a single ellipsis; use one at most");
  }
  if (consumed > x.ndim()) {
    throw InvalidArgument("index: too many indices for the array " + ShapeToString(x.shape()) +
                          ": it has " + std::to_string(x.ndim()) + " dimensions but " +
                          std::to_string(consumed) +
                          " were indexed; give at most one integer or slice per dimension");
  }
  std::vector<IndexItem> expanded;
  for (const IndexItem& item : items) {
    if (std::holds_alternative<EllipsisIndex>(item.value())) {
      expanded.insert(expanded.end(), static_cast<std::size_t>(x.ndim() - consumed), Slice());
    } else {
      expanded.push_back(item);
    }
  }
  if (ellipses == 0) {
    expanded.insert(expanded.end(), static_cast<std::size_t>(x.ndim() - consumed), Slice());
  }
  std::vector<AxisMap> axes;
  Shape fixed(static_cast<std::size_t>(x.ndim()), -1);
  Shape shape;
  Shape chunks;
  int axis = 0;  // the next axis of x
  for (const IndexItem& item : expanded) {
    if (std::holds_alternative<NewAxisIndex>(item.value())) {
      axes.push_back(AxisMap{});
      shape.push_back(1);
      chunks.push_back(1);
      continue;
    }
    const auto dim = static_cast<std::size_t>(axis);
    const Index extent = x.shape()[dim];
    if (const Index* integer = std::get_if<Index>(&item.value())) {
      if (*integer < -extent || *integer >= extent) {
        throw InvalidArgument("index: index " + std::to_string(*integer) +
                              " is out of bounds for axis " + std::to_string(axis) + " with size " +
                              std::to_string(extent) + " (use " + std::to_string(-extent) + " to " +
                              std::to_string(extent - 1) + ")");
      }
      fixed[dim] = *integer < 0 ? *integer + extent : *integer;
    } else {
      const SliceRange range = Resolve(std::get<Slice>(item.value()), extent);
      axes.push_back(AxisMap{axis, range.start, range.step});
      shape.push_back(range.length);
      chunks.push_back(std::max<Index>(1, std::min(x.chunks()[dim], range.length)));
    }
    ++axis;
  }
  IndexMap map = OneSourceMap(std::move(axes), std::move(fixed), shape);
  return Array(
      MakeGather({x.node()}, std::move(map), std::move(shape), std::move(chunks), x.dtype()),
      x.spec());
}

Array take(const Array& x, std::span<const Index> indices, int axis) {
  if (axis < -x.ndim() || axis >= x.ndim()) {
    throw InvalidArgument("take: axis " + std::to_string(axis) +
                          " is out of range for an array of " + std::to_string(x.ndim()) +
                          " dimensions (use " + std::to_string(-x.ndim()) + " to " +
                          std::to_string(x.ndim() - 1) + ")");
  }
  if (axis < 0) axis += x.ndim();
  const auto dim = static_cast<std::size_t>(axis);
  const Index extent = x.shape()[dim];
  std::vector<Index> table;
  table.reserve(indices.size());
  for (const Index at : indices) {
    if (at < -extent || at >= extent) {
      throw InvalidArgument("take: index " + std::to_string(at) + " is out of bounds for axis " +
                            std::to_string(axis) + " with size " + std::to_string(extent) +
                            " (use " + std::to_string(-extent) + " to " +
                            std::to_string(extent - 1) + ")");
    }
    table.push_back(at < 0 ? at + extent : at);
  }
  std::vector<AxisMap> axes;
  for (int d = 0; d < x.ndim(); ++d) axes.push_back(AxisMap{d});
  Shape shape = x.shape();
  Shape chunks = x.chunks();
  shape[dim] = static_cast<Index>(table.size());
  chunks[dim] = std::max<Index>(1, std::min(chunks[dim], shape[dim]));
  axes[dim].table = std::make_shared<const std::vector<Index>>(std::move(table));
  IndexMap map =
      OneSourceMap(std::move(axes), Shape(static_cast<std::size_t>(x.ndim()), -1), shape);
  return Array(
      MakeGather({x.node()}, std::move(map), std::move(shape), std::move(chunks), x.dtype()),
      x.spec());
}

Array Array::operator[](const IndexItem& item) const { return index(*this, {item}); }

Array Array::operator[](std::initializer_list<IndexItem> items) const {
  return index(*this, std::vector<IndexItem>(items));
}

}  // namespace tessera
