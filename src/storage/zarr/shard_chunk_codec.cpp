#include "shard_chunk_codec.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <string>
#include <utility>

#include "chunk_layout.hpp"
#include "region_walk.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::zarr_detail {
namespace {

// Sizes saturate here (64 PiB), far above any allocation, so that sums over many inner
// chunks of a hostile document never overflow.
constexpr Index kMaxBound = Index{1} << 56;

Index SaturatingMulAdd(Index count, Index each, Index plus) {
  if (count != 0 && each > (kMaxBound - plus) / count) return kMaxBound;
  return count * each + plus;
}

ShardIndexLayout IndexLayoutOf(const ZarrSharding& sharding, Index entries) {
  ShardIndexLayout layout;
  layout.entries = entries;
  layout.big_endian = sharding.index_codecs.endian == ByteOrder::kBig;
  layout.checksum =
      std::ranges::any_of(sharding.index_codecs.bytes_codecs,
                          [](const CodecConfig& codec) { return codec.id == "crc32c"; });
  layout.at_end = sharding.index_at_end;
  return layout;
}

}  // namespace

std::vector<Index> ShardWriteOrder(std::span<const Index> grid_shape) {
  const std::size_t ndim = grid_shape.size();
  std::vector<int> bits(ndim);
  int max_bits = 0;
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    bits[dim] = static_cast<int>(
        std::bit_width(static_cast<std::uint64_t>(std::max<Index>(grid_shape[dim] - 1, 0))));
    max_bits = std::max(max_bits, bits[dim]);
  }
  const Index count = ShapeSize(Shape(grid_shape.begin(), grid_shape.end()));
  std::vector<std::pair<std::uint64_t, Index>> coded;
  coded.reserve(static_cast<std::size_t>(count));
  Shape position(ndim, 0);
  for (Index linear = 0; linear < count; ++linear) {
    Index rest = linear;
    for (std::size_t dim = ndim; dim-- > 0;) {
      position[dim] = rest % grid_shape[dim];
      rest /= grid_shape[dim];
    }
    // Interleave the coordinates' bits, lowest first, dimension 0 first at each level,
    // skipping dimensions whose bits are used up (the "compressed" Morton code).
    std::uint64_t code = 0;
    int out_bit = 0;
    for (int bit = 0; bit < max_bits; ++bit) {
      for (std::size_t dim = 0; dim < ndim; ++dim) {
        if (bit >= bits[dim]) continue;
        code |= static_cast<std::uint64_t>((position[dim] >> bit) & 1) << out_bit;
        ++out_bit;
      }
    }
    coded.emplace_back(code, linear);
  }
  std::ranges::sort(coded);
  std::vector<Index> order;
  order.reserve(coded.size());
  for (const auto& entry : coded) order.push_back(entry.second);
  return order;
}

ShardChunkCodec::ShardChunkCodec(Shape shard_shape, DType dtype, const FillValue& fill,
                                 const ZarrSharding& sharding,
                                 std::unique_ptr<const ChunkCodec> inner, int depth)
    : ChunkCodec(shard_shape, dtype, fill),
      inner_grid_(std::move(shard_shape), sharding.chunk_shape),
      index_layout_(IndexLayoutOf(sharding, inner_grid_.num_blocks())),
      inner_(std::move(inner)),
      depth_(depth) {
  if (depth_ < 0 || depth_ >= kMaxShardingDepth) {
    throw InvalidArgument("sharding nested " + std::to_string(depth_ + 1) +
                          " levels deep; at most " + std::to_string(kMaxShardingDepth));
  }
  const Index entries = inner_grid_.num_blocks();
  max_stored_bytes_ =
      SaturatingMulAdd(entries, inner_->max_stored_bytes(), index_layout_.IndexBytes());
  max_encoded_bytes_ =
      SaturatingMulAdd(entries, inner_->max_encoded_bytes(), index_layout_.IndexBytes());
}

std::optional<ShardIndex> ShardChunkCodec::ReadIndex(const ValueRef& value) const {
  return ShardIndex::Read(*value.store, *value.key, index_layout_, value.range);
}

void ShardChunkCodec::ReadPart(const ValueRef& value, const Region& box, std::byte* dst,
                               std::span<const Index> dst_strides, bool /*dst_contiguous*/,
                               ChunkScratch& scratch) const {
  if (ShapeSize(box.shape) == 0) return;
  if (value.range.size < 0) {
    // A whole shard: opened once, so that its index and inner chunks are read from one
    // version of it without opening it again for each.
    const PinnedValueStore opened(*value.store, *value.key);
    const ValueRef opened_value{&opened, value.key, value.range};
    ReadPartIndexed(opened_value, ReadIndex(opened_value), box, dst, dst_strides, scratch);
    return;
  }
  ReadPartIndexed(value, ReadIndex(value), box, dst, dst_strides, scratch);
}

