// Metadata for new Zarr v3 arrays (MakeV3Metadata), and what callers ask of any
// metadata's codecs (ShardShape, DescribeCodecs).
#include <string>
#include <utility>

#include "chunk_codec.hpp"
#include "codec_chain_json.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {

ZarrMetadata MakeV3Metadata(Shape shape, Shape chunks, DType dtype,
                            std::optional<CodecConfig> compressor, std::optional<Shape> shards,
                            bool checksum) {
  ZarrMetadata metadata;
  metadata.zarr_format = 3;
  metadata.shape = std::move(shape);
  metadata.dtype = dtype;
  metadata.compressor = std::nullopt;
  metadata.key_encoding = ChunkKeyEncoding::kDefault;
  metadata.dimension_separator = '/';
  ZarrCodecChain leaf;
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
