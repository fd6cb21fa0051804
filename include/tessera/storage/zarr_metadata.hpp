// Zarr v2 array metadata: the `.zarray` document, parsed and written.
//
//   ZarrMetadata meta = ParseZarrMetadata(json_text, "/data/t2m.zarr/.zarray");
//   meta.grid();                          // ChunkGrid(shape, chunks)
//   std::string text = ZarrMetadataToJson(meta);
//
// Parsing validates everything before any chunk is touched and throws FormatError
// whose message names the document (`where`) and the offending key, e.g.
//   /data/a.zarr/.zarray: key "chunks": expected 2 positive integers, found [10, 0]
// Supported: zarr_format 2; dtype strings "|b1", "|i1", "<i2".."<i8", ">i2".., "|u1",
// "<u2".., "<f4", "<f8", ">f8" ...; order "C" and "F"; fill_value null, numbers,
// "NaN", "Infinity", "-Infinity", booleans; compressor null or a codec of codec.hpp;
// filters null or a list of codecs; dimension_separator "." or "/". Codec parameters
// are validated by the codec layer (MakeCodec), whose reason the FormatError repeats.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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

struct ZarrMetadata {
  Shape shape;
  Shape chunks;
  DType dtype = float64;
  ByteOrder byte_order = ByteOrder::kLittle;  // of stored chunks; ignored for 1-byte types
  char order = 'C';                           // 'C' or 'F' (layout inside a chunk)
  FillValue fill_value = 0.0;
  std::optional<CodecConfig> compressor;  // nullopt = uncompressed
  std::vector<CodecConfig> filters;       // applied before the compressor on write
  char dimension_separator = '.';         // '.' or '/'

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
  std::vector<std::string> dimension_names;  // empty = not written
  std::string other_json = "{}";             // must be a JSON object

  friend bool operator==(const ZarrAttributes&, const ZarrAttributes&) = default;
};

// Parses .zattrs; throws FormatError naming `where` for a malformed document.
ZarrAttributes ParseZarrAttributes(std::string_view json, std::string_view where);
std::string ZarrAttributesToJson(const ZarrAttributes& attributes);

}  // namespace tessera
