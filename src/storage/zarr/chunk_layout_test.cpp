#include "chunk_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "test_seed.hpp"

namespace tessera::zarr_detail {
namespace {

using Bytes = std::vector<std::byte>;

Bytes RandomBytes(std::mt19937_64& rng, Index count) {
  Bytes bytes(static_cast<std::size_t>(count));
  for (std::byte& byte : bytes) byte = static_cast<std::byte>(rng() & 0xff);
  return bytes;
}

// 'C' or 'F' for the layouts these tests make.
char OrderOf(const ChunkLayout& layout) { return layout.memory_order.empty() ? 'C' : 'F'; }
void SetOrder(ChunkLayout& layout, char order) {
  layout.memory_order =
      order == 'F' ? ChunkLayout::FortranOrder(layout.chunk_shape.size()) : std::vector<Index>{};
}

// Element offset of `position` in a chunk stored in `order`, computed from scratch.
Index ReferenceOffset(std::span<const Index> position, std::span<const Index> shape, char order) {
  Index offset = 0;
  if (order == 'C') {
    for (std::size_t dim = 0; dim < shape.size(); ++dim)
      offset = offset * shape[dim] + position[dim];
  } else {
    for (std::size_t dim = shape.size(); dim-- > 0;) offset = offset * shape[dim] + position[dim];
  }
  return offset;
}

// The stored chunk a block should produce, element by element.
Bytes ReferenceChunk(const ChunkLayout& layout, std::span<const Index> block_shape,
                     const Bytes& block, const Bytes& stored_fill) {
  const std::size_t itemsize = static_cast<std::size_t>(layout.itemsize);
  const Index count = ShapeSize(layout.chunk_shape);
  Bytes chunk(static_cast<std::size_t>(count) * itemsize);
  for (Index linear = 0; linear < count; ++linear) {
    const Shape position = UnravelIndex(linear, layout.chunk_shape);
    const std::size_t offset =
        static_cast<std::size_t>(ReferenceOffset(position, layout.chunk_shape, OrderOf(layout))) *
        itemsize;
    bool inside = true;
    for (std::size_t dim = 0; dim < position.size(); ++dim) {
      inside = inside && position[dim] < block_shape[dim];
    }
    if (!inside) {
      std::copy(stored_fill.begin(), stored_fill.end(), chunk.begin() + std::ptrdiff_t(offset));
      continue;
    }
    const std::size_t source =
        static_cast<std::size_t>(ReferenceOffset(position, block_shape, 'C')) * itemsize;
    for (std::size_t byte = 0; byte < itemsize; ++byte) {
      const std::size_t from = layout.byteswap ? itemsize - 1 - byte : byte;
      chunk[offset + byte] = block[source + from];
    }
  }
  return chunk;
}

ChunkLayout RandomLayout(std::mt19937_64& rng, int ndim, Index max_extent) {
  ChunkLayout layout;
  layout.chunk_shape.resize(static_cast<std::size_t>(ndim));
  for (Index& extent : layout.chunk_shape) {
    extent = 1 + static_cast<Index>(rng() % static_cast<std::uint64_t>(max_extent));
  }
  static constexpr Index kItemSizes[] = {1, 2, 4, 8};
  layout.itemsize = kItemSizes[rng() % 4];
  SetOrder(layout, rng() % 2 == 0 ? 'C' : 'F');
  layout.byteswap = layout.itemsize > 1 && rng() % 2 == 0;
  return layout;
}

Shape RandomBlockShape(std::mt19937_64& rng, const ChunkLayout& layout) {
  Shape block(layout.chunk_shape.size());
  for (std::size_t dim = 0; dim < block.size(); ++dim) {
    const Index chunk = layout.chunk_shape[dim];
    // Half the time the full extent, so interior chunks and partial edges both occur.
    block[dim] = rng() % 2 == 0 ? chunk : 1 + static_cast<Index>(rng() % std::uint64_t(chunk));
  }
  return block;
}

TEST(ChunkLayoutTest, StridesFollowOrder) {
  ChunkLayout layout{.chunk_shape = {2, 3, 4}, .itemsize = 8, .memory_order = {}};
  EXPECT_EQ(layout.ChunkStrides(), (Shape{96, 32, 8}));
  SetOrder(layout, 'F');
  EXPECT_EQ(layout.ChunkStrides(), (Shape{8, 16, 48}));
  EXPECT_EQ(layout.ChunkBytes(), 192);
  EXPECT_EQ(ByteStrides(Shape{5, 7}, 4), (Shape{28, 4}));
}

TEST(ChunkLayoutTest, IdentityOnlyForUnclippedCOrderNativeChunks) {
  ChunkLayout layout{.chunk_shape = {4, 5}, .itemsize = 4, .memory_order = {}};
  EXPECT_TRUE(layout.IsIdentityFor(Shape{4, 5}));
  EXPECT_FALSE(layout.IsIdentityFor(Shape{4, 3}));
  layout.byteswap = true;
  EXPECT_FALSE(layout.IsIdentityFor(Shape{4, 5}));
  layout.byteswap = false;
  SetOrder(layout, 'F');
  EXPECT_FALSE(layout.MemoryOrderIsC());
  EXPECT_FALSE(layout.IsIdentityFor(Shape{4, 5}));
  // With one dimension of extent > 1, 'F' and 'C' are the same layout.
  layout.chunk_shape = {1, 5, 1};
  EXPECT_TRUE(layout.MemoryOrderIsC());
  EXPECT_TRUE(layout.IsIdentityFor(Shape{1, 5, 1}));
  layout.chunk_shape = {};
  EXPECT_TRUE(layout.IsIdentityFor(Shape{}));
}

TEST(ChunkLayoutTest, ForReadsMetadata) {
  ZarrMetadata metadata;
  metadata.shape = {10};
  metadata.chunks = {4};
  metadata.dtype = int16;
  metadata.byte_order = ByteOrder::kBig;
  metadata.order = 'F';
  ChunkLayout layout = ChunkLayout::For(metadata);
  EXPECT_EQ(layout.chunk_shape, Shape{4});
  EXPECT_EQ(layout.itemsize, 2);
  EXPECT_EQ(OrderOf(layout), 'F');
  EXPECT_TRUE(layout.byteswap);
  EXPECT_FALSE(layout.is_bool);
  metadata.dtype = bool_;
  layout = ChunkLayout::For(metadata);
  EXPECT_FALSE(layout.byteswap);  // one-byte items have no byte order
  EXPECT_TRUE(layout.is_bool);
  EXPECT_EQ(layout.ReadTransform(), ElementTransform::kNormalizeBool);
  EXPECT_EQ(layout.WriteTransform(), ElementTransform::kNone);
  metadata.dtype = complex128;
  metadata.byte_order = ByteOrder::kBig;
  layout = ChunkLayout::For(metadata);
  EXPECT_EQ(layout.itemsize, 16);
  EXPECT_TRUE(layout.is_complex);
  EXPECT_EQ(layout.ReadTransform(), ElementTransform::kByteSwapHalves);
}

TEST(ChunkLayoutTest, StoredFillIsSwappedForBigEndian) {
  ChunkLayout layout{.chunk_shape = {2}, .itemsize = 4, .memory_order = {}, .byteswap = true};
  const Bytes native = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  Bytes stored(4);
  layout.StoredFill(native, stored);
  EXPECT_EQ(stored, (Bytes{std::byte{4}, std::byte{3}, std::byte{2}, std::byte{1}}));
}

TEST(ChunkLayoutTest, BlockToChunkMatchesReferenceOnRandomLayouts) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int trial = 0; trial < 400; ++trial) {
    const int ndim = static_cast<int>(rng() % 5);
    const ChunkLayout layout = RandomLayout(rng, ndim, 7);
    const Shape block_shape = RandomBlockShape(rng, layout);
    SCOPED_TRACE("trial " + std::to_string(trial) + " chunk " + ShapeToString(layout.chunk_shape) +
                 " block " + ShapeToString(block_shape) + " itemsize " +
                 std::to_string(layout.itemsize) + " order " + OrderOf(layout) +
                 (layout.byteswap ? " swapped" : ""));
    const Bytes block = RandomBytes(rng, ShapeSize(block_shape) * layout.itemsize);
    const Bytes fill = RandomBytes(rng, layout.itemsize);
    Bytes chunk(static_cast<std::size_t>(layout.ChunkBytes()));
    BlockToChunk(layout, block_shape, block.data(), ByteStrides(block_shape, layout.itemsize), fill,
                 chunk);
    ASSERT_EQ(chunk, ReferenceChunk(layout, block_shape, block, fill));

    // And back: the block comes out unchanged.
    Bytes back(block.size());
    ChunkToBlock(layout, chunk, Region{Shape(block_shape.size(), 0), block_shape}, back.data(),
                 ByteStrides(block_shape, layout.itemsize));
    ASSERT_EQ(back, block);
  }
}

