// Reference reads for tests of region reads: a region of an array copied element by
// element (what every ZarrArray::ReadRegion is checked against), and random regions.
// Test-only, header-only.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/ndarray.hpp"

namespace tessera::testing {

// array[region], element by element: the reference for every region read.
inline NDArray Slice(const NDArray& array, const Region& region) {
  NDArray out(region.shape, array.dtype());
  const auto itemsize = static_cast<std::size_t>(array.dtype().itemsize());
  const Shape strides = CStrides(array.shape());
  for (Index linear = 0; linear < out.size(); ++linear) {
    const Shape position = UnravelIndex(linear, region.shape);
    Index source = 0;
    for (std::size_t dim = 0; dim < position.size(); ++dim) {
      source += (position[dim] + region.start[dim]) * strides[dim];
    }
    std::memcpy(out.mutable_bytes().data() + static_cast<std::size_t>(linear) * itemsize,
                array.bytes().data() + static_cast<std::size_t>(source) * itemsize, itemsize);
  }
  return out;
}

inline Region RandomRegion(const Shape& shape, std::mt19937_64& rng) {
  Region region{Shape(shape.size()), Shape(shape.size())};
  for (std::size_t dim = 0; dim < shape.size(); ++dim) {
    const auto extent = static_cast<std::uint64_t>(shape[dim]);
    region.start[dim] = static_cast<Index>(rng() % (extent + 1));
    region.shape[dim] =
        static_cast<Index>(rng() % (extent - static_cast<std::uint64_t>(region.start[dim]) + 1));
  }
  return region;
}

}  // namespace tessera::testing
