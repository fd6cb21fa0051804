// ChunkCodec: how one chunk of a Zarr array (v2, or v3's whole codec pipeline) becomes a
// stored value and back. Two kinds, nested as the metadata says:
//
//   leaf   a chunk stored as one value: its element layout (order or transpose, byte
//          order, float16 storage) then bytes-to-bytes codecs (v2's filters and
//          compressor; v3's blosc, zstd, gzip, crc32c);
//   shard  v3's sharding_indexed: a grid of inner chunks, each encoded by an inner
//          ChunkCodec (a leaf, or a shard again), laid out with an index by the
//          container of storage/sharding (ShardIndex, ShardBuilder).
//
//   std::unique_ptr<const ChunkCodec> codec = MakeChunkCodec(metadata);   // once per array
//   ChunkScratch scratch;                                   // one per thread, reused
//   codec->ReadPart(ValueRef{&store, &key}, box, dst, dst_strides, contiguous, scratch);
//   std::optional<std::span<const std::byte>> bytes =
//       codec->Encode(block_shape, src, src_strides, contiguous, /*omit_fill=*/false, scratch);
//
// Reading a shard reads its index, then only the inner chunks the box touches, each by
// byte range; a box never reads a whole shard it does not need. Writing encodes the
// inner chunks in zarr-python's order (its compressed Morton order), leaves out those
// whose every element is the fill value (bit for bit) and returns nullopt when that
// leaves none (zarr-python then stores no shard).
//
// Bounded reads: a stored value (chunk, shard entry) larger than the codec's largest
// valid encoding is a FormatError naming the key before anything that size is
// allocated; a shard's index is checked (ShardIndex) before any entry is read.
// Errors name the key, and for inner chunks the byte range and the inner chunk.
//
// Internal to src/storage/zarr. Codecs are immutable and thread-safe; each thread
// passes its own ChunkScratch. Lifetime: ValueRef points at its store and key, which
// must outlive the call.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/buffer.hpp"
#include "tessera/core/chunk_grid.hpp"
#include "tessera/storage/shard_index.hpp"
#include "tessera/storage/store.hpp"
#include "metadata_sizes.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::zarr_detail {

// The largest item size of a Tessera dtype (complex128).
inline constexpr std::size_t kMaxItemSize = 16;

// Where a chunk's stored bytes are: a whole value, or a byte range of one (an inner
// chunk of a shard).
struct ValueRef {
  const Store* store = nullptr;
  const std::string* key = nullptr;
  ShardRange range;  // range.size < 0: the whole value

  // "/data/a.zarr/c/0/1" or "/data/a.zarr/c/0/1 (bytes 100..300)", for messages.
  std::string Describe() const;
};

// The buffers one thread reuses across the chunks it handles. Reuse matters: touching
// fresh pages costs more than compressing them.
struct ChunkScratch {
  Buffer stored;   // a chunk as read from the store
  Buffer decoded;  // a decoded (read) or gathered (write) chunk, in memory's element size
  Buffer encoded;  // a chunk encoded for the store
  Buffer half;     // float16 storage: the chunk's stored elements before widening
  // The encodings between stages of a multi-stage pipeline; stages alternate between
  // the two, so one stage's input is never its output.
  std::array<Buffer, 2> stages;
  std::array<ShardBuilder, kMaxShardingDepth> shards;  // one per sharding level
};

