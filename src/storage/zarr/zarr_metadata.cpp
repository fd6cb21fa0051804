// The .zarray document: parsing (with every check made before any chunk is touched)
// and writing in zarr-python's layout.
#include "tessera/storage/zarr_metadata.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "codec_json.hpp"
#include "fill_value.hpp"
#include "json_fields.hpp"
#include "metadata_sizes.hpp"
#include "tessera/core/errors.hpp"
#include "zarr_dtype.hpp"

namespace tessera {
namespace {

using zarr_detail::AsIndex;
using zarr_detail::Fail;
using zarr_detail::FailText;
using zarr_detail::Find;
using zarr_detail::Json;
using zarr_detail::ParseExtents;
using zarr_detail::Require;

}  // namespace

namespace zarr_detail {

std::optional<SizeProblem> CheckSizes(const ZarrMetadata& metadata) {
  try {
    CheckedMul(ShapeSize(metadata.shape), metadata.dtype.itemsize());
  } catch (const InvalidArgument&) {
    return SizeProblem{"shape",
                       "an array whose byte size (elements x " +
                           std::to_string(metadata.dtype.itemsize()) + " bytes) fits in 64 bits",
                       ShapeToString(metadata.shape)};
  }
  for (std::size_t dim = 0; dim < metadata.shape.size(); ++dim) {
    // The chunk grid rounds shape / chunks up as (shape + chunks - 1) / chunks, whose
    // intermediate shape + chunks must fit in 64 bits.
    Index rounded = 0;
    if (__builtin_add_overflow(metadata.shape[dim], metadata.chunks[dim], &rounded)) {
      return SizeProblem{
          "chunks",
          "extents whose chunk grid fits in 64 bits with shape " + ShapeToString(metadata.shape),
          ShapeToString(metadata.chunks)};
    }
  }
  Index chunk_bytes = 0;
  try {
    chunk_bytes = metadata.chunk_nbytes();
  } catch (const InvalidArgument&) {
    chunk_bytes = std::numeric_limits<Index>::max();
  }
  if (chunk_bytes > kMaxChunkBytes) {
    return SizeProblem{"chunks",
                       "chunks of at most 2^40 bytes (1 TiB) each; with dtype " +
                           std::string(metadata.dtype.name()) + " these chunks hold " +
                           (chunk_bytes == std::numeric_limits<Index>::max()
                                ? std::string("more than 2^63 bytes")
                                : std::to_string(chunk_bytes) + " bytes"),
                       ShapeToString(metadata.chunks)};
  }
  // Each sharding level's inner chunks per shard (shapes as the codec chain's checks
  // leave them: a level of another rank is refused there).
  Shape outer = metadata.chunks;
  for (const ZarrCodecChain* chain = &metadata.codecs;
       metadata.zarr_format == 3 && chain->sharding != nullptr; chain = &chain->sharding->codecs) {
    const Shape& inner = chain->sharding->chunk_shape;
    if (inner.size() != outer.size()) break;
    Index entries = 1;
    for (std::size_t dim = 0; dim < inner.size(); ++dim) {
      const Index per_dim = inner[dim] > 0 ? outer[dim] / inner[dim] : 0;
      entries = per_dim != 0 && entries > kMaxInnerChunksPerShard / per_dim
                    ? kMaxInnerChunksPerShard + 1
                    : entries * per_dim;
    }
    if (entries > kMaxInnerChunksPerShard) {
      return SizeProblem{"codecs",
                         "shards of at most " + std::to_string(kMaxInnerChunksPerShard) +
                             " inner chunks (an index of 64 MiB); shards " + ShapeToString(outer) +
                             " of inner chunks " + ShapeToString(inner) + " hold more",
                         ShapeToString(inner)};
    }
    outer = inner;
  }
  return std::nullopt;
}

}  // namespace zarr_detail

ZarrCodecChain ZarrMetadata::codec_chain() const {
  if (zarr_format == 3) return codecs;
  ZarrCodecChain chain;
  if (order == 'F') {
    for (std::size_t dim = shape.size(); dim-- > 0;)
      chain.transpose.push_back(static_cast<Index>(dim));
  }
  chain.endian = byte_order;
  chain.bytes_codecs = filters;
  if (compressor) chain.bytes_codecs.push_back(*compressor);
  return chain;
}

Shape ZarrMetadata::read_chunks() const {
  if (!sharded()) return chunks;
  const ZarrSharding* sharding = codecs.sharding.get();
  while (sharding->codecs.sharding != nullptr) sharding = sharding->codecs.sharding.get();
  return sharding->chunk_shape;
}

bool operator==(const ZarrCodecChain& a, const ZarrCodecChain& b) {
  if (a.transpose != b.transpose || a.bytes_codecs != b.bytes_codecs) return false;
  if ((a.sharding == nullptr) != (b.sharding == nullptr)) return false;
  if (a.sharding != nullptr) return *a.sharding == *b.sharding;
  return a.endian == b.endian;
}

bool operator==(const ZarrSharding& a, const ZarrSharding& b) {
  return a.chunk_shape == b.chunk_shape && a.codecs == b.codecs &&
         a.index_codecs == b.index_codecs && a.index_at_end == b.index_at_end;
}

std::int64_t ZarrMetadata::chunk_nbytes() const {
  return CheckedMul(ShapeSize(chunks), dtype.itemsize());
}

ZarrMetadata ParseZarrMetadata(std::string_view json, std::string_view where) {
  const Json document = zarr_detail::ParseDocument(json, where);
  ZarrMetadata metadata;

  const Json& format = Require(document, "zarr_format", where, "2 (Zarr v2)");
  if (AsIndex(format) != 2) Fail(where, "zarr_format", "2 (Zarr v2)", format);

  const std::string_view kShapeExpected = "an array of integers >= 0";
  metadata.shape = ParseExtents(Require(document, "shape", where, kShapeExpected), "shape", where,
                                0, kShapeExpected);
  const std::string chunks_expected = "an array of " + std::to_string(metadata.shape.size()) +
                                      " integers >= 1 (one per dimension of shape " +
                                      ShapeToString(metadata.shape) + ")";
  const Json& chunks = Require(document, "chunks", where, chunks_expected);
  metadata.chunks = ParseExtents(chunks, "chunks", where, 1, chunks_expected);
  if (metadata.chunks.size() != metadata.shape.size()) {
    Fail(where, "chunks", chunks_expected, chunks);
  }

  const std::string dtype_expected =
      "a supported type string (" + std::string(zarr_detail::kSupportedZarrTypestrs) + ")";
  const Json& dtype = Require(document, "dtype", where, dtype_expected);
  if (!dtype.is_string()) Fail(where, "dtype", dtype_expected, dtype);
  const std::string& typestr = dtype.get_ref<const std::string&>();
  if (typestr == "<f2" || typestr == ">f2") {
    // float16: held as float32 (zarr_metadata.hpp, float16_storage).
    metadata.dtype = float32;
    metadata.byte_order = typestr[0] == '>' ? ByteOrder::kBig : ByteOrder::kLittle;
    metadata.float16_storage = true;
  } else {
    try {
      std::tie(metadata.dtype, metadata.byte_order) = ParseZarrTypestr(typestr);
    } catch (const InvalidArgument&) {
      Fail(where, "dtype", dtype_expected, dtype);
    }
  }

  const Json& compressor =
      Require(document, "compressor", where, "null or a codec object such as {\"id\": \"zstd\"}");
  if (!compressor.is_null()) {
    metadata.compressor = zarr_detail::ParseCodecJson(compressor, "compressor", where);
  }

  const Json& fill = Require(document, "fill_value", where, "a fill value or null");
  metadata.fill_value =
      zarr_detail::ParseFillValue(fill, metadata.dtype, dtype.get<std::string>(), where);

  const Json& order = Require(document, "order", where, "\"C\" or \"F\"");
  if (order != "C" && order != "F") Fail(where, "order", "\"C\" or \"F\"", order);
  metadata.order = order.get<std::string>()[0];

  const std::string_view filters_expected = "null or an array of codec objects";
  const Json& filters = Require(document, "filters", where, filters_expected);
  if (!filters.is_null()) {
    if (!filters.is_array()) Fail(where, "filters", filters_expected, filters);
    // Zarr allows compressors such as zlib as filters; the array layer applies them
    // in order before the compressor.
    for (std::size_t index = 0; index < filters.size(); ++index) {
      metadata.filters.push_back(zarr_detail::ParseCodecJson(
          filters[index], "filters[" + std::to_string(index) + "]", where));
    }
  }

  if (const Json* separator = Find(document, "dimension_separator");
      separator != nullptr && !separator->is_null()) {
    if (*separator != "." && *separator != "/") {
      Fail(where, "dimension_separator", "\".\" or \"/\" (or the key left out)", *separator);
    }
    metadata.dimension_separator = separator->get<std::string>()[0];
  }

  if (const std::optional<zarr_detail::SizeProblem> problem = zarr_detail::CheckSizes(metadata)) {
    FailText(where, problem->key, problem->expected, problem->found);
  }
  return metadata;
}

std::string ZarrMetadataToJson(const ZarrMetadata& metadata) {
  Json document = Json::object();
  document["zarr_format"] = 2;
  document["shape"] = metadata.shape;
  document["chunks"] = metadata.chunks;
  document["dtype"] = metadata.float16_storage
                          ? std::string(metadata.byte_order == ByteOrder::kBig ? ">f2" : "<f2")
                          : ZarrTypestr(metadata.dtype, metadata.byte_order);
  document["order"] = std::string(1, metadata.order);
  document["fill_value"] = zarr_detail::FillValueToJson(metadata.fill_value, metadata.dtype);
  document["compressor"] =
      metadata.compressor ? zarr_detail::CodecToJson(*metadata.compressor) : Json();
  if (metadata.filters.empty()) {
    document["filters"] = nullptr;
  } else {
    Json filters = Json::array();
    for (const CodecConfig& filter : metadata.filters) {
      filters.push_back(zarr_detail::CodecToJson(filter));
    }
    document["filters"] = std::move(filters);
  }
  document["dimension_separator"] = std::string(1, metadata.dimension_separator);
  // nlohmann's objects keep keys sorted, as zarr-python's json.dumps(sort_keys=True).
  return zarr_detail::DumpOrThrow(document, ".zarray");
}

namespace {

// As written: any NaN equals any NaN, and 0.0 does not equal -0.0.
bool SameNumber(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) ||
         std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
}

bool SameFill(const FillValue& a, const FillValue& b) {
  const double* x = std::get_if<double>(&a);
  const double* y = std::get_if<double>(&b);
  if (x != nullptr && y != nullptr) return SameNumber(*x, *y);
  // A complex fill's parts compare the same way ([1.0, "NaN"] equals itself).
  const std::complex<double>* u = std::get_if<std::complex<double>>(&a);
  const std::complex<double>* v = std::get_if<std::complex<double>>(&b);
  if (u != nullptr && v != nullptr) {
    return SameNumber(u->real(), v->real()) && SameNumber(u->imag(), v->imag());
  }
  return a == b;
}

}  // namespace

bool operator==(const ZarrMetadata& a, const ZarrMetadata& b) {
  return a.zarr_format == b.zarr_format && a.key_encoding == b.key_encoding &&
         a.codecs == b.codecs && a.shape == b.shape && a.chunks == b.chunks && a.dtype == b.dtype &&
         a.byte_order == b.byte_order && a.order == b.order &&
         SameFill(a.fill_value, b.fill_value) && a.compressor == b.compressor &&
         a.filters == b.filters && a.dimension_separator == b.dimension_separator &&
         a.float16_storage == b.float16_storage;
}

}  // namespace tessera
