// LeafChunkCodec: a chunk stored as one value (chunk_codec.hpp): element layout, then a
// pipeline of bytes-to-bytes codecs.
//
//   LeafChunkCodec codec(chunk_shape, dtype, fill, chain, /*float16=*/false, stages);
//
// Decoding runs the stages last to first. Every stage but the last decodes with
// Codec::DecodeUpTo into a scratch buffer of that intermediate's bound (MaxEncodedSize
// chained outward from the chunk's size, plus slack for other writers), so a frame
// claiming more is a FormatError before anything that size is allocated; the last
// decodes exactly into the chunk. A checksum stage (crc32c) is checked in place.
// Only the first stage sees elements (it shuffles by the element size); later ones get
// the previous stage's bytes, as zarr-python's pipeline does.
//
// Internal to src/storage/zarr. Immutable and thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chunk_codec.hpp"
#include "chunk_layout.hpp"
#include "tessera/storage/codec.hpp"

namespace tessera::zarr_detail {

// One bytes-to-bytes stage and its name in messages ("compressor", "filters[0]",
// "codecs[2]").
struct CodecStage {
  CodecConfig config;
  std::string name;
};

class LeafChunkCodec final : public ChunkCodec {
 public:
  // `chain` is a leaf chain (no sharding): its transpose and endian; `stages` its
  // bytes-to-bytes codecs in encoding order; `pipeline` describes them for messages.
  // `float16`: elements are stored as binary16, held as float32 (dtype float32).
  // Throws InvalidArgument naming the stage for a codec the codec layer refuses.
  LeafChunkCodec(Shape chunk_shape, DType dtype, const FillValue& fill,
                 const ZarrCodecChain& chain, bool float16, std::vector<CodecStage> stages,
                 std::string pipeline);

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
  ScratchBytes WriteScratch(std::span<const Index> block_shape,
                            bool src_contiguous) const override;
  Index max_stored_bytes() const override { return max_stored_bytes_; }
  Index max_encoded_bytes() const override { return max_encoded_bytes_; }

 private:
  // A whole chunk whose memory order is C order is read or decoded straight into place.
  bool ReadsInPlace(const Region& box, bool dst_contiguous) const;
  // Throws FormatError naming the value when `stored_size` bytes cannot decode to one
  // chunk, before anything reads them.
  void CheckStoredSize(const ValueRef& value, Index stored_size) const;
  // Decodes stored bytes into exactly `out` (raw_bytes_); intermediates go to
  // scratch.stages. REQUIRES: at least one stage; `out` is not in scratch.stages.
  void DecodeInto(const ValueRef& value, std::span<const std::byte> stored,
                  std::span<std::byte> out, ChunkScratch& scratch) const;
  // The element size stage `stage` (encoding order) is told.
  Index StageItemsize(std::size_t stage) const { return stage == 0 ? stored_itemsize_ : 1; }
  std::span<const std::byte> FillStored() const {
    return std::span(fill_stored_).first(static_cast<std::size_t>(stored_itemsize_));
  }

  // The layout in memory's element size (float16 storage: float32, native order).
  ChunkLayout layout_;
  bool float16_;
  bool half_byteswap_ = false;  // float16: the stored halves are big-endian
  Index stored_itemsize_;
  Index chunk_nbytes_;  // one chunk in memory
  Index raw_bytes_;     // one chunk's stored elements, before the codecs
  std::vector<CodecStage> stages_;
  std::vector<std::unique_ptr<Codec>> codecs_;  // encoding order
  std::string pipeline_;
  // limits_[k]: the most bytes encoding stage k may be given (limits_[0] = raw_bytes_);
  // limits_.back(): the largest stored size.
  std::vector<Index> limits_;
  Index max_stored_bytes_;
  Index max_encoded_bytes_;
  std::array<std::byte, kMaxItemSize> fill_stored_{};  // in the stored element format
  std::array<std::byte, kMaxItemSize> fill_layout_{};  // in layout_'s element format
};

}  // namespace tessera::zarr_detail
