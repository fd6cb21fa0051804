#include "chunk_codec.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "codec_chain_json.hpp"
#include "float16.hpp"
#include "leaf_chunk_codec.hpp"
#include "shard_chunk_codec.hpp"

namespace tessera::zarr_detail {
namespace {

// "filters [zlib(level 1)] then compressor blosc(...)", or one codec's description.
std::string DescribeV2Pipeline(const ZarrMetadata& metadata) {
  if (metadata.filters.empty()) {
    return metadata.compressor ? DescribeCodec(*metadata.compressor) : "uncompressed";
  }
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

// The fill value as the stored elements hold it. float16 storage rounds it to a half, as
// zarr-python holds a float16 array's fill value (0.1 reads as 0.0999755859375): chunks
// never written then read as a written chunk of fill values does, and an inner chunk
// left out for being all fill reads back as written.
FillValue StoredFill(const ZarrMetadata& metadata) {
  if (!metadata.float16_storage) return metadata.fill_value;
  float value = 0;
  EncodeFillElement(metadata.fill_value, float32, std::as_writable_bytes(std::span(&value, 1)));
  return static_cast<double>(HalfBitsToFloat(FloatToHalfBits(value)));
}

std::unique_ptr<const ChunkCodec> MakeV3Codec(Shape chunk_shape, const ZarrMetadata& metadata,
                                              const FillValue& fill, const ZarrCodecChain& chain,
                                              int depth) {
  if (chain.sharding != nullptr) {
    const ZarrSharding& sharding = *chain.sharding;
    std::unique_ptr<const ChunkCodec> inner =
        MakeV3Codec(sharding.chunk_shape, metadata, fill, sharding.codecs, depth + 1);
    return std::make_unique<ShardChunkCodec>(std::move(chunk_shape), metadata.dtype, fill, sharding,
                                             std::move(inner), depth);
  }
  std::vector<CodecStage> stages;
  for (const CodecConfig& config : chain.bytes_codecs) stages.push_back({config, "codec"});
  return std::make_unique<LeafChunkCodec>(std::move(chunk_shape), metadata.dtype, fill, chain,
                                          metadata.float16_storage, std::move(stages),
                                          DescribeCodecChain(chain));
}

}  // namespace

std::string ValueRef::Describe() const {
  std::string text = store->DescribeKey(*key);
  if (range.size >= 0) {
    text += " (bytes " + std::to_string(range.offset) + ".." +
            std::to_string(range.offset + range.size) + ")";
  }
  return text;
}

ScratchPool::Lease ScratchPool::Take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) return Lease(*this, std::make_unique<ChunkScratch>());
  std::unique_ptr<ChunkScratch> scratch = std::move(free_.back());
  free_.pop_back();
  return Lease(*this, std::move(scratch));
}

void ScratchPool::Return(std::unique_ptr<ChunkScratch> scratch) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(scratch));
}

Index ScratchBytes::Total() const {
  Index total = stored + decoded + half + stages[0] + stages[1] + codec;
  for (const Index level : shard) total += level;
  return total;
}

void ScratchBytes::Grow(const ScratchBytes& other) {
  stored = std::max(stored, other.stored);
  decoded = std::max(decoded, other.decoded);
  half = std::max(half, other.half);
  stages[0] = std::max(stages[0], other.stages[0]);
  stages[1] = std::max(stages[1], other.stages[1]);
  codec = std::max(codec, other.codec);
  for (std::size_t level = 0; level < shard.size(); ++level) {
    shard[level] = std::max(shard[level], other.shard[level]);
  }
}

ChunkCodec::ChunkCodec(Shape chunk_shape, DType dtype, const FillValue& fill)
    : chunk_shape_(std::move(chunk_shape)), itemsize_(dtype.itemsize()) {
  EncodeFillElement(fill, dtype, std::span(fill_native_).first(static_cast<std::size_t>(itemsize_)));
}

std::unique_ptr<const ChunkCodec> MakeChunkCodec(const ZarrMetadata& metadata) {
  const FillValue fill = StoredFill(metadata);
  if (metadata.zarr_format == 3) {
    return MakeV3Codec(metadata.chunks, metadata, fill, metadata.codecs, 0);
  }
  std::vector<CodecStage> stages;
  for (std::size_t index = 0; index < metadata.filters.size(); ++index) {
    stages.push_back({metadata.filters[index], "filters[" + std::to_string(index) + "]"});
  }
  if (metadata.compressor) stages.push_back({*metadata.compressor, "compressor"});
  return std::make_unique<LeafChunkCodec>(metadata.chunks, metadata.dtype, fill,
                                          metadata.codec_chain(), metadata.float16_storage,
                                          std::move(stages), DescribeV2Pipeline(metadata));
}

bool IsCContiguous(std::span<const Index> shape, std::span<const Index> strides, Index itemsize) {
  Index expected = itemsize;
  for (std::size_t dim = shape.size(); dim-- > 0;) {
    if (shape[dim] > 1 && strides[dim] != expected) return false;
    expected *= shape[dim];
  }
  return true;
}

}  // namespace tessera::zarr_detail
