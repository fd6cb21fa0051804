// Index arithmetic for N-dimensional shapes.
//
// `Index` is the one signed 64-bit type for element counts, extents and byte sizes.
// Products of extents go through CheckedMul/ShapeSize, which throw InvalidArgument
// on overflow instead of wrapping.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

using Index = std::int64_t;
using Shape = std::vector<Index>;

// a * b; throws InvalidArgument("... overflows ...") when the product does not fit.
Index CheckedMul(Index a, Index b);
// a + b; throws InvalidArgument on overflow.
Index CheckedAdd(Index a, Index b);

// Number of elements of `shape` (1 for a 0-d shape); throws on overflow.
Index ShapeSize(std::span<const Index> shape);

// Ceiling division for a >= 0, b > 0.
constexpr Index CeilDiv(Index a, Index b) { return a / b + (a % b != 0 ? 1 : 0); }

// "(10000, 1000)" — numpy's tuple notation, "()" for 0-d.
std::string ShapeToString(std::span<const Index> shape);

// Parses "8760,181,360" into {8760, 181, 360}; "" gives {} (0-d). Throws InvalidArgument
// naming `what` (e.g. "--chunks") when an item is not an integer. Callers check ranges.
Shape ParseShape(std::string_view text, std::string_view what);

// C-order strides in elements for `shape`.
Shape CStrides(std::span<const Index> shape);

// The position of the C-order `linear` index within `shape` (numpy's unravel_index).
// REQUIRES: 0 <= linear < ShapeSize(shape).
Shape UnravelIndex(Index linear, std::span<const Index> shape);

}  // namespace tessera
