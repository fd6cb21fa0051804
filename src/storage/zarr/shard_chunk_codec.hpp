// ShardChunkCodec: Zarr v3's sharding_indexed codec (chunk_codec.hpp): a shard is a grid
// of inner chunks, each encoded by the inner codec, stored one after another with an
// index (storage/sharding's ShardIndex and ShardBuilder lay the container out).
//
//   ShardChunkCodec codec(shard_shape, dtype, fill, sharding, std::move(inner), depth);
//
// Reading a box opens the shard once (PinnedValueStore), reads its index (one ranged
// read), then each inner chunk the box touches (one ranged read each) from that same
// version of the shard; inner chunks with an empty index entry read as the
// fill value, and so does an absent shard. Writing encodes inner chunks in zarr-python's
// order (compressed Morton order: the bits of the inner chunk coordinates interleaved,
// dimension 0 lowest), leaves out inner chunks entirely equal to the fill value and
// those past the array's edge, and yields no shard when that leaves none.
//
// Internal to src/storage/zarr. Immutable and thread-safe; a codec at nesting `depth`
// assembles into scratch.shards[depth].
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "chunk_codec.hpp"

namespace tessera::zarr_detail {

class ShardChunkCodec final : public ChunkCodec {
 public:
  // REQUIRES: sharding.chunk_shape divides shard_shape; inner encodes chunks of it;
  // depth < kMaxShardingDepth.
  ShardChunkCodec(Shape shard_shape, DType dtype, const FillValue& fill,
                  const ZarrSharding& sharding, std::unique_ptr<const ChunkCodec> inner, int depth);

  void ReadPart(const ValueRef& value, const Region& box, std::byte* dst,
                std::span<const Index> dst_strides, bool dst_contiguous,
                ChunkScratch& scratch) const override;
  std::optional<std::span<const std::byte>> Encode(std::span<const Index> block_shape,
                                                   const std::byte* src,
                                                   std::span<const Index> src_strides,
                                                   bool src_contiguous, bool omit_fill,
                                                   ChunkScratch& scratch) const override;
  ScratchBytes ReadScratch(const Region& box, bool dst_contiguous,
                           Index stored_size) const override;
  ScratchBytes WriteScratch(std::span<const Index> block_shape, bool src_contiguous) const override;
  Index max_stored_bytes() const override { return max_stored_bytes_; }
  Index max_encoded_bytes() const override { return max_encoded_bytes_; }
  Index max_leaf_stored_bytes() const override { return inner_->max_leaf_stored_bytes(); }

  // The index of the shard at `value`; nullopt when the shard is absent.
  std::optional<ShardIndex> ReadIndex(const ValueRef& value) const;
  // ReadPart of the shard whose index `index` is (ReadIndex's, read once for many parts).
  void ReadPartIndexed(const ValueRef& value, const std::optional<ShardIndex>& index,
                       const Region& box, std::byte* dst, std::span<const Index> dst_strides,
                       ChunkScratch& scratch) const;

  const ShardIndexLayout& index_layout() const { return index_layout_; }
  // The inner chunks' grid over the full shard.
  const ChunkGrid& inner_grid() const { return inner_grid_; }

 private:
  // Inner chunks of a block of `block_shape` that hold any of its elements.
  Index InnerChunksIn(std::span<const Index> block_shape) const;

  ChunkGrid inner_grid_;
  ShardIndexLayout index_layout_;
  std::unique_ptr<const ChunkCodec> inner_;
  int depth_;
  // Inner chunks (C-order linear indexes) in the order a shard stores them: made on the
  // first write (readers never need it), once.
  const std::vector<Index>& WriteOrder() const;
  mutable std::once_flag write_order_once_;
  mutable std::vector<Index> write_order_;
  Index max_stored_bytes_;
  Index max_encoded_bytes_;
};

// The inner chunks of a grid of `grid_shape` in zarr-python's shard order (compressed
// Morton order), as C-order linear indexes.
std::vector<Index> ShardWriteOrder(std::span<const Index> grid_shape);

}  // namespace tessera::zarr_detail