void ShardChunkCodec::ReadPartIndexed(const ValueRef& value, const std::optional<ShardIndex>& index,
                                      const Region& box, std::byte* dst,
                                      std::span<const Index> dst_strides,
                                      ChunkScratch& scratch) const {
  if (ShapeSize(box.shape) == 0) return;
  if (!index) {
    FillBox(box.shape, dst, dst_strides, FillNative());
    return;
  }
  const TouchedRange range = TouchedBlocks(inner_grid_, box);
  for (Index linear = 0, count = ShapeSize(range.counts); linear < count; ++linear) {
    const TouchedBox touched = TouchedBoxAt(inner_grid_, box, range, linear);
    std::byte* const part = dst + ByteOffset(touched.out_start, dst_strides);
    const Index entry = inner_grid_.LinearIndex(touched.block);
    if (index->entry(entry).empty()) {
      FillBox(touched.box.shape, part, dst_strides, FillNative());
      continue;
    }
    const ValueRef inner_value{value.store, value.key, index->EntryRange(entry)};
    inner_->ReadPart(inner_value, touched.box, part, dst_strides,
                     IsCContiguous(touched.box.shape, dst_strides, itemsize_), scratch);
  }
}

std::optional<std::span<const std::byte>> ShardChunkCodec::Encode(
    std::span<const Index> block_shape, const std::byte* src, std::span<const Index> src_strides,
    bool /*src_contiguous*/, bool /*omit_fill*/, ChunkScratch& scratch) const {
  ShardBuilder& builder = scratch.shards[static_cast<std::size_t>(depth_)];
  builder.Start(index_layout_,
                SaturatingMulAdd(InnerChunksIn(block_shape), inner_->max_encoded_bytes(), 0));
  const Shape& inner_chunk = inner_grid_.chunks();
  const std::size_t ndim = block_shape.size();
  Shape start(ndim);
  Shape extent(ndim);
  for (const Index linear : WriteOrder()) {
    const Shape block = inner_grid_.BlockIndex(linear);
    bool inside = true;
    for (std::size_t dim = 0; dim < ndim; ++dim) {
      start[dim] = block[dim] * inner_chunk[dim];
      extent[dim] = std::min(inner_chunk[dim], block_shape[dim] - start[dim]);
      inside = inside && extent[dim] > 0;
    }
    if (!inside) continue;  // past the array's edge: all fill, never stored
    const std::optional<std::span<const std::byte>> encoded =
        inner_->Encode(extent, src + ByteOffset(start, src_strides), src_strides,
                       IsCContiguous(extent, src_strides, itemsize_), /*omit_fill=*/true, scratch);
    if (encoded) builder.Add(linear, *encoded);
  }
  if (builder.empty()) return std::nullopt;
  return builder.Finish();
}

const std::vector<Index>& ShardChunkCodec::WriteOrder() const {
  std::call_once(write_order_once_,
                 [&] { write_order_ = ShardWriteOrder(inner_grid_.grid_shape()); });
  return write_order_;
}

Index ShardChunkCodec::InnerChunksIn(std::span<const Index> block_shape) const {
  Index count = 1;
  for (std::size_t dim = 0; dim < block_shape.size(); ++dim) {
    count *= (block_shape[dim] + inner_grid_.chunks()[dim] - 1) / inner_grid_.chunks()[dim];
  }
  return count;
}

ScratchBytes ShardChunkCodec::ReadScratch(const Region& /*box*/, bool /*dst_contiguous*/,
                                          Index stored_size) const {
  // The index as read and as decoded (an entry per inner chunk), then one inner chunk's
  // read at a time; inner boxes are taken as not contiguous (the larger figure).
  ScratchBytes bytes =
      inner_->ReadScratch(Region{Shape(inner_grid_.chunks().size(), 0), inner_grid_.chunks()},
                          /*dst_contiguous=*/false, stored_size);
  // ShardIndex::Read: the encoded index, its entries and the order it checks them in.
  bytes.shard[static_cast<std::size_t>(depth_)] =
      index_layout_.IndexBytes() +
      index_layout_.entries * Index{sizeof(ShardEntry) + sizeof(std::int64_t)};
  return bytes;
}

ScratchBytes ShardChunkCodec::WriteScratch(std::span<const Index> block_shape,
                                           bool /*src_contiguous*/) const {
  ScratchBytes bytes = inner_->WriteScratch(inner_grid_.chunks(), /*src_contiguous=*/false);
  // The shard assembled (its inner chunks and index) and the builder's entries.
  bytes.shard[static_cast<std::size_t>(depth_)] = SaturatingMulAdd(
      InnerChunksIn(block_shape), inner_->max_encoded_bytes(),
      index_layout_.IndexBytes() + index_layout_.entries * Index{sizeof(ShardEntry)});
  return bytes;
}

}  // namespace tessera::zarr_detail
