// Zarr array metadata: the v2 `.zarray` document and the v3 `zarr.json` document, parsed
// and written.
//
//   ZarrMetadata meta = ParseZarrMetadata(json_text, "/data/t2m.zarr/.zarray");
//   meta.grid();                          // ChunkGrid(shape, chunks)
//   std::string text = ZarrMetadataToJson(meta);
//   auto [v3, attributes] = ParseZarrJson(text, "/data/t2m.zarr/zarr.json");
//   std::string v3_text = ZarrJsonText(v3, attributes);
//
// One ZarrMetadata describes both formats. Fields shared by both mean the same thing;
// `order`, `byte_order`, `filters`, `compressor` and `dimension_separator` are v2's
// spelling, `codecs` and `key_encoding` v3's; `codec_chain()` is the pipeline of either
// in one form (what chunk I/O runs). In v3, `chunks` is the chunk grid's chunk shape:
// the shard shape of a sharded array, whose inner chunks are `codecs.sharding`'s.
//
// Parsing validates everything before any chunk is touched and throws FormatError
// whose message names the document (`where`) and the offending key, e.g.
//   /data/a.zarr/.zarray: key "chunks": expected 2 positive integers, found [10, 0]
// v2 supports: zarr_format 2; dtype strings "|b1", "|i1", "<i2".."<i8", ">i2".., "|u1",
// "<u2".., "<f4", "<f8", ">f8" ...; order "C" and "F"; fill_value null, numbers,
// "NaN", "Infinity", "-Infinity", booleans; compressor null or a codec of codec.hpp;
// filters null or a list of codecs; dimension_separator "." or "/". Codec parameters
// are validated by the codec layer (MakeCodec), whose reason the FormatError repeats.
// v3 supports: node_type "array"; data_type bool, int8..int64, uint8..uint64, float32,
// float64, complex64, complex128; chunk_grid "regular"; chunk_key_encoding "default"
// and "v2" (either separator); fill values as numbers, "NaN", "Infinity", "-Infinity",
// hex bit patterns ("0x7fc00000") and [re, im]; codecs transpose, bytes, blosc, zstd,
// gzip, crc32c and sharding_indexed (nested, index at start or end, index codecs bytes
// and crc32c); attributes; dimension_names. Extension keys with "must_understand": false
// are ignored; storage_transformers other than [] and any other key are refused.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/storage/codec.hpp"

namespace tessera {

enum class ByteOrder : std::uint8_t { kLittle, kBig };

// The Zarr/numpy type string of a dtype: "<f8", "|b1", ">i4".
std::string ZarrTypestr(DType dtype, ByteOrder byte_order);
// Parses a type string; throws InvalidArgument for an unsupported one.
std::pair<DType, ByteOrder> ParseZarrTypestr(std::string_view typestr);

// A .zarray fill_value: null (monostate), a boolean, an integer, a float (NaN and
// infinities included) or a complex number ([real, imaginary] in JSON).
using FillValue =
    std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::complex<double>>;

// Writes one element of `dtype` holding `fill` (null -> 0) in native byte order.
// REQUIRES: out.size() == dtype.itemsize().
void EncodeFillElement(const FillValue& fill, DType dtype, std::span<std::byte> out);

struct ZarrSharding;

// A Zarr v3 codec pipeline in encoding order: the array-to-array transposes (composed
// into one permutation), one array-to-bytes codec (bytes, or sharding_indexed), then the
// bytes-to-bytes codecs.
struct ZarrCodecChain {
  // The stored (transposed) array's dimension k is the chunk's dimension transpose[k];
  // empty: no transpose (C order).
  std::vector<Index> transpose;
  ByteOrder endian = ByteOrder::kLittle;  // the bytes codec's; unused when sharded
  std::shared_ptr<const ZarrSharding> sharding;  // null: the array-to-bytes codec is bytes
  std::vector<CodecConfig> bytes_codecs;         // blosc, zstd, gzip, crc32c, ...

  friend bool operator==(const ZarrCodecChain& a, const ZarrCodecChain& b);
};

// The sharding_indexed codec: a chunk (a shard) is a grid of inner chunks, each encoded
// with `codecs`, stored one after another, and an index of (offset, nbytes) pairs
// encoded with `index_codecs` (bytes, then optionally crc32c) at its start or end.
struct ZarrSharding {
  Shape chunk_shape;  // the inner chunks' shape; divides the shard's shape
  ZarrCodecChain codecs;
  ZarrCodecChain index_codecs;
  bool index_at_end = true;

