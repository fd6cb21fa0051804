// The v3 zarr.json document of an array: parsing (every check made before any chunk is
// touched) and writing in zarr-python's form.
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <utility>

#include "codec_chain_json.hpp"
#include "fill_value.hpp"
#include "float16.hpp"
#include "json_fields.hpp"
#include "metadata_sizes.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {
namespace {

using zarr_detail::AsIndex;
using zarr_detail::Fail;
using zarr_detail::FailText;
using zarr_detail::Find;
using zarr_detail::Json;
using zarr_detail::ParseExtents;
using zarr_detail::Require;

// v3 data type names of Tessera's dtypes (the spec's core types).
struct DataTypeName {
  std::string_view name;
  DType dtype;
};
constexpr DataTypeName kDataTypes[] = {
    {"bool", bool_},
    {"int8", int8},
    {"int16", int16},
    {"int32", int32},
    {"int64", int64},
    {"uint8", uint8},
    {"uint16", uint16},
    {"uint32", uint32},
    {"uint64", uint64},
    {"float32", float32},
    {"float64", float64},
    {"complex64", complex64},
    {"complex128", complex128},
};
constexpr std::string_view kDataTypeList =
    "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16 (held as "
    "float32), float32, float64, complex64, complex128";
// float16 is a storage type only: held as float32 (ZarrMetadata::float16_storage).
constexpr std::string_view kFloat16 = "float16";

constexpr std::string_view kKnownKeys[] = {
    "zarr_format",          "node_type",  "shape",  "data_type",  "chunk_grid",
    "chunk_key_encoding",   "fill_value", "codecs", "attributes", "dimension_names",
    "storage_transformers",
};

std::string_view DataTypeNameOf(DType dtype) {
  for (const DataTypeName& entry : kDataTypes) {
    if (entry.dtype == dtype) return entry.name;
  }
  throw InvalidArgument("dtype " + std::string(dtype.name()) + " has no Zarr v3 data type");
}

// A hex bit pattern ("0x7fc00000") of a float of `bytes` bytes (2, 4 or 8), as a
// double; nullopt when `text` is not one.
std::optional<double> HexFloat(std::string_view text, Index bytes) {
  if (!text.starts_with("0x") || text.size() < 3 ||
      static_cast<Index>(text.size() - 2) > 2 * bytes) {
    return std::nullopt;
  }
  std::uint64_t bits = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data() + 2, end, bits, 16);
  if (error != std::errc() || stop != end) return std::nullopt;
  if (bytes == 2) {
    return static_cast<double>(zarr_detail::HalfBitsToFloat(static_cast<std::uint16_t>(bits)));
  }
  if (bytes == 4)
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  return std::bit_cast<double>(bits);
}

// Replaces hex bit patterns in a float (or complex) fill by the numbers they stand for,
// so that the v2 parser, which knows every other form, reads the rest. `float16`: the
// patterns are of binary16 values.
Json ResolveHexFill(const Json& value, DType dtype, bool float16) {
  const DType component = dtype.is_complex() ? RealDType(dtype) : dtype;
  auto resolve = [&](const Json& part) -> Json {
    if (!part.is_string()) return part;
    const std::optional<double> number =
        HexFloat(part.get_ref<const std::string&>(), float16 ? 2 : component.itemsize());
    if (!number) return part;
    // A NaN stays a number (not "NaN"), so that its payload reaches the fill value:
    // zarr-python reads unwritten chunks of "0x7fc00001" as exactly those bits.
    if (std::isnan(*number)) return *number;
    if (std::isinf(*number)) return *number > 0 ? "Infinity" : "-Infinity";
    return *number;
  };
  if (dtype.kind() == DTypeKind::kFloat) return resolve(value);
  if (dtype.is_complex() && value.is_array() && value.size() == 2) {
    return Json::array({resolve(value[0]), resolve(value[1])});
  }
  return value;
}

FillValue ParseV3Fill(const Json& value, DType dtype, bool float16, std::string_view type_name,
                      std::string_view where) {
  if (value.is_null()) {
    Fail(where, "fill_value",
         "a fill value for data type " + std::string(type_name) + " (Zarr v3 requires one)", value);
  }
  return zarr_detail::ParseFillValue(ResolveHexFill(value, dtype, float16), dtype, type_name,
                                     where);
}

// A NaN other than the quiet NaN ("NaN" reads back as that one) as v3's hex bit pattern
// of an element of `bytes` (2, 4 or 8) bytes; nullopt for every other value.
std::optional<std::string> NanPayloadText(double value, Index bytes) {
  if (!std::isnan(value)) return std::nullopt;
  char text[24];
  if (bytes == 2) {
    const std::uint16_t bits = zarr_detail::FloatToHalfBits(static_cast<float>(value));
    if (bits == 0x7E00u) return std::nullopt;
    std::snprintf(text, sizeof text, "0x%04x", static_cast<unsigned>(bits));
  } else if (bytes == 4) {
    const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(value));
    if (bits == 0x7FC00000u) return std::nullopt;
    std::snprintf(text, sizeof text, "0x%08x", static_cast<unsigned>(bits));
  } else {
    const auto bits = std::bit_cast<std::uint64_t>(value);
    if (bits == 0x7FF8000000000000u) return std::nullopt;
    std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(bits));
  }
  return std::string(text);
}

