// Basic indexing (numpy / the array API standard): integers (negative from the end),
// slices with steps (negative too), one ellipsis, new axes; and take, the elements at
// a list of indices along one axis (what integer-array indexing is made of).
//
//   using tessera::Slice;
//   auto a = x[3];                                        // x[3]
//   auto b = x[{Slice(1, std::nullopt, -2), -1}];         // x[1::-2, -1]
//   auto c = x[{tessera::ellipsis, tessera::newaxis}];    // x[..., None]
//   auto d = x[Slice::Every(10)];                         // x[::10]
//
// Lazy: the result is a gather (tessera/plan/internal/index_map.hpp) whose tasks read only the
// input chunks holding selected elements (x[::10] of chunks of 1 reads a tenth of
// them); chained indexing composes into one op. Slices keep the input's chunk sizes
// (cut to the result's extent), new axes have chunks of 1. Out-of-range integers,
// a zero step, two ellipses or too many indices throw InvalidArgument.
#pragma once

#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "tessera/api/array.hpp"

namespace tessera {

// start:stop:step, each optional as in Python.
struct Slice {
  std::optional<Index> start;
  std::optional<Index> stop;
  std::optional<Index> step;

  Slice() = default;  // ":"
  Slice(std::optional<Index> start_, std::optional<Index> stop_,
        std::optional<Index> step_ = std::nullopt)
      : start(start_), stop(stop_), step(step_) {}
  // "::step"
  static Slice Every(Index step) { return Slice(std::nullopt, std::nullopt, step); }
};

struct EllipsisIndex {};
struct NewAxisIndex {};
inline constexpr EllipsisIndex ellipsis{};  // "..."
inline constexpr NewAxisIndex newaxis{};    // None / np.newaxis

// One item of an index.
class IndexItem {
 public:
  using Value = std::variant<Index, Slice, EllipsisIndex, NewAxisIndex>;
  IndexItem(int index) : value_(static_cast<Index>(index)) {}  // NOLINT: implicit on purpose
  IndexItem(Index index) : value_(index) {}                    // NOLINT
  IndexItem(Slice slice) : value_(slice) {}                    // NOLINT
  IndexItem(EllipsisIndex all) : value_(all) {}                // NOLINT
  IndexItem(NewAxisIndex axis_) : value_(axis_) {}             // NOLINT
  const Value& value() const { return value_; }

 private:
  Value value_;
};

// x[items...]; also Array::operator[].
Array index(const Array& x, const std::vector<IndexItem>& items);

// The elements of x at `indices` along `axis` (numpy's take; negative indices count
// from the end): the result has x's shape with that axis `indices.size()` long, chunked
// as x is along it. Lazy, a gather: a task reads only the input chunks its indices
// fall in, one at a time, so its memory is one output block and one input chunk
// whatever the order of the indices. Out-of-range indices or axis throw InvalidArgument.
Array take(const Array& x, std::span<const Index> indices, int axis);

}  // namespace tessera