TEST(ChunkLayoutTest, ChunkToBlockCopiesAnyBoxIntoAStridedDestination) {
  std::mt19937_64 rng(testing::TestSeed() + 1);
  for (int trial = 0; trial < 300; ++trial) {
    const int ndim = 1 + static_cast<int>(rng() % 4);
    const ChunkLayout layout = RandomLayout(rng, ndim, 9);
    const std::size_t itemsize = static_cast<std::size_t>(layout.itemsize);
    Region box{Shape(static_cast<std::size_t>(ndim)), Shape(static_cast<std::size_t>(ndim))};
    Shape dst_shape(static_cast<std::size_t>(ndim));
    Shape dst_start(static_cast<std::size_t>(ndim));
    for (std::size_t dim = 0; dim < box.start.size(); ++dim) {
      const auto chunk = static_cast<std::uint64_t>(layout.chunk_shape[dim]);
      box.start[dim] = static_cast<Index>(rng() % chunk);
      box.shape[dim] = 1 + static_cast<Index>(rng() % (chunk - std::uint64_t(box.start[dim])));
      dst_start[dim] = static_cast<Index>(rng() % 3);
      dst_shape[dim] = dst_start[dim] + box.shape[dim] + static_cast<Index>(rng() % 3);
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Bytes chunk = RandomBytes(rng, layout.ChunkBytes());
    const Bytes original = RandomBytes(rng, ShapeSize(dst_shape) * layout.itemsize);
    Bytes dst = original;
    const Shape dst_strides = ByteStrides(dst_shape, layout.itemsize);
    Index offset = 0;
    for (std::size_t dim = 0; dim < dst_start.size(); ++dim) {
      offset += dst_start[dim] * dst_strides[dim];
    }
    ChunkToBlock(layout, chunk, box, dst.data() + offset, dst_strides);

    for (Index linear = 0; linear < ShapeSize(dst_shape); ++linear) {
      const Shape position = UnravelIndex(linear, dst_shape);
      bool inside = true;
      Shape chunk_position(position.size());
      for (std::size_t dim = 0; dim < position.size(); ++dim) {
        chunk_position[dim] = position[dim] - dst_start[dim] + box.start[dim];
        inside = inside && position[dim] >= dst_start[dim] &&
                 position[dim] < dst_start[dim] + box.shape[dim];
      }
      const std::size_t at = static_cast<std::size_t>(linear) * itemsize;
      for (std::size_t byte = 0; byte < itemsize; ++byte) {
        std::byte expected = original[at + byte];
        if (inside) {
          const std::size_t from = static_cast<std::size_t>(ReferenceOffset(
                                       chunk_position, layout.chunk_shape, OrderOf(layout))) *
                                       itemsize +
                                   (layout.byteswap ? itemsize - 1 - byte : byte);
          expected = chunk[from];
        }
        ASSERT_EQ(dst[at + byte], expected) << "element " << ShapeToString(position);
      }
    }
  }
}

TEST(ChunkLayoutTest, LargeTransposesMatchReference) {
  // Big enough that the tiled transposition runs over several full and partial tiles.
  std::mt19937_64 rng(testing::TestSeed() + 2);
  for (Index itemsize : {1, 2, 4, 8}) {
    for (const Shape& chunk_shape : {Shape{100, 70}, Shape{3, 45, 37}, Shape{33, 1, 65}}) {
      ChunkLayout layout{.chunk_shape = chunk_shape, .itemsize = itemsize, .memory_order = {}};
      SetOrder(layout, 'F');
      layout.byteswap = itemsize > 1;
      Shape block_shape = chunk_shape;
      block_shape[0] -= 1;
      const Bytes block = RandomBytes(rng, ShapeSize(block_shape) * itemsize);
      const Bytes fill = RandomBytes(rng, itemsize);
      Bytes chunk(static_cast<std::size_t>(layout.ChunkBytes()));
      BlockToChunk(layout, block_shape, block.data(), ByteStrides(block_shape, itemsize), fill,
                   chunk);
      ASSERT_EQ(chunk, ReferenceChunk(layout, block_shape, block, fill));
      Bytes back(block.size());
      ChunkToBlock(layout, chunk, Region{Shape(block_shape.size(), 0), block_shape}, back.data(),
                   ByteStrides(block_shape, itemsize));
      ASSERT_EQ(back, block);
    }
  }
}

TEST(ChunkLayoutTest, BoolsAreNormalisedOnRead) {
  ChunkLayout layout{.chunk_shape = {2, 3}, .itemsize = 1, .memory_order = {}, .byteswap = false, .is_bool = true};
  const Bytes chunk = {std::byte{0},   std::byte{1}, std::byte{2},
                       std::byte{255}, std::byte{0}, std::byte{128}};
  Bytes block(6);
  ChunkToBlock(layout, chunk, Region{{0, 0}, {2, 3}}, block.data(), ByteStrides(Shape{2, 3}, 1));
  const Bytes expected = {std::byte{0}, std::byte{1}, std::byte{1},
                          std::byte{1}, std::byte{0}, std::byte{1}};
  EXPECT_EQ(block, expected);
  Bytes in_place = chunk;
  FinishInPlace(layout, in_place);
  EXPECT_EQ(in_place, expected);
}

TEST(ChunkLayoutTest, FinishInPlaceSwapsBigEndian) {
  ChunkLayout layout{.chunk_shape = {2}, .itemsize = 2, .memory_order = {}, .byteswap = true};
  Bytes bytes = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  FinishInPlace(layout, bytes);
  EXPECT_EQ(bytes, (Bytes{std::byte{2}, std::byte{1}, std::byte{4}, std::byte{3}}));
  layout.byteswap = false;
  FinishInPlace(layout, bytes);  // native: nothing to do
  EXPECT_EQ(bytes, (Bytes{std::byte{2}, std::byte{1}, std::byte{4}, std::byte{3}}));
}

// Bytes 0, 1, ..., n - 1.
Bytes Counting(int n) {
  Bytes bytes(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::byte>(i);
  return bytes;
}

// Each part of a big-endian complex number is a float of its own: the halves are
// reversed one by one, never the whole item (which would swap the parts too).
TEST(ChunkLayoutTest, ComplexItemsSwapEachPart) {
  for (const Index itemsize : {Index{8}, Index{16}}) {
    SCOPED_TRACE(itemsize);
    ChunkLayout layout{
        .chunk_shape = {2}, .itemsize = itemsize, .memory_order = {}, .byteswap = true,
        .is_bool = false, .is_complex = true};
    EXPECT_EQ(layout.WriteTransform(), ElementTransform::kByteSwapHalves);
    const int half = static_cast<int>(itemsize / 2);
    Bytes expected;
    for (int part = 0; part < 4; ++part) {  // two items of two parts
      for (int byte = half - 1; byte >= 0; --byte) {
        expected.push_back(static_cast<std::byte>(part * half + byte));
      }
    }
    Bytes bytes = Counting(static_cast<int>(2 * itemsize));
    FinishInPlace(layout, bytes);
    EXPECT_EQ(bytes, expected);
    Bytes fill(static_cast<std::size_t>(itemsize));
    const Bytes native_fill = Counting(static_cast<int>(itemsize));
    layout.StoredFill(native_fill, fill);
    EXPECT_EQ(fill, Bytes(expected.begin(), expected.begin() + itemsize));
    // Through a strided copy (BlockToChunk's path) as in place.
    Bytes chunk(static_cast<std::size_t>(2 * itemsize));
    const Bytes block = Counting(static_cast<int>(2 * itemsize));
    BlockToChunk(layout, Shape{2}, block.data(), ByteStrides(Shape{2}, itemsize), fill, chunk);
    EXPECT_EQ(chunk, expected);
  }
}

TEST(ChunkLayoutTest, FillBoxWritesOnlyTheBox) {
  for (Index itemsize : {1, 2, 4, 8}) {
    const Shape shape = {4, 5, 6};
    Bytes array(static_cast<std::size_t>(ShapeSize(shape) * itemsize), std::byte{0xee});
    Bytes element(static_cast<std::size_t>(itemsize));
    for (std::size_t byte = 0; byte < element.size(); ++byte) element[byte] = std::byte(byte + 1);
    const Shape strides = ByteStrides(shape, itemsize);
    const Shape start = {1, 2, 3};
    const Shape box = {2, 3, 2};
    FillBox(box,
            array.data() + start[0] * strides[0] + start[1] * strides[1] + start[2] * strides[2],
            strides, element);
    for (Index linear = 0; linear < ShapeSize(shape); ++linear) {
      const Shape position = UnravelIndex(linear, shape);
      bool inside = true;
      for (std::size_t dim = 0; dim < 3; ++dim) {
        inside = inside && position[dim] >= start[dim] && position[dim] < start[dim] + box[dim];
      }
      for (std::size_t byte = 0; byte < element.size(); ++byte) {
        ASSERT_EQ(array[static_cast<std::size_t>(linear * itemsize) + byte],
                  inside ? element[byte] : std::byte{0xee});
      }
    }
  }
}

TEST(ChunkLayoutTest, ZeroExtentBoxesCopyNothing) {
  Bytes src(16, std::byte{1});
  Bytes dst(16, std::byte{2});
  CopyBox(Shape{0, 4}, src.data(), Shape{8, 2}, dst.data(), Shape{8, 2}, 2,
          ElementTransform::kNone);
  FillBox(Shape{4, 0}, dst.data(), Shape{8, 2}, Bytes{std::byte{3}, std::byte{3}});
  EXPECT_EQ(dst, Bytes(16, std::byte{2}));
}

TEST(ChunkLayoutTest, ZeroDimensionalChunkIsOneElement) {
  ChunkLayout layout{.chunk_shape = {}, .itemsize = 8, .memory_order = {}, .byteswap = true};
  const Bytes block = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4},
                       std::byte{5}, std::byte{6}, std::byte{7}, std::byte{8}};
  Bytes chunk(8);
  BlockToChunk(layout, Shape{}, block.data(), Shape{}, Bytes(8), chunk);
  EXPECT_EQ(chunk, Bytes(block.rbegin(), block.rend()));
  Bytes back(8);
  ChunkToBlock(layout, chunk, Region{}, back.data(), Shape{});
  EXPECT_EQ(back, block);
}

}  // namespace
}  // namespace tessera::zarr_detail
