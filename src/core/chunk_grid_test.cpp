#include "tessera/core/chunk_grid.hpp"

#include <gtest/gtest.h>

#include <random>

#include "tessera/core/errors.hpp"
#include "test_seed.hpp"

namespace tessera {
namespace {

TEST(ChunkGrid, PartialLastBlocks) {
  ChunkGrid grid({10, 7}, {4, 4});
  EXPECT_EQ(grid.grid_shape(), (Shape{3, 2}));
  EXPECT_EQ(grid.num_blocks(), 6);
  EXPECT_EQ(grid.BlockRegion(Shape{2, 1}), (Region{{8, 4}, {2, 3}}));
  EXPECT_EQ(grid.BlockRegion(Shape{0, 0}), (Region{{0, 0}, {4, 4}}));
  EXPECT_EQ(grid.LinearIndex(Shape{2, 1}), 5);
  EXPECT_EQ(grid.BlockIndex(5), (Shape{2, 1}));
}

TEST(ChunkGrid, ZeroDimAndEmptyExtent) {
  ChunkGrid scalar({}, {});
  EXPECT_EQ(scalar.num_blocks(), 1);
  EXPECT_EQ(scalar.BlockRegion(Shape{}), (Region{{}, {}}));
  ChunkGrid empty({0, 5}, {3, 5});
  EXPECT_EQ(empty.num_blocks(), 0);
  EXPECT_EQ(empty.grid_shape(), (Shape{0, 1}));
}

TEST(ChunkGrid, InvalidGridsAreRejected) {
  EXPECT_THROW(ChunkGrid({10, 10}, {5}), InvalidArgument);
  EXPECT_THROW(ChunkGrid({10}, {0}), InvalidArgument);
  EXPECT_THROW(ChunkGrid({10}, {-1}), InvalidArgument);
  EXPECT_THROW(ChunkGrid({-1}, {1}), InvalidArgument);
  EXPECT_THROW(ChunkGrid({Index{1} << 40, Index{1} << 40}, {1, 1}), InvalidArgument);
  ChunkGrid grid({10}, {4});
  EXPECT_THROW(grid.CheckBlock(Shape{3}), InvalidArgument);
  EXPECT_THROW(grid.CheckBlock(Shape{0, 0}), InvalidArgument);
  EXPECT_NO_THROW(grid.CheckBlock(Shape{2}));
}

// Property: the blocks tile the array exactly once, and index conversions invert.
TEST(ChunkGrid, BlocksTileTheArray) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int trial = 0; trial < 200; ++trial) {
    const int ndim = static_cast<int>(rng() % 4) + 1;
    Shape shape(static_cast<std::size_t>(ndim));
    Shape chunks(static_cast<std::size_t>(ndim));
    for (int dim = 0; dim < ndim; ++dim) {
      shape[static_cast<std::size_t>(dim)] = static_cast<Index>(rng() % 9);
      chunks[static_cast<std::size_t>(dim)] = static_cast<Index>(rng() % 4) + 1;
    }
    ChunkGrid grid(shape, chunks);
    std::vector<int> covered(static_cast<std::size_t>(ShapeSize(shape)), 0);
    const Shape strides = CStrides(shape);
    for (Index linear = 0; linear < grid.num_blocks(); ++linear) {
      Shape block = grid.BlockIndex(linear);
      ASSERT_EQ(grid.LinearIndex(block), linear);
      Region region = grid.BlockRegion(block);
      // Visit every element of the region.
      Shape position(region.start);
      const Index count = ShapeSize(region.shape);
      for (Index element = 0; element < count; ++element) {
        Index rest = element;
        Index flat = 0;
        for (std::size_t dim = position.size(); dim-- > 0;) {
          flat += (region.start[dim] + rest % region.shape[dim]) * strides[dim];
          rest /= region.shape[dim];
        }
        ++covered[static_cast<std::size_t>(flat)];
      }
    }
    for (int count : covered) ASSERT_EQ(count, 1);
  }
}

}  // namespace
}  // namespace tessera
