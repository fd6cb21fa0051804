#include "leaf_chunk_codec.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "float16.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"

namespace tessera::zarr_detail {
namespace {

// A stored chunk larger than its codec's MaxEncodedSize(chunk bytes) cannot decode to
// one chunk, so it is refused before it is read. Tessera's encoders stay within that
// bound, but other writers may frame the same data a little larger (a gzip member
// carrying a file name or comment, a zstd frame with a checksum or a skippable frame,
// deflate stored blocks at a small memLevel, about 1% more): the limit adds 1/64 of
// the bound plus 64 KiB, still far below the allocations it exists to prevent.
constexpr std::int64_t kEncodedSlackDivisor = 64;
constexpr std::int64_t kEncodedSlackBytes = std::int64_t{64} << 10;
// The same slack applies to each intermediate of a multi-stage pipeline, and bounds
// saturate here (64 PiB), far above any allocation, so that no chain of filters
// overflows.
constexpr std::int64_t kMaxBound = std::int64_t{1} << 56;
// Stack pages a codec call touches on the task's thread (lz4's and blosclz's hash tables
// live there; measured: up to about 6 KB more than the codecs' heap figures per task).
constexpr std::int64_t kCodecStackBytes = std::int64_t{16} << 10;

// The most bytes another writer's encoding of `raw_size` bytes with `codec` may take.
std::int64_t EncodedLimit(const Codec& codec, std::int64_t raw_size) {
  const std::int64_t bound = codec.MaxEncodedSize(std::min(raw_size, kMaxBound));
  return std::min(bound + bound / kEncodedSlackDivisor + kEncodedSlackBytes, kMaxBound);
}

std::unique_ptr<Codec> MakeStage(const CodecStage& stage) {
  try {
    return MakeCodec(stage.config);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(stage.name + " (id \"" + stage.config.id + "\"): " + error.what());
  }
}

// True when every element of `bytes` is `element` (bit for bit).
bool AllElementsEqual(std::span<const std::byte> bytes, std::span<const std::byte> element) {
  if (bytes.empty()) return true;
  if (std::memcmp(bytes.data(), element.data(), element.size()) != 0) return false;
  // Every element equals the first exactly when the bytes equal themselves shifted by
  // one element.
  return std::memcmp(bytes.data(), bytes.data() + element.size(), bytes.size() - element.size()) ==
         0;
}

// The buffer a decoding stage writes: the stage buffer its input is not in.
Buffer& OtherStage(ChunkScratch& scratch, int& slot) {
  slot = slot == 0 ? 1 : 0;
  return scratch.stages[static_cast<std::size_t>(slot)];
}

}  // namespace

LeafChunkCodec::LeafChunkCodec(Shape chunk_shape, DType dtype, const FillValue& fill,
                               const ZarrCodecChain& chain, bool float16,
                               std::vector<CodecStage> stages, std::string pipeline)
    : ChunkCodec(chunk_shape, dtype, fill),
      layout_(ChunkLayout::For(std::move(chunk_shape), dtype, chain)),
      float16_(float16),
      stages_(std::move(stages)),
      pipeline_(std::move(pipeline)) {
  if (float16_) {
    if (dtype != float32) {
      throw InvalidArgument("float16 storage holds float32 arrays, not " +
                            std::string(dtype.name()));
    }
    half_byteswap_ = chain.endian == ByteOrder::kBig;
    layout_.byteswap = false;  // the halves are swapped as they are narrowed or widened
  }
  stored_itemsize_ = float16_ ? 2 : layout_.itemsize;
  chunk_nbytes_ = layout_.ChunkBytes();
  raw_bytes_ = CheckedMul(ShapeSize(chunk_shape_), stored_itemsize_);
  limits_.push_back(raw_bytes_);
  for (const CodecStage& stage : stages_) {
    codecs_.push_back(MakeStage(stage));
    limits_.push_back(EncodedLimit(*codecs_.back(), limits_.back()));
  }
  max_stored_bytes_ = codecs_.empty() ? raw_bytes_ : limits_.back();
  max_encoded_bytes_ = raw_bytes_;
  for (const std::unique_ptr<Codec>& codec : codecs_) {
    max_encoded_bytes_ = codec->MaxEncodedSize(std::min(max_encoded_bytes_, kMaxBound));
  }
  const auto layout_item = std::span(fill_layout_).first(static_cast<std::size_t>(itemsize_));
  layout_.StoredFill(FillNative(), layout_item);
  if (float16_) {
    FloatToHalf(layout_item, half_byteswap_, std::span(fill_stored_).first(2));
  } else {
    std::ranges::copy(layout_item, fill_stored_.begin());
  }
}

bool LeafChunkCodec::ReadsInPlace(const Region& box, bool dst_contiguous) const {
  return !float16_ && dst_contiguous && box.shape == chunk_shape_ && layout_.MemoryOrderIsC();
}

void LeafChunkCodec::ReadPart(const ValueRef& value, const Region& box, std::byte* dst,
                              std::span<const Index> dst_strides, bool dst_contiguous,
                              ChunkScratch& scratch) const {
  const Store& store = *value.store;
  const std::string& key = *value.key;
  // Fast path: a whole chunk whose memory order is C order lands straight in its
  // destination (read there when stored as is, else decoded there); byte swapping and
  // bool normalisation then run in place.
  const bool direct = ReadsInPlace(box, dst_contiguous);
  const bool read_in_place = direct && codecs_.empty();
  const std::span<std::byte> out(dst, direct ? static_cast<std::size_t>(chunk_nbytes_) : 0);
  if (value.range.size < 0) {
    // The store reads nothing larger than a valid chunk could be (CheckStoredSize).
    const std::optional<std::int64_t> stored_size =
        read_in_place
            ? store.ReadBounded(
                  key, chunk_nbytes_,
                  [&](std::int64_t size) { return out.first(static_cast<std::size_t>(size)); })
            : store.GetInto(key, scratch.stored, max_stored_bytes_);
    if (!stored_size) {
      FillBox(box.shape, dst, dst_strides, FillNative());
      return;
    }
    CheckStoredSize(value, *stored_size);
  } else {
    CheckStoredSize(value, value.range.size);
    std::span<std::byte> into = out;
    if (!read_in_place) {
      scratch.stored.ResizeUninitialized(value.range.size);
      into = scratch.stored.span();
    }
    if (!store.ReadRange(key, value.range.offset, into)) {
      throw StorageError(value.Describe() + ": the value vanished while being read");
    }
  }
  if (direct) {
    if (!codecs_.empty()) DecodeInto(value, scratch.stored.span(), out, scratch);
    FinishInPlace(layout_, out);
    return;
  }
  // The stored elements, raw_bytes_ of them.
  std::span<const std::byte> raw = scratch.stored.span();
  if (!codecs_.empty()) {
    Buffer& target = float16_ ? scratch.half : scratch.decoded;
    target.ResizeUninitialized(raw_bytes_);
    DecodeInto(value, scratch.stored.span(), target.span(), scratch);
    raw = target.span();
  }
  if (float16_) {
    scratch.decoded.ResizeUninitialized(chunk_nbytes_);
    HalfToFloat(raw, half_byteswap_, scratch.decoded.span());
    raw = scratch.decoded.span();
  }
  ChunkToBlock(layout_, raw, box, dst, dst_strides);
}

std::optional<std::span<const std::byte>> LeafChunkCodec::Encode(
    std::span<const Index> block_shape, const std::byte* src, std::span<const Index> src_strides,
    bool src_contiguous, bool omit_fill, ChunkScratch& scratch) const {
  std::span<const std::byte> raw;
  if (src_contiguous && layout_.IsIdentityFor(block_shape)) {
    raw = {src, static_cast<std::size_t>(chunk_nbytes_)};
  } else {
    scratch.decoded.ResizeUninitialized(chunk_nbytes_);
    BlockToChunk(layout_, block_shape, src, src_strides,
                 std::span(fill_layout_).first(static_cast<std::size_t>(itemsize_)),
                 scratch.decoded.span());
    raw = scratch.decoded.span();
  }
  if (float16_) {
    scratch.half.ResizeUninitialized(raw_bytes_);
    FloatToHalf(raw, half_byteswap_, scratch.half.span());
    raw = scratch.half.span();
  }
  if (omit_fill && AllElementsEqual(raw, FillStored())) return std::nullopt;
  for (std::size_t stage = 0; stage < codecs_.size(); ++stage) {
    // raw is never in the buffer written: see ChunkScratch.
    Buffer& encoded = stage + 1 == codecs_.size() ? scratch.encoded : scratch.stages[stage % 2];
    ChargeCallScratch([&] { codecs_[stage]->EncodeInto(raw, StageItemsize(stage), encoded); });
    raw = encoded.span();
  }
  return raw;
}

ScratchBytes LeafChunkCodec::ReadScratch(const Region& box, bool dst_contiguous,
                                         Index stored_size) const {
  // Mirrors ReadPart and DecodeInto.
  ScratchBytes bytes;
  const bool direct = ReadsInPlace(box, dst_contiguous);
  if (codecs_.empty()) {
    bytes.stored = direct ? 0 : raw_bytes_;
  } else {
    bytes.stored = std::min(stored_size, max_stored_bytes_);
    if (!direct) (float16_ ? bytes.half : bytes.decoded) = raw_bytes_;
    int slot = -1;  // the stage buffer the input is in (-1: stored)
    for (std::size_t stage = codecs_.size() - 1; stage > 0; --stage) {
      if (stages_[stage].config.id == "crc32c") continue;  // checked in place
      slot = slot == 0 ? 1 : 0;
      Index& held = bytes.stages[static_cast<std::size_t>(slot)];
      held = std::max(held, limits_[stage]);
    }
    for (std::size_t stage = 0; stage < codecs_.size(); ++stage) {
      bytes.codec = std::max(bytes.codec,
                             codecs_[stage]->DecodeWorkingBytes(limits_[stage], StageItemsize(stage)));
    }
    bytes.codec += kCodecStackBytes;
  }
  if (float16_ && !direct) bytes.decoded = chunk_nbytes_;
  return bytes;
}

ScratchBytes LeafChunkCodec::WriteScratch(std::span<const Index> block_shape,
                                          bool src_contiguous) const {
  // Mirrors Encode.
  ScratchBytes bytes;
  if (!(src_contiguous && layout_.IsIdentityFor(block_shape))) bytes.decoded = chunk_nbytes_;
  if (float16_) bytes.half = raw_bytes_;
  std::int64_t raw = raw_bytes_;
  for (std::size_t stage = 0; stage < codecs_.size(); ++stage) {
    bytes.codec = std::max(bytes.codec, codecs_[stage]->EncodeWorkingBytes(raw, StageItemsize(stage)));
    raw = codecs_[stage]->MaxEncodedSize(raw);
    if (stage + 1 == codecs_.size()) {
      bytes.stored = raw;
    } else {
      Index& held = bytes.stages[stage % 2];
      held = std::max(held, raw);
    }
  }
  if (!codecs_.empty()) bytes.codec += kCodecStackBytes;
  return bytes;
}

void LeafChunkCodec::CheckStoredSize(const ValueRef& value, Index stored_size) const {
  if (codecs_.empty()) {
    if (stored_size == raw_bytes_) return;
    throw FormatError(value.Describe() + ": stored chunk is " + std::to_string(stored_size) +
                      " bytes, but an uncompressed chunk of shape " +
                      ShapeToString(chunk_shape_) + " with " + std::to_string(stored_itemsize_) +
                      "-byte elements is " + std::to_string(raw_bytes_) +
                      " bytes; the chunk is truncated or was written with another chunk shape");
  }
  if (stored_size <= max_stored_bytes_) return;
  throw FormatError(value.Describe() + ": stored chunk is " + std::to_string(stored_size) +
                    " bytes, but the largest valid " + pipeline_ +
                    " encoding of a chunk of shape " + ShapeToString(chunk_shape_) + " (" +
                    std::to_string(raw_bytes_) + " bytes decoded) is " +
                    std::to_string(max_stored_bytes_) +
                    " bytes; the chunk is corrupt or was written with another chunk shape, "
                    "dtype or codec");
}

void LeafChunkCodec::DecodeInto(const ValueRef& value, std::span<const std::byte> stored,
                                std::span<std::byte> out, ChunkScratch& scratch) const {
  const std::size_t last = codecs_.size() - 1;
  std::span<const std::byte> input = stored;
  std::size_t stage = last;
  try {
    int slot = -1;  // the stage buffer `input` is in (-1: stored)
    for (; stage > 0; --stage) {
      if (const auto view = codecs_[stage]->DecodedView(input)) {
        if (static_cast<Index>(view->size()) > limits_[stage]) {
          throw FormatError(std::to_string(view->size()) + " bytes decoded, more than " +
                            std::to_string(limits_[stage]));
        }
        input = *view;
        continue;
      }
      // The intermediate's size is known only by its bound: DecodeUpTo refuses a frame
      // that decodes, or claims to decode, to more.
      Buffer& decoded = OtherStage(scratch, slot);
      decoded.ResizeUninitialized(limits_[stage]);
      const std::int64_t size =
          ChargeCallScratch([&] { return codecs_[stage]->DecodeUpTo(input, decoded.span()); });
      input = decoded.span().first(static_cast<std::size_t>(size));
    }
    if (const auto view = codecs_[0]->DecodedView(input)) {
      if (view->size() != out.size()) {
        throw FormatError(std::to_string(view->size()) + " bytes decoded, expected " +
                          std::to_string(out.size()));
      }
      if (!out.empty()) std::memcpy(out.data(), view->data(), out.size());
    } else {
      ChargeCallScratch([&] { codecs_[0]->Decode(input, out); });
    }
  } catch (const FormatError& error) {
    std::string message = value.Describe() + ": ";
    if (last > 0) {
      message += "decoding " + stages_[stage].name + " " + DescribeCodec(stages_[stage].config) +
                 " (stage " + std::to_string(last - stage + 1) + " of " +
                 std::to_string(last + 1) + ", at most " + std::to_string(limits_[stage]) +
                 " bytes decoded): ";
    }
    throw FormatError(message + error.what());
  }
}

}  // namespace tessera::zarr_detail