// Scratch for concurrently running chunk tasks; at most one per running task exists.
class ScratchPool {
 public:
  class Lease {
   public:
    Lease(ScratchPool& pool, std::unique_ptr<ChunkScratch> scratch)
        : pool_(pool), scratch_(std::move(scratch)) {}
    ~Lease() { pool_.Return(std::move(scratch_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ChunkScratch& scratch() { return *scratch_; }

   private:
    ScratchPool& pool_;
    std::unique_ptr<ChunkScratch> scratch_;
  };

  Lease Take();

 private:
  void Return(std::unique_ptr<ChunkScratch> scratch);

  std::mutex mutex_;
  std::vector<std::unique_ptr<ChunkScratch>> free_;  // GUARDED_BY(mutex_)
};

// Bytes of scratch a read or write holds besides its destination or source, buffer by
// buffer (the buffers of one ChunkScratch are reused, so several chunks handled with one
// scratch hold the largest of each: Grow).
struct ScratchBytes {
  Index stored = 0;
  Index decoded = 0;
  Index half = 0;
  std::array<Index, 2> stages{};
  // The largest working memory of one codec call (Codec::EncodeWorkingBytes,
  // DecodeWorkingBytes): contexts freed when the call returns, so calls one after
  // another hold the largest of them.
  Index codec = 0;
  // Per sharding level: its index (entries and their encoding) and the shard assembled.
  std::array<Index, kMaxShardingDepth> shard{};

  Index Total() const;
  void Grow(const ScratchBytes& other);
};

class ChunkCodec {
 public:
  virtual ~ChunkCodec() = default;

  // The full (unclipped) shape of the chunks this codec encodes.
  const Shape& chunk_shape() const { return chunk_shape_; }

  // Reads `box` (chunk coordinates) of the chunk stored at `value` into `dst`, whose
  // byte strides are `dst_strides`; `dst_contiguous` says the box is one C-order range
  // at `dst`. An absent value (or empty shard entry) reads as the fill value.
  virtual void ReadPart(const ValueRef& value, const Region& box, std::byte* dst,
                        std::span<const Index> dst_strides, bool dst_contiguous,
                        ChunkScratch& scratch) const = 0;

  // Encodes a block of `block_shape` (<= the chunk shape; the rest of the chunk is the
  // fill value) read from `src` with byte strides `src_strides` (`src_contiguous`: one
  // C-order range). Returns the encoded bytes, valid until `scratch` is used again; or
  // nullopt when `omit_fill` and every element of the chunk is the fill value (a shard
  // whose inner chunks all are, whatever `omit_fill`).
  virtual std::optional<std::span<const std::byte>> Encode(std::span<const Index> block_shape,
                                                           const std::byte* src,
                                                           std::span<const Index> src_strides,
                                                           bool src_contiguous, bool omit_fill,
                                                           ChunkScratch& scratch) const = 0;

  // What ReadPart holds when it reads `box` of a value of at most `stored_size` bytes
  // (for a shard: inner chunks of at most that many bytes each).
  virtual ScratchBytes ReadScratch(const Region& box, bool dst_contiguous,
                                   Index stored_size) const = 0;
  // What Encode holds for a block of `block_shape`.
  virtual ScratchBytes WriteScratch(std::span<const Index> block_shape,
                                    bool src_contiguous) const = 0;

  // The largest stored size a valid chunk may have (what reads allow: other writers'
  // framing included).
  virtual Index max_stored_bytes() const = 0;
  // The largest encoding Encode itself produces.
  virtual Index max_encoded_bytes() const = 0;
  // For a shard: the largest stored size of one innermost chunk; else max_stored_bytes.
  virtual Index max_leaf_stored_bytes() const { return max_stored_bytes(); }

  // The fill element in native byte order (itemsize bytes).
  std::span<const std::byte> FillNative() const {
    return std::span(fill_native_).first(static_cast<std::size_t>(itemsize_));
  }

 protected:
  ChunkCodec(Shape chunk_shape, DType dtype, const FillValue& fill);

  Shape chunk_shape_;
  Index itemsize_;  // in memory
  std::array<std::byte, kMaxItemSize> fill_native_{};
};

// The codec of `metadata`'s chunks (shards, when sharded). InvalidArgument naming the
// stage ("compressor", "filters[1]", "codecs[2]") for a codec the codec layer refuses.
std::unique_ptr<const ChunkCodec> MakeChunkCodec(const ZarrMetadata& metadata);

// True when a box of `shape` at byte strides `strides` is one C-order range of memory.
bool IsCContiguous(std::span<const Index> shape, std::span<const Index> strides, Index itemsize);

}  // namespace tessera::zarr_detail
