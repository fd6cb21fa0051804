// Chunk I/O: reading, decoding, encoding and writing one chunk of a Zarr v2 array, and
// the scratch buffers the threads doing it reuse.
//
//   ChunkIo io(store, path, metadata, grid, compressor, filters);  // once per call
//   ScratchPool pool;                                             // shared by the tasks
//   ParallelFor(..., [&](...) {
//     ScratchPool::Lease scratch = pool.Take();                   // one per running task
//     io.ReadPart(block, box, dst, dst_strides, dst_contiguous, scratch.scratch());
//   });
//
// A chunk's stored size is checked before it is read (FormatError naming the key), so
// no read allocates more than a valid encoding of one chunk can take.
//
// A chunk passes through the filters, in order, then the compressor; decoding runs the
// stages the other way round. Every stage but the last decodes with Codec::DecodeUpTo
// into a scratch buffer of that intermediate's bound (MaxEncodedSize chained outward
// from the chunk's size, plus slack for other writers), so a frame claiming more is a
// FormatError before anything that size is allocated; the last decodes exactly into the
// chunk.
// Internal to src/storage/zarr. Lifetime: a ChunkIo refers to its arguments and must
// not outlive them. Thread safety: see ChunkIo and ScratchPool.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chunk_layout.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/store.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::zarr_detail {

// The largest item size of a Tessera dtype (complex128).
inline constexpr std::size_t kMaxItemSize = 16;

// The buffers one thread reuses across the chunks it handles. Reuse matters: touching fresh pages
// costs more than compressing them.
struct ChunkScratch {
  Buffer stored;   // a chunk as read from the store
  Buffer decoded;  // a decoded (read) or gathered (write) chunk
  Buffer encoded;  // a chunk encoded for the store
  // The encodings between stages of a multi-stage pipeline; stages alternate between
  // the two, so one stage's input is never its output.
  std::array<Buffer, 2> stages;
};

// Scratch for concurrently running chunk tasks; at most one per running task exists.
class ScratchPool {
 public:
  class Lease {
   public:
    Lease(ScratchPool& pool, ChunkScratch scratch) : pool_(pool), scratch_(std::move(scratch)) {}
    ~Lease() { pool_.Return(std::move(scratch_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ChunkScratch& scratch() { return scratch_; }

   private:
    ScratchPool& pool_;
    ChunkScratch scratch_;
  };

  Lease Take();

 private:
  void Return(ChunkScratch scratch);

  std::mutex mutex_;
  std::vector<ChunkScratch> free_;  // GUARDED_BY(mutex_)
};

// Everything chunk I/O needs from one ZarrArray, with the per-array constants
// (layout, fill element, chunk size) computed once per call. Const methods are
// thread-safe; each thread passes its own scratch buffer.
class ChunkIo {
 public:
  ChunkIo(Store& store, std::string_view path, const ZarrMetadata& metadata, const ChunkGrid& grid,
          const Codec* compressor, std::span<const std::shared_ptr<const Codec>> filters);

  std::string Key(std::span<const Index> block) const;

  // Reads `box` (chunk coordinates) of a block's chunk into `dst`, whose byte strides
  // are `dst_strides`; `dst_contiguous` says the box is one C-order range at `dst`.
  // A chunk is read only after its stored size is checked (CheckStoredSize), so no
  // read allocates more than a valid encoding of one chunk can take.
  void ReadPart(std::span<const Index> block, const Region& box, std::byte* dst,
                std::span<const Index> dst_strides, bool dst_contiguous,
                ChunkScratch& scratch) const;

  // Writes a block's chunk from `src` (the block, byte strides `src_strides`;
  // `src_contiguous` says it is one C-order range).
  void WriteFrom(std::span<const Index> block, const std::byte* src,
                 std::span<const Index> src_strides, bool src_contiguous,
                 ChunkScratch& scratch) const;

  // Scratch bytes ReadPart holds besides `dst` when it reads `box` of a chunk stored in
  // `stored_size` bytes: the stored copy (none for an uncompressed chunk read whole into
  // place), the decoded chunk when the box is not read whole into place, and the
  // intermediates of a filter pipeline. Buffers of one scratch are reused, so reading
  // several chunks with one scratch holds the largest of each.
  // `codec` is the largest working memory of one codec call (Codec::EncodeWorkingBytes,
  // DecodeWorkingBytes): its contexts and scratch, freed when the call returns, so stages
  // running one after another hold the largest of them.
  struct ScratchBytes {
    Index stored = 0;
    Index decoded = 0;
    std::array<Index, 2> stages{};
    Index codec = 0;
    Index Total() const { return stored + decoded + stages[0] + stages[1] + codec; }
    void Grow(const ScratchBytes& other);
  };
  ScratchBytes ReadScratch(const Region& box, bool dst_contiguous, Index stored_size) const;
  // Scratch bytes WriteFrom holds besides the block: the chunk gathered from the block
  // (edge blocks, F order, byte swaps), the filters' outputs and the compressor's.
  ScratchBytes WriteScratch(std::span<const Index> block, bool src_contiguous) const;
  // The largest stored size a valid chunk may have (what reads allow).
  Index max_stored_bytes() const { return max_stored_bytes_; }

  std::span<const std::byte> FillNative() const {
    return std::span(fill_native_).first(static_cast<std::size_t>(layout_.itemsize));
  }

 private:
  std::span<const std::byte> FillStored() const {
    return std::span(fill_stored_).first(static_cast<std::size_t>(layout_.itemsize));
  }

  // The decoding stage `stage` (0: the outermost), as "compressor blosc(...)" or
  // "filters[1] lz4(...)", for messages.
  std::string DescribeStage(std::size_t stage) const;

  // Throws FormatError naming the chunk's key when a stored chunk of `stored_size`
  // bytes cannot be decoded into one chunk, before anything reads it.
  void CheckStoredSize(const std::string& key, Index stored_size) const;

  // Decodes a stored chunk into exactly `out` (chunk_nbytes_ bytes); intermediates go
  // to scratch.stages. REQUIRES: the pipeline has a stage (uncompressed chunks are
  // used as stored); CheckStoredSize(key, stored.size()) passed; `out` is not in
  // scratch.stages.
  void DecodeInto(const std::string& key, std::span<const std::byte> stored,
                  std::span<std::byte> out, ChunkScratch& scratch) const;

  Store& store_;
  std::string_view path_;
  const ZarrMetadata& metadata_;
  const ChunkGrid& grid_;
  const Codec* compressor_;
  std::span<const std::shared_ptr<const Codec>> filters_;
  ChunkLayout layout_;
  Index chunk_nbytes_;
  // The codecs in decoding order: the compressor, then the filters last to first.
  std::vector<const Codec*> decoders_;
  // decoded_limits_[i]: the most bytes decoders_[i] may produce (chunk_nbytes_ for the
  // last stage, which must produce exactly that).
  std::vector<Index> decoded_limits_;
  // CheckStoredSize's limit: chunk_nbytes_ exactly when uncompressed, else the
  // outermost stage's chained bound plus slack.
  Index max_stored_bytes_;
  std::array<std::byte, kMaxItemSize> fill_native_{};
  std::array<std::byte, kMaxItemSize> fill_stored_{};
};

}  // namespace tessera::zarr_detail