  friend bool operator==(const ZarrSharding& a, const ZarrSharding& b);
};

// v3's chunk_key_encoding: "default" ("c/1/2", "c" for 0-d) or "v2" ("1.2", "0").
enum class ChunkKeyEncoding : std::uint8_t { kDefault, kV2 };

struct ZarrMetadata {
  int zarr_format = 2;  // 2 (.zarray) or 3 (zarr.json)
  Shape shape;
  Shape chunks;
  DType dtype = float64;
  ByteOrder byte_order = ByteOrder::kLittle;  // of stored chunks; ignored for 1-byte types
  char order = 'C';                           // 'C' or 'F' (layout inside a chunk)
  FillValue fill_value = 0.0;
  std::optional<CodecConfig> compressor;  // nullopt = uncompressed
  std::vector<CodecConfig> filters;       // applied before the compressor on write
  char dimension_separator = '.';         // '.' or '/' (v2 and both v3 key encodings)
  // The stored elements are IEEE binary16 (v3 "float16", v2 "<f2"), held in memory as
  // float32: dtype is float32, converted chunk by chunk (values beyond float16's range
  // become infinities when written).
  bool float16_storage = false;
  // v3 only:
  ChunkKeyEncoding key_encoding = ChunkKeyEncoding::kV2;  // always kV2 in v2
  ZarrCodecChain codecs;  // the whole pipeline (v2 fields above are then unused)

  // The pipeline as one chain in either format (v2: order F is the reversing transpose,
  // byte_order the bytes codec's endian, filters then compressor the bytes codecs).
  ZarrCodecChain codec_chain() const;
  // Sharded (v3 with sharding_indexed as the array-to-bytes codec).
  bool sharded() const { return zarr_format == 3 && codecs.sharding != nullptr; }
  // The shape of the smallest independently readable chunk: the innermost sharding's
  // inner chunks, else `chunks`.
  Shape read_chunks() const;

  ChunkGrid grid() const { return ChunkGrid(shape, chunks); }
  // Bytes of one full (unclipped) decoded chunk.
  std::int64_t chunk_nbytes() const;

  // Field by field; fill values as they are written, so a NaN fill equals a NaN fill
  // (and 0.0 does not equal -0.0).
  friend bool operator==(const ZarrMetadata& a, const ZarrMetadata& b);
};

// Parses and validates a .zarray document; `where` names it in errors.
ZarrMetadata ParseZarrMetadata(std::string_view json, std::string_view where);
// Serializes in zarr-python's layout (keys sorted, indent 4).
std::string ZarrMetadataToJson(const ZarrMetadata& metadata);

// The .zattrs of an array: dimension names (xarray's "_ARRAY_DIMENSIONS") and any
// other attributes as a JSON object text.
struct ZarrAttributes {
  // empty = not written; in v3 an empty name is written as null
  std::vector<std::string> dimension_names;
  std::string other_json = "{}";             // must be a JSON object

  friend bool operator==(const ZarrAttributes&, const ZarrAttributes&) = default;
};

// Parses .zattrs; throws FormatError naming `where` for a malformed document.
ZarrAttributes ParseZarrAttributes(std::string_view json, std::string_view where);
std::string ZarrAttributesToJson(const ZarrAttributes& attributes);

// Metadata of a new Zarr v3 array as zarr-python writes it: chunk key encoding
// "default" ("c/0/1"), codecs bytes (little-endian), then `compressor` (blosc, zstd or
// gzip; nullopt: none), then crc32c when `checksum`. With `shards` (each a multiple of
// `chunks`), the array is sharded: `chunks` is the shard shape and sharding_indexed holds
// those codecs for inner chunks of `chunks` with an index [bytes, crc32c] at the end.
// InvalidArgument for a compressor v3 has no codec for (lz4, zlib) or shards that are
// not multiples of chunks.
// `endian`: the byte order of the stored elements (bytes codec).
ZarrMetadata MakeV3Metadata(Shape shape, Shape chunks, DType dtype,
                            std::optional<CodecConfig> compressor,
                            std::optional<Shape> shards = std::nullopt, bool checksum = false,
                            ByteOrder endian = ByteOrder::kLittle);

// The shard shape of a sharded v3 array (metadata.chunks), nullopt when not sharded.
std::optional<Shape> ShardShape(const ZarrMetadata& metadata);

// The compressor of `metadata`'s (innermost) chunks: v2's compressor, or the first v3
// bytes-to-bytes codec other than crc32c; nullopt when uncompressed. What a copy of the
// array keeps (tessera rechunk), with ChunkChecksum: whether v3 chunks end in a crc32c.
std::optional<CodecConfig> ChunkCompressor(const ZarrMetadata& metadata);
bool ChunkChecksum(const ZarrMetadata& metadata);

// "bytes (little) -> blosc(lz4, level 5, shuffle)", "sharding_indexed (...) of [...]" for
// v3, "blosc(lz4, level 5, shuffle)", "filters [...] then compressor ..." or
// "uncompressed" for v2: one line for `tessera info` and messages.
std::string DescribeCodecs(const ZarrMetadata& metadata);

// Parses and validates a v3 zarr.json document of an array (its attributes and
// dimension_names are the second member); `where` names it in errors.
std::pair<ZarrMetadata, ZarrAttributes> ParseZarrJson(std::string_view json,
                                                      std::string_view where);
// Serializes a v3 array document; InvalidArgument unless zarr_format is 3.
std::string ZarrJsonText(const ZarrMetadata& metadata, const ZarrAttributes& attributes);

}  // namespace tessera
