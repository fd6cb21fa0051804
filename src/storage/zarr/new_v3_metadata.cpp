// Metadata for new Zarr v3 arrays (MakeV3Metadata), and what callers ask of any
// metadata's codecs (ShardShape, DescribeCodecs).
#include <complex>
#include <string>
#include <utility>

#include "chunk_codec.hpp"
#include "codec_chain_json.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {

ZarrMetadata MakeV3Metadata(Shape shape, Shape chunks, DType dtype,
                            std::optional<CodecConfig> compressor, std::optional<Shape> shards,
                            bool checksum, ByteOrder endian) {
  ZarrMetadata metadata;
  metadata.zarr_format = 3;
  metadata.shape = std::move(shape);
  metadata.dtype = dtype;
  // zarr-python's default fill (the zero of the dtype), held as a parsed document holds
  // it, so that the metadata equals itself reopened.
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      metadata.fill_value = false;
      break;
    case DTypeKind::kFloat:
      metadata.fill_value = 0.0;
      break;
    case DTypeKind::kComplex:
      metadata.fill_value = std::complex<double>(0.0, 0.0);
      break;
    default:
      metadata.fill_value = std::int64_t{0};
      break;
  }
  metadata.compressor = std::nullopt;
  metadata.key_encoding = ChunkKeyEncoding::kDefault;
  metadata.dimension_separator = '/';
  ZarrCodecChain leaf;
  leaf.endian = endian;
  if (compressor) {
    CodecConfig config = *compressor;
    if (config.id == "blosc") {
      config.typesize = static_cast<int>(dtype.itemsize());
    } else if (config.id != "zstd" && config.id != "gzip") {
      throw InvalidArgument("the " + config.id +
                            " compressor has no Zarr v3 codec; a v3 array takes blosc, zstd or "
                            "gzip (or none)");
    }
    leaf.bytes_codecs.push_back(std::move(config));
  }
  if (checksum) leaf.bytes_codecs.push_back(CodecConfig{.id = "crc32c"});
  if (!shards) {
    metadata.chunks = std::move(chunks);
    metadata.codecs = std::move(leaf);
    return metadata;
  }
  if (shards->size() != chunks.size()) {
    throw InvalidArgument("shards " + ShapeToString(*shards) + " need one extent per dimension of "
                          "the chunks " + ShapeToString(chunks));
  }
  for (std::size_t dim = 0; dim < chunks.size(); ++dim) {
    if (chunks[dim] < 1 || (*shards)[dim] < 1 || (*shards)[dim] % chunks[dim] != 0) {
      throw InvalidArgument("shards " + ShapeToString(*shards) +
                            " must be whole multiples of the (inner) chunks " +
                            ShapeToString(chunks) + " in every dimension (dimension " +
                            std::to_string(dim) + " is not)");
    }
  }
  auto sharding = std::make_shared<ZarrSharding>();
  sharding->chunk_shape = std::move(chunks);
  sharding->codecs = std::move(leaf);
  sharding->index_codecs.bytes_codecs.push_back(CodecConfig{.id = "crc32c"});
  sharding->index_at_end = true;
  metadata.chunks = std::move(*shards);
  metadata.codecs.sharding = std::move(sharding);
  return metadata;
}

std::optional<Shape> ShardShape(const ZarrMetadata& metadata) {
  if (!metadata.sharded()) return std::nullopt;
  return metadata.chunks;
}

namespace {

// The chain that encodes the innermost chunks.
const ZarrCodecChain& LeafChain(const ZarrMetadata& metadata) {
  const ZarrCodecChain* chain = &metadata.codecs;
  while (chain->sharding != nullptr) chain = &chain->sharding->codecs;
  return *chain;
}

}  // namespace

std::optional<CodecConfig> ChunkCompressor(const ZarrMetadata& metadata) {
  if (metadata.zarr_format != 3) return metadata.compressor;
  for (const CodecConfig& codec : LeafChain(metadata).bytes_codecs) {
    if (codec.id != "crc32c") return codec;
  }
  return std::nullopt;
}

bool ChunkChecksum(const ZarrMetadata& metadata) {
  if (metadata.zarr_format != 3) return false;
  for (const CodecConfig& codec : LeafChain(metadata).bytes_codecs) {
    if (codec.id == "crc32c") return true;
  }
  return false;
}

std::string DescribeCodecs(const ZarrMetadata& metadata) {
  if (metadata.zarr_format == 3) return zarr_detail::DescribeCodecChain(metadata.codecs);
  std::string text;
  for (const CodecConfig& filter : metadata.filters) {
    text += (text.empty() ? "filters [" : ", ") + DescribeCodec(filter);
  }
  if (!text.empty()) text += "]";
  if (metadata.compressor) {
    text += (text.empty() ? "" : " then compressor ") + DescribeCodec(*metadata.compressor);
  }
  return text.empty() ? "uncompressed" : text;
}

}  // namespace tessera
