#include "chunk_io.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chunk_key.hpp"
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

// "filters [zlib(level 1)] then compressor blosc(...)", or one codec's description.
std::string DescribePipeline(const ZarrMetadata& metadata) {
  if (metadata.filters.empty()) return DescribeCodec(*metadata.compressor);
  if (metadata.filters.size() == 1 && !metadata.compressor) {
    return DescribeCodec(metadata.filters.front());
  }
  std::string text = "filters [";
  for (std::size_t index = 0; index < metadata.filters.size(); ++index) {
    text += (index == 0 ? "" : ", ") + DescribeCodec(metadata.filters[index]);
  }
  text += "]";
  if (metadata.compressor) text += " then compressor " + DescribeCodec(*metadata.compressor);
  return text;
}

}  // namespace

ScratchPool::Lease ScratchPool::Take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) return Lease(*this, ChunkScratch());
  ChunkScratch scratch = std::move(free_.back());
  free_.pop_back();
  return Lease(*this, std::move(scratch));
}

void ScratchPool::Return(ChunkScratch scratch) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(scratch));
}

ChunkIo::ChunkIo(Store& store, std::string_view path, const ZarrMetadata& metadata,
                 const ChunkGrid& grid, const Codec* compressor,
                 std::span<const std::shared_ptr<const Codec>> filters)
    : store_(store),
      path_(path),
      metadata_(metadata),
      grid_(grid),
      compressor_(compressor),
      filters_(filters),
      layout_(ChunkLayout::For(metadata)),
      chunk_nbytes_(layout_.ChunkBytes()),
      max_stored_bytes_(chunk_nbytes_) {
  // Bounds in encoding order: limit k is what encoding stage k - 1 may produce.
  std::vector<Index> limits{chunk_nbytes_};
  for (const std::shared_ptr<const Codec>& filter : filters_) {
    limits.push_back(EncodedLimit(*filter, limits.back()));
  }
  if (compressor_ != nullptr) limits.push_back(EncodedLimit(*compressor_, limits.back()));
  max_stored_bytes_ = limits.back();
  // Decoding stage i undoes encoding stage (stages - 1 - i), whose input is limit
  // (stages - 1 - i); the last decoding stage yields the chunk.
  if (compressor_ != nullptr) decoders_.push_back(compressor_);
  for (auto filter = filters_.rbegin(); filter != filters_.rend(); ++filter) {
    decoders_.push_back(filter->get());
  }
  for (std::size_t stage = 0; stage < decoders_.size(); ++stage) {
    decoded_limits_.push_back(limits[decoders_.size() - 1 - stage]);
  }
  const std::size_t itemsize = static_cast<std::size_t>(layout_.itemsize);
  EncodeFillElement(metadata.fill_value, metadata.dtype, std::span(fill_native_).first(itemsize));
  layout_.StoredFill(std::span(fill_native_).first(itemsize),
                     std::span(fill_stored_).first(itemsize));
}

std::string ChunkIo::Key(std::span<const Index> block) const {
  return FormatChunkKey(path_, block, metadata_.dimension_separator);
}

void ChunkIo::ReadPart(std::span<const Index> block, const Region& box, std::byte* dst,
                       std::span<const Index> dst_strides, bool dst_contiguous,
                       ChunkScratch& scratch) const {
  const std::string key = Key(block);
  // Fast path: a whole chunk whose memory order is C order lands straight in its
  // destination (read there when uncompressed, else decoded there); byte swapping and
  // bool normalisation then run in place.
  const bool direct =
      dst_contiguous && box.shape == layout_.chunk_shape && layout_.MemoryOrderIsC();
  const std::span<std::byte> out(dst, direct ? static_cast<std::size_t>(chunk_nbytes_) : 0);
  // The store reads nothing larger than a valid chunk could be (CheckStoredSize).
  const std::optional<std::int64_t> stored_size =
      direct && decoders_.empty()
          ? store_.ReadBounded(
                key, chunk_nbytes_,
                [&](std::int64_t size) { return out.first(static_cast<std::size_t>(size)); })
          : store_.GetInto(key, scratch.stored, max_stored_bytes_);
  if (!stored_size) {
    FillBox(box.shape, dst, dst_strides, FillNative());
    return;
  }
  CheckStoredSize(key, *stored_size);
  const Buffer& stored = scratch.stored;
  if (direct) {
    if (!decoders_.empty()) DecodeInto(key, stored.span(), out, scratch);
    FinishInPlace(layout_, out);
    return;
  }
  std::span<const std::byte> decoded;
  if (decoders_.empty()) {
    decoded = stored.span();  // CheckStoredSize: exactly chunk_nbytes_
  } else {
    scratch.decoded.ResizeUninitialized(chunk_nbytes_);
    DecodeInto(key, stored.span(), scratch.decoded.span(), scratch);
    decoded = scratch.decoded.span();
  }
  ChunkToBlock(layout_, decoded, box, dst, dst_strides);
}

