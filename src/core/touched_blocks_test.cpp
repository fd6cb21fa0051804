#include "tessera/core/touched_blocks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include "test_seed.hpp"

namespace tessera {
namespace {

// DistinctTouchedBlocks against every touched block: a subset of them, in C order,
// with every (block shape, part inside the region) that any touched block has.
TEST(ChunkGrid, DistinctTouchedBlocksStandForAllTouched) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int trial = 0; trial < 500; ++trial) {
    const auto ndim = static_cast<std::size_t>(rng() % 4);
    Shape shape(ndim), chunks(ndim);
    Region region{Shape(ndim), Shape(ndim)};
    for (std::size_t dim = 0; dim < ndim; ++dim) {
      shape[dim] = static_cast<Index>(rng() % 30) + 1;
      chunks[dim] = static_cast<Index>(rng() % 7) + 1;
      region.start[dim] = static_cast<Index>(rng() % static_cast<std::uint64_t>(shape[dim]));
      region.shape[dim] =
          static_cast<Index>(rng() % static_cast<std::uint64_t>(shape[dim] - region.start[dim])) +
          1;
    }
    const ChunkGrid grid(shape, chunks);
    auto kind = [&](const Shape& block) {
      const Region whole = grid.BlockRegion(block);
      Shape inside(ndim);
      for (std::size_t dim = 0; dim < ndim; ++dim) {
        const Index begin = std::max(whole.start[dim], region.start[dim]);
        const Index end =
            std::min(whole.start[dim] + whole.shape[dim], region.start[dim] + region.shape[dim]);
        inside[dim] = end - begin;
      }
      return std::make_pair(whole.shape, inside);
    };
    std::set<Index> touched;
    std::set<std::pair<Shape, Shape>> every_kind;
    for (Index linear = 0; linear < grid.num_blocks(); ++linear) {
      const Shape block = grid.BlockIndex(linear);
      const auto [whole, inside] = kind(block);
      bool touches = true;
      for (std::size_t dim = 0; dim < ndim; ++dim) touches = touches && inside[dim] > 0;
      if (!touches) continue;
      touched.insert(linear);
      every_kind.insert({whole, inside});
    }
    const std::vector<Shape> distinct = DistinctTouchedBlocks(grid, region);
    std::set<std::pair<Shape, Shape>> kinds;
    Index previous = -1;
    for (const Shape& block : distinct) {
      const Index linear = grid.LinearIndex(block);
      ASSERT_TRUE(touched.count(linear)) << ShapeToString(block);
      ASSERT_GT(linear, previous) << "C order";
      previous = linear;
      kinds.insert(kind(block));
    }
    ASSERT_EQ(kinds, every_kind) << "shape " << ShapeToString(shape) << " chunks "
                                 << ShapeToString(chunks) << " region at "
                                 << ShapeToString(region.start) << " of "
                                 << ShapeToString(region.shape);
    ASSERT_LE(distinct.size(), touched.size());
  }
  // An empty region touches nothing.
  EXPECT_TRUE(DistinctTouchedBlocks(ChunkGrid({4, 4}, {2, 2}), Region{{0, 0}, {0, 3}}).empty());
}

}  // namespace
}  // namespace tessera
