#include "chunk_io.hpp"

#include <cstdint>
#include <cstring>

#include "chunk_key.hpp"
#include "tessera/core/errors.hpp"

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

}  // namespace

std::optional<std::string> UndecodablePipeline(const ZarrMetadata& metadata) {
  const std::size_t stages = metadata.filters.size() + (metadata.compressor ? 1 : 0);
  if (stages <= 1) return std::nullopt;
  std::string ids;
  for (const CodecConfig& filter : metadata.filters) ids += (ids.empty() ? "" : ", ") + filter.id;
  return "filters [" + ids + "]" +
         (metadata.compressor ? " followed by compressor \"" + metadata.compressor->id + "\""
                              : std::string()) +
         ": Tessera decodes only one compressing stage per chunk (the codec API needs each "
         "stage's decoded size); use either one filter or one compressor";
}

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
      max_stored_bytes_(MaxStoredBytes()),
      undecodable_(UndecodablePipeline(metadata)) {
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
  bool present = false;
  if (const std::optional<std::int64_t> stored_size = store_.SizeOf(key)) {
    CheckStoredSize(key, *stored_size);
    present = store_.GetInto(key, scratch.stored);
    // The key may have been replaced between SizeOf and GetInto.
    if (present) CheckStoredSize(key, scratch.stored.size());
  }
  const Buffer& stored = scratch.stored;
  if (!present) {
    FillBox(box.shape, dst, dst_strides, FillNative());
    return;
  }
  // Fast path: a whole chunk whose memory order is C order decodes straight into
  // its destination; byte swapping and bool normalisation then run in place.
  if (dst_contiguous && box.shape == layout_.chunk_shape && layout_.MemoryOrderIsC()) {
    const std::span<std::byte> out(dst, static_cast<std::size_t>(chunk_nbytes_));
    DecodeInto(key, stored.span(), out);
    FinishInPlace(layout_, out);
    return;
  }
  std::span<const std::byte> decoded;
  if (Decoder() == nullptr) {
    decoded = stored.span();  // CheckStoredSize: exactly chunk_nbytes_
  } else {
    scratch.decoded.ResizeUninitialized(chunk_nbytes_);
    DecodeInto(key, stored.span(), scratch.decoded.span());
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
  Buffer filtered;
  for (const std::shared_ptr<const Codec>& filter : filters_) {
    filtered = filter->Encode(raw, layout_.itemsize);
    raw = filtered.span();
  }
  if (compressor_ != nullptr) {
    compressor_->EncodeInto(raw, layout_.itemsize, scratch.encoded);
    raw = scratch.encoded.span();
  }
  store_.Set(Key(block), raw);
}

Index ChunkIo::MaxStoredBytes() const {
  const Codec* decoder = Decoder();
  if (decoder == nullptr) return chunk_nbytes_;
  const Index bound = decoder->MaxEncodedSize(chunk_nbytes_);
  return bound + bound / kEncodedSlackDivisor + kEncodedSlackBytes;
}

void ChunkIo::CheckStoredSize(const std::string& key, Index stored_size) const {
  if (undecodable_) {
    throw FormatError(store_.DescribeKey(key) + ": cannot decode the chunk: " + *undecodable_);
  }
  const Codec* decoder = Decoder();
  if (decoder == nullptr) {
    if (stored_size == chunk_nbytes_) return;
    throw FormatError(store_.DescribeKey(key) + ": stored chunk is " + std::to_string(stored_size) +
                      " bytes, but an uncompressed chunk of shape " +
                      ShapeToString(layout_.chunk_shape) + " and dtype " +
                      std::string(metadata_.dtype.name()) + " is " + std::to_string(chunk_nbytes_) +
                      " bytes; the chunk is truncated or was written with another chunk shape");
  }
  if (stored_size <= max_stored_bytes_) return;
  throw FormatError(store_.DescribeKey(key) + ": stored chunk is " + std::to_string(stored_size) +
                    " bytes, but the largest valid " + DescribeCodec(decoder->config()) +
                    " encoding of a chunk of shape " + ShapeToString(layout_.chunk_shape) +
                    " and dtype " + std::string(metadata_.dtype.name()) + " (" +
                    std::to_string(chunk_nbytes_) + " bytes decoded) is " +
                    std::to_string(max_stored_bytes_) +
                    " bytes; the chunk is corrupt or was written with another chunk shape, "
                    "dtype or codec");
}

void ChunkIo::DecodeInto(const std::string& key, std::span<const std::byte> stored,
                         std::span<std::byte> out) const {
  const Codec* decoder = Decoder();
  if (decoder == nullptr) {
    if (!stored.empty()) std::memcpy(out.data(), stored.data(), stored.size());
    return;
  }
  try {
    decoder->Decode(stored, out);
  } catch (const FormatError& error) {
    throw FormatError(store_.DescribeKey(key) + ": " + error.what());
  }
}

}  // namespace tessera::zarr_detail