void ChunkIo::WriteFrom(std::span<const Index> block, const std::byte* src,
                        std::span<const Index> src_strides, bool src_contiguous,
                        ChunkScratch& scratch) const {
  const Shape block_shape = grid_.BlockShape(block);
  std::span<const std::byte> raw;
  if (src_contiguous && layout_.IsIdentityFor(block_shape)) {
    raw = {src, static_cast<std::size_t>(chunk_nbytes_)};
  } else {
    scratch.decoded.ResizeUninitialized(chunk_nbytes_);
    BlockToChunk(layout_, block_shape, src, src_strides, FillStored(), scratch.decoded.span());
    raw = scratch.decoded.span();
  }
  // Only the first stage sees elements; later ones get the previous stage's bytes, and
  // shuffle them (blosc) with item size 1, as zarr-python's pipeline does.
  std::int64_t itemsize = layout_.itemsize;
  for (std::size_t index = 0; index < filters_.size(); ++index) {
    Buffer& filtered = scratch.stages[index % 2];  // raw is not in it: see ChunkScratch
    ChargeCallScratch([&] { filters_[index]->EncodeInto(raw, itemsize, filtered); });
    raw = filtered.span();
    itemsize = 1;
  }
  if (compressor_ != nullptr) {
    ChargeCallScratch([&] { compressor_->EncodeInto(raw, itemsize, scratch.encoded); });
    raw = scratch.encoded.span();
  }
  store_.Set(Key(block), raw);
}

void ChunkIo::ScratchBytes::Grow(const ScratchBytes& other) {
  stored = std::max(stored, other.stored);
  decoded = std::max(decoded, other.decoded);
  stages[0] = std::max(stages[0], other.stages[0]);
  stages[1] = std::max(stages[1], other.stages[1]);
  codec = std::max(codec, other.codec);
}

ChunkIo::ScratchBytes ChunkIo::ReadScratch(const Region& box, bool dst_contiguous,
                                           Index stored_size) const {
  // Mirrors ReadPart and DecodeInto.
  ScratchBytes bytes;
  const bool direct =
      dst_contiguous && box.shape == layout_.chunk_shape && layout_.MemoryOrderIsC();
  if (decoders_.empty()) {
    bytes.stored = direct ? 0 : chunk_nbytes_;
    return bytes;
  }
  bytes.stored = stored_size;
  if (!direct) bytes.decoded = chunk_nbytes_;
  for (std::size_t stage = 0; stage + 1 < decoders_.size(); ++stage) {
    Index& slot = bytes.stages[stage % 2];
    slot = std::max(slot, decoded_limits_[stage]);
  }
  for (std::size_t stage = 0; stage < decoders_.size(); ++stage) {
    // Decoding stage `stage` produces the input of the encoding stage before it: elements
    // for the first filter (the last decoder), bytes for later ones.
    const std::int64_t itemsize = stage + 1 == decoders_.size() ? layout_.itemsize : 1;
    bytes.codec = std::max(bytes.codec,
                           decoders_[stage]->DecodeWorkingBytes(decoded_limits_[stage], itemsize));
  }
  bytes.codec += kCodecStackBytes;
  return bytes;
}