Json V3FillJson(const FillValue& fill, DType dtype, bool float16) {
  const Index part_bytes =
      float16 ? 2 : (dtype.is_complex() ? dtype.itemsize() / 2 : dtype.itemsize());
  if (const double* value = std::get_if<double>(&fill); value != nullptr && !dtype.is_complex()) {
    if (std::optional<std::string> hex = NanPayloadText(*value, part_bytes)) return *hex;
  }
  if (const auto* value = std::get_if<std::complex<double>>(&fill)) {
    const std::optional<std::string> real = NanPayloadText(value->real(), part_bytes);
    const std::optional<std::string> imag = NanPayloadText(value->imag(), part_bytes);
    if (real || imag) {
      Json parts = zarr_detail::FillValueToJson(fill, dtype);
      if (real) parts[0] = *real;
      if (imag) parts[1] = *imag;
      return parts;
    }
  }
  if (std::holds_alternative<std::monostate>(fill)) {
    // v3 has no null fill: the zero element, as zarr-python writes for a default fill.
    if (dtype.is_complex()) return Json::array({0.0, 0.0});
    if (dtype.kind() == DTypeKind::kBool) return false;
    if (dtype.kind() == DTypeKind::kFloat) return 0.0;
    return 0;
  }
  return zarr_detail::FillValueToJson(fill, dtype);
}

void ParseChunkKeyEncoding(const Json* value, ZarrMetadata& metadata, std::string_view where) {
  metadata.key_encoding = ChunkKeyEncoding::kDefault;
  metadata.dimension_separator = '/';
  if (value == nullptr) return;
  const std::string expected =
      "{\"name\": \"default\" or \"v2\", \"configuration\": {\"separator\": \"/\" or \".\"}}";
  std::string name;
  const Json* configuration = nullptr;
  if (value->is_string()) {
    name = value->get<std::string>();
  } else if (value->is_object() && Find(*value, "name") != nullptr &&
             Find(*value, "name")->is_string()) {
    name = Find(*value, "name")->get<std::string>();
    configuration = Find(*value, "configuration");
  } else {
    Fail(where, "chunk_key_encoding", expected, *value);
  }
  if (name == "v2") {
    metadata.key_encoding = ChunkKeyEncoding::kV2;
    metadata.dimension_separator = '.';
  } else if (name != "default") {
    Fail(where, "chunk_key_encoding.name", "\"default\" or \"v2\"", Json(name));
  }
  if (configuration == nullptr) return;
  if (!configuration->is_object()) Fail(where, "chunk_key_encoding", expected, *value);
  if (const Json* separator = Find(*configuration, "separator")) {
    if (*separator != "/" && *separator != ".") {
      Fail(where, "chunk_key_encoding.configuration.separator", "\"/\" or \".\"", *separator);
    }
    metadata.dimension_separator = separator->get<std::string>()[0];
  }
}

ZarrAttributes ParseV3Attributes(const Json& document, std::size_t ndim, std::string_view where) {
  ZarrAttributes attributes;
  if (const Json* values = Find(document, "attributes"); values != nullptr) {
    if (!values->is_object()) Fail(where, "attributes", "an object", *values);
    attributes.other_json = values->dump();
  }
  if (const Json* names = Find(document, "dimension_names");
      names != nullptr && !names->is_null()) {
    const std::string expected =
        "a list of " + std::to_string(ndim) + " names (strings or null), one per dimension";
    if (!names->is_array() || names->size() != ndim)
      Fail(where, "dimension_names", expected, *names);
    bool any = false;
    for (const Json& name : *names) {
      if (!name.is_string() && !name.is_null()) Fail(where, "dimension_names", expected, *names);
      attributes.dimension_names.push_back(name.is_null() ? std::string()
                                                          : name.get<std::string>());
      // An empty name is written as null, so names all empty or null are no names.
      any = any || (name.is_string() && !name.get_ref<const std::string&>().empty());
    }
    if (!any) attributes.dimension_names.clear();
  }
  return attributes;
}

}  // namespace