ChunkIo::ScratchBytes ChunkIo::WriteScratch(std::span<const Index> block,
                                            bool src_contiguous) const {
  // Mirrors WriteFrom.
  ScratchBytes bytes;
  const Shape block_shape = grid_.BlockShape(block);
  if (!(src_contiguous && layout_.IsIdentityFor(block_shape))) bytes.decoded = chunk_nbytes_;
  std::int64_t raw = chunk_nbytes_;
  std::int64_t itemsize = layout_.itemsize;  // as WriteFrom passes it to each stage
  for (std::size_t index = 0; index < filters_.size(); ++index) {
    bytes.codec = std::max(bytes.codec, filters_[index]->EncodeWorkingBytes(raw, itemsize));
    raw = filters_[index]->MaxEncodedSize(raw);
    Index& slot = bytes.stages[index % 2];
    slot = std::max(slot, raw);
    itemsize = 1;
  }
  if (compressor_ != nullptr) {
    bytes.codec = std::max(bytes.codec, compressor_->EncodeWorkingBytes(raw, itemsize));
    bytes.stored = compressor_->MaxEncodedSize(raw);
  }
  if (!decoders_.empty()) bytes.codec += kCodecStackBytes;
  return bytes;
}

std::string ChunkIo::DescribeStage(std::size_t stage) const {
  const Codec& codec = *decoders_[stage];
  if (compressor_ != nullptr && stage == 0) return "compressor " + DescribeCodec(codec.config());
  const std::size_t filter = decoders_.size() - 1 - stage;
  return "filters[" + std::to_string(filter) + "] " + DescribeCodec(codec.config());
}

void ChunkIo::CheckStoredSize(const std::string& key, Index stored_size) const {
  if (decoders_.empty()) {
    if (stored_size == chunk_nbytes_) return;
    throw FormatError(store_.DescribeKey(key) + ": stored chunk is " + std::to_string(stored_size) +
                      " bytes, but an uncompressed chunk of shape " +
                      ShapeToString(layout_.chunk_shape) + " and dtype " +
                      std::string(metadata_.dtype.name()) + " is " + std::to_string(chunk_nbytes_) +
                      " bytes; the chunk is truncated or was written with another chunk shape");
  }
  if (stored_size <= max_stored_bytes_) return;
  throw FormatError(store_.DescribeKey(key) + ": stored chunk is " + std::to_string(stored_size) +
                    " bytes, but the largest valid " + DescribePipeline(metadata_) +
                    " encoding of a chunk of shape " + ShapeToString(layout_.chunk_shape) +
                    " and dtype " + std::string(metadata_.dtype.name()) + " (" +
                    std::to_string(chunk_nbytes_) + " bytes decoded) is " +
                    std::to_string(max_stored_bytes_) +
                    " bytes; the chunk is corrupt or was written with another chunk shape, "
                    "dtype or codec");
}

void ChunkIo::DecodeInto(const std::string& key, std::span<const std::byte> stored,
                         std::span<std::byte> out, ChunkScratch& scratch) const {
  const std::size_t last = decoders_.size() - 1;
  std::span<const std::byte> input = stored;
  std::size_t stage = 0;
  try {
    for (; stage < last; ++stage) {
      // The intermediate's size is known only by its bound: DecodeUpTo refuses a frame
      // that decodes, or claims to decode, to more.
      Buffer& decoded = scratch.stages[stage % 2];  // input is in the other one (or stored)
      decoded.ResizeUninitialized(decoded_limits_[stage]);
      const std::int64_t size =
          ChargeCallScratch([&] { return decoders_[stage]->DecodeUpTo(input, decoded.span()); });
      input = decoded.span().first(static_cast<std::size_t>(size));
    }
    ChargeCallScratch([&] { decoders_[last]->Decode(input, out); });
  } catch (const FormatError& error) {
    std::string message = store_.DescribeKey(key) + ": ";
    if (last > 0) {
      message += "decoding " + DescribeStage(stage) + " (stage " + std::to_string(stage + 1) +
                 " of " + std::to_string(last + 1) + ", at most " +
                 std::to_string(decoded_limits_[stage]) + " bytes decoded): ";
    }
    throw FormatError(message + error.what());
  }
}

}  // namespace tessera::zarr_detail