std::pair<ZarrMetadata, ZarrAttributes> ParseZarrJson(std::string_view json,
                                                      std::string_view where) {
  const Json document = zarr_detail::ParseDocument(json, where);
  ZarrMetadata metadata;
  metadata.zarr_format = 3;

  const Json& format = Require(document, "zarr_format", where, "3 (Zarr v3)");
  if (AsIndex(format) != 3) Fail(where, "zarr_format", "3 (Zarr v3)", format);
  const Json& node_type = Require(document, "node_type", where, "\"array\"");
  if (node_type != "array") {
    Fail(where, "node_type",
         node_type == "group" ? "\"array\" (this is a Zarr group: open one of its arrays)"
                              : "\"array\"",
         node_type);
  }
  for (const auto& [key, value] : document.items()) {
    if (std::ranges::find(kKnownKeys, key) != std::end(kKnownKeys)) continue;
    // The spec's extension rule: a key may be ignored only when it says so.
    const Json* must = value.is_object() ? Find(value, "must_understand") : nullptr;
    if (must != nullptr && *must == false) continue;
    FailText(where, key,
             "only keys Tessera understands, or extensions marked \"must_understand\": false",
             "an extension Tessera does not support");
  }

  const std::string_view kShapeExpected = "an array of integers >= 0";
  metadata.shape = ParseExtents(Require(document, "shape", where, kShapeExpected), "shape", where,
                                0, kShapeExpected);
  const std::size_t ndim = metadata.shape.size();

  const std::string type_expected = "a supported data type (" + std::string(kDataTypeList) + ")";
  const Json& data_type = Require(document, "data_type", where, type_expected);
  std::string type_name;
  if (data_type.is_string()) type_name = data_type.get<std::string>();
  bool known_type = false;
  for (const DataTypeName& entry : kDataTypes) {
    if (entry.name == type_name) {
      metadata.dtype = entry.dtype;
      known_type = true;
    }
  }
  if (type_name == kFloat16) {
    metadata.dtype = float32;
    metadata.float16_storage = true;
    known_type = true;
  }
  if (!known_type) Fail(where, "data_type", type_expected, data_type);

  const std::string chunks_expected =
      "{\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [" + std::to_string(ndim) +
      " integers >= 1]}}";
  const Json& grid = Require(document, "chunk_grid", where, chunks_expected);
  if (!grid.is_object() || Find(grid, "name") == nullptr || *Find(grid, "name") != "regular" ||
      Find(grid, "configuration") == nullptr || !Find(grid, "configuration")->is_object()) {
    Fail(where, "chunk_grid", chunks_expected, grid);
  }
  const Json& chunk_shape = Require(*Find(grid, "configuration"), "chunk_shape", where,
                                    chunks_expected, "chunk_grid.configuration.chunk_shape");
  metadata.chunks =
      ParseExtents(chunk_shape, "chunk_grid.configuration.chunk_shape", where, 1, chunks_expected);
  if (metadata.chunks.size() != ndim) {
    Fail(where, "chunk_grid.configuration.chunk_shape", chunks_expected, chunk_shape);
  }

  ParseChunkKeyEncoding(Find(document, "chunk_key_encoding"), metadata, where);
  metadata.fill_value = ParseV3Fill(Require(document, "fill_value", where, "a fill value"),
                                    metadata.dtype, metadata.float16_storage, type_name, where);
  metadata.codecs = zarr_detail::ParseCodecChain(
      Require(document, "codecs", where, "a list of codecs"), "codecs", where,
      zarr_detail::StoredElementType(metadata), metadata.chunks);

  if (const Json* transformers = Find(document, "storage_transformers");
      transformers != nullptr && !(transformers->is_array() && transformers->empty())) {
    Fail(where, "storage_transformers",
         "[] (no storage transformers: Tessera supports none; rewrite the array without them)",
         *transformers);
  }
  ZarrAttributes attributes = ParseV3Attributes(document, ndim, where);

  if (const std::optional<zarr_detail::SizeProblem> problem = zarr_detail::CheckSizes(metadata)) {
    FailText(where, problem->key == "chunks" ? "chunk_grid" : problem->key, problem->expected,
             problem->found);
  }
  return {std::move(metadata), std::move(attributes)};
}

std::string ZarrJsonText(const ZarrMetadata& metadata, const ZarrAttributes& attributes) {
  if (metadata.zarr_format != 3) {
    throw InvalidArgument("ZarrJsonText writes Zarr v3 metadata; this metadata is format " +
                          std::to_string(metadata.zarr_format));
  }
  Json document = Json::object();
  document["zarr_format"] = 3;
  document["node_type"] = "array";
  document["shape"] = metadata.shape;
  document["data_type"] =
      std::string(metadata.float16_storage ? kFloat16 : DataTypeNameOf(metadata.dtype));
  document["chunk_grid"] = {{"name", "regular"},
                            {"configuration", {{"chunk_shape", metadata.chunks}}}};
  document["chunk_key_encoding"] = {
      {"name", metadata.key_encoding == ChunkKeyEncoding::kV2 ? "v2" : "default"},
      {"configuration", {{"separator", std::string(1, metadata.dimension_separator)}}}};
  document["fill_value"] =
      V3FillJson(metadata.fill_value, metadata.dtype, metadata.float16_storage);
  document["codecs"] =
      zarr_detail::CodecChainToJson(metadata.codecs, zarr_detail::StoredElementType(metadata));
  document["attributes"] = zarr_detail::ParseAttributesObject(attributes.other_json);
  if (!attributes.dimension_names.empty()) {
    Json names = Json::array();
    for (const std::string& name : attributes.dimension_names) {
      names.push_back(name.empty() ? Json() : Json(name));
    }
    document["dimension_names"] = std::move(names);
  }
  document["storage_transformers"] = Json::array();
  return zarr_detail::DumpOrThrow(document, "zarr.json");
}

}  // namespace tessera
