#include "info_command.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <iomanip>
#include <optional>
#include <sstream>
#include <variant>
#include <vector>

#include "nlohmann/json.hpp"
#include "store_argument.hpp"
#include "tessera/api/storage.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/shape.hpp"

namespace tessera::cli {
namespace {

using nlohmann::ordered_json;

// Everything `info` reports about one array.
struct ArraySummary {
  std::string name;   // the array's path inside the store ("" for the root)
  std::string where;  // the array's directory, for display
  ZarrMetadata metadata;
  ZarrAttributes attributes;
  Shape grid_shape;
  Index chunks_expected = 0;
  Index chunks_stored = 0;
  std::int64_t logical_bytes = 0;
  std::int64_t stored_bytes = 0;
  // Decoded size of the stored chunks / their stored size; nullopt when none is stored.
  // Missing chunks are left out on both sides, so a sparse array's ratio is not inflated.
  std::optional<double> compression_ratio;
};

// What a group listing shows of an array: its name, metadata and attributes.
ArraySummary DescribeArray(const ZarrArray& array, const Store& store, const std::string& path) {
  ArraySummary summary;
  summary.name = path;
  summary.where = path.empty() ? store.Describe() : store.DescribeKey(path);
  summary.metadata = array.metadata();
  summary.attributes = array.attributes();
  return summary;
}

// DescribeArray plus the chunk counts and sizes `info` shows for one array.
ArraySummary SummarizeArray(const std::shared_ptr<Store>& store, const std::string& path) {
  const ZarrArray array = ZarrArray::Open(store, path);
  ArraySummary summary = DescribeArray(array, *store, path);
  summary.grid_shape = array.grid().grid_shape();
  summary.chunks_expected = array.grid().num_blocks();
  const ZarrArray::StoredChunks stored = array.CountStoredChunks();
  summary.chunks_stored = stored.count;
  summary.stored_bytes = stored.bytes;
  summary.logical_bytes =
      CheckedMul(ShapeSize(summary.metadata.shape), summary.metadata.dtype.itemsize());
  if (stored.count > 0 && stored.bytes > 0) {
    // Every stored chunk decodes to a full chunk, edge chunks included (zarr pads them).
    const double decoded =
        static_cast<double>(stored.count) * static_cast<double>(summary.metadata.chunk_nbytes());
    summary.compression_ratio = decoded / static_cast<double>(stored.bytes);
  }
  return summary;
}

// Shortest text that reads back as the same double ("0.1", "1e+300").
std::string FormatDouble(double value) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

std::string FillValueText(const FillValue& fill) {
  return std::visit(
      [](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(value)) return "NaN";
          if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
          return FormatDouble(value);
        } else if constexpr (std::is_same_v<T, std::complex<double>>) {
          return "[" + FillValueText(value.real()) + ", " + FillValueText(value.imag()) + "]";
        } else {
          return std::to_string(value);
        }
      },
      fill);
}

// Zarr's JSON spelling: non-finite floats are the strings "NaN", "Infinity", "-Infinity".
ordered_json FillValueJson(const FillValue& fill) {
  return std::visit(
      [](const auto& value) -> ordered_json {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(value)) return FillValueText(value);
          return value;
        } else if constexpr (std::is_same_v<T, std::complex<double>>) {
          return ordered_json::array({FillValueJson(value.real()), FillValueJson(value.imag())});
        } else {
          return value;
        }
      },
      fill);
}

ordered_json CodecJson(const CodecConfig& codec) {
  ordered_json json = {{"id", codec.id}, {"description", DescribeCodec(codec)}};
  if (codec.id == "blosc") {
    json["cname"] = codec.cname;
    json["clevel"] = codec.level;
    json["shuffle"] = codec.shuffle;
    json["blocksize"] = codec.blocksize;
  } else if (codec.id == "lz4") {
    json["acceleration"] = codec.acceleration;
  } else {
    json["level"] = codec.level;
  }
  return json;
}

std::string CodecText(const std::optional<CodecConfig>& codec) {
  return codec ? DescribeCodec(*codec) : "none";
}

std::string FiltersText(const std::vector<CodecConfig>& filters) {
  if (filters.empty()) return "none";
  std::string text;
  for (const CodecConfig& filter : filters) {
    if (!text.empty()) text += ", ";
    text += DescribeCodec(filter);
  }
  return text;
}

std::string NamesText(const std::vector<std::string>& names) {
  std::string text = "(";
  for (std::size_t dim = 0; dim < names.size(); ++dim) {
    if (dim > 0) text += ", ";
    text += names[dim];
  }
  return text + ")";
}

std::string BytesText(std::int64_t bytes) {
  return format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

std::string RatioText(const std::optional<double>& ratio) {
  if (!ratio) return "n/a (no chunk stored)";
  std::ostringstream text;
  text << std::fixed << std::setprecision(2) << *ratio << "x";
  return text.str();
}

// v2's type string ("<f8"), or v3's data type ("float64").
std::string Typestr(const ZarrMetadata& metadata) {
  if (metadata.zarr_format == 3) {
    return metadata.float16_storage ? "float16" : std::string(metadata.dtype.name());
  }
  if (metadata.float16_storage) return metadata.byte_order == ByteOrder::kBig ? ">f2" : "<f2";
  return ZarrTypestr(metadata.dtype, metadata.byte_order);
}

// The dtype as `info` shows it: what Tessera holds, and what is stored when that differs.
std::string DtypeText(const ZarrMetadata& metadata) {
  std::string text = std::string(metadata.dtype.name()) + " (" + Typestr(metadata);
  if (metadata.float16_storage) text += ", held as float32";
  return text + ")";
}

void WriteRow(std::ostream& out, std::string_view label, const std::string& value) {
  constexpr int kLabelWidth = 20;  // fits the longest label, "compression ratio"
  out << "  " << std::left << std::setw(kLabelWidth) << label << value << '\n';
}

void WriteArrayText(std::ostream& out, const ArraySummary& summary) {
  const ZarrMetadata& metadata = summary.metadata;
  const std::optional<Shape> shards = ShardShape(metadata);
  out << "Zarr array " << summary.where << '\n';
  WriteRow(out, "format", "Zarr v" + std::to_string(metadata.zarr_format));
  WriteRow(out, "shape", ShapeToString(metadata.shape));
  WriteRow(out, "dtype", DtypeText(metadata));
  WriteRow(out, "chunks",
           ShapeToString(metadata.read_chunks()) +
               (shards ? " (inner chunks: the unit of reading)" : ""));
  if (shards) WriteRow(out, "shards", ShapeToString(*shards) + " (the unit of writing)");
  if (metadata.zarr_format == 2) WriteRow(out, "order", std::string(1, metadata.order));
  WriteRow(out, "grid", ShapeToString(summary.grid_shape) + (shards ? " shards" : " blocks"));
  WriteRow(
      out, shards ? "shards stored" : "chunks stored",
      std::to_string(summary.chunks_stored) + " of " + std::to_string(summary.chunks_expected));
  if (metadata.zarr_format == 2) {
    WriteRow(out, "codec", CodecText(metadata.compressor));
    WriteRow(out, "filters", FiltersText(metadata.filters));
  } else {
    WriteRow(out, "codecs", DescribeCodecs(metadata));
  }
  WriteRow(out, "fill value", FillValueText(metadata.fill_value));
  WriteRow(out, "chunk keys",
           std::string(metadata.key_encoding == ChunkKeyEncoding::kDefault ? "default" : "v2") +
               " (separator \"" + metadata.dimension_separator + "\")");
  if (!summary.attributes.dimension_names.empty()) {
    WriteRow(out, "dimensions", NamesText(summary.attributes.dimension_names));
  }
  WriteRow(out, "logical size", BytesText(summary.logical_bytes));
  WriteRow(out, "stored size", BytesText(summary.stored_bytes));
  WriteRow(out, "compression ratio", RatioText(summary.compression_ratio));
}

ordered_json ArrayJson(const ArraySummary& summary) {
  const ZarrMetadata& metadata = summary.metadata;
  ordered_json json;
  const std::optional<Shape> shards = ShardShape(metadata);
  const std::optional<CodecConfig> compressor = ChunkCompressor(metadata);
  json["kind"] = "array";
  json["path"] = summary.where;
  json["zarr_format"] = metadata.zarr_format;
  json["shape"] = metadata.shape;
  json["dtype"] = std::string(metadata.dtype.name());
  json["typestr"] = Typestr(metadata);
  json["float16_storage"] = metadata.float16_storage;
  json["chunks"] = metadata.read_chunks();
  json["shards"] = shards ? ordered_json(*shards) : ordered_json();
  json["order"] = std::string(1, metadata.order);
  json["grid"] = summary.grid_shape;
  json["chunks_stored"] = summary.chunks_stored;
  json["chunks_expected"] = summary.chunks_expected;
  json["codecs"] = DescribeCodecs(metadata);
  json["codec"] = CodecText(compressor);
  json["compressor"] = compressor ? CodecJson(*compressor) : ordered_json();
  json["checksum"] = ChunkChecksum(metadata);
  json["filters"] = ordered_json::array();
  for (const CodecConfig& filter : metadata.filters) json["filters"].push_back(CodecJson(filter));
  json["fill_value"] = FillValueJson(metadata.fill_value);
  json["dimension_separator"] = std::string(1, metadata.dimension_separator);
  json["dimension_names"] = summary.attributes.dimension_names.empty()
                                ? ordered_json()
                                : ordered_json(summary.attributes.dimension_names);
  json["logical_bytes"] = summary.logical_bytes;
  json["stored_bytes"] = summary.stored_bytes;
  json["compression_ratio"] =
      summary.compression_ratio ? ordered_json(*summary.compression_ratio) : ordered_json();
  return json;
}

void WriteGroupText(std::ostream& out, const std::string& where,
                    const std::vector<ArraySummary>& arrays,
                    const std::vector<std::string>& groups) {
  out << "Zarr group " << where << '\n';
  out << "  arrays (" << arrays.size() << ")" << (arrays.empty() ? "" : ":") << '\n';
  std::size_t name_width = 0;
  for (const ArraySummary& array : arrays) name_width = std::max(name_width, array.name.size());
  for (std::size_t member = 0; member < arrays.size(); ++member) {
    const ZarrMetadata& metadata = arrays[member].metadata;
    out << "    " << std::left << std::setw(static_cast<int>(name_width) + 2) << arrays[member].name
        << "shape " << ShapeToString(metadata.shape) << "  dtype " << metadata.dtype.name() << " ("
        << Typestr(metadata) << ")  chunks " << ShapeToString(metadata.read_chunks());
    if (const std::optional<Shape> shards = ShardShape(metadata)) {
      out << "  shards " << ShapeToString(*shards);
    }
    if (!arrays[member].attributes.dimension_names.empty()) {
      out << "  dims " << NamesText(arrays[member].attributes.dimension_names);
    }
    out << '\n';
  }
  if (!groups.empty()) {
    out << "  groups (" << groups.size() << "):\n";
    for (const std::string& group : groups) out << "    " << group << '\n';
  }
}

}  // namespace

InfoCommand::InfoCommand(CLI::App& app)
    : command_(app.add_subcommand(
          "info",
          "Show a Zarr array's shape, dtype, chunks, codec and sizes, or a group's arrays")) {
  AddStoreArgument(*command_, store_path_);
  command_->add_flag("--json", json_, "Print one JSON object instead of text");
}

void InfoCommand::Run(std::ostream& out) const {
  const std::shared_ptr<Store> store = OpenStoreArgument(store_path_);
  const bool is_group = IsZarrGroup(*store, "");
  if (!is_group && (store->Contains(".zarray") || store->Contains("zarr.json"))) {
    const ArraySummary summary = SummarizeArray(store, "");
    if (json_) {
      out << ArrayJson(summary).dump(2) << '\n';
    } else {
      WriteArrayText(out, summary);
    }
    return;
  }
  if (!is_group) {
    throw FormatError(store_path_ +
                      " is neither a Zarr array nor a Zarr group (it has no zarr.json, .zarray or "
                      ".zgroup)");
  }
  const ZarrGroupMembers members = ListZarrGroup(*store);
  std::vector<ArraySummary> arrays;
  arrays.reserve(members.arrays.size());
  for (const std::string& member : members.arrays) {
    arrays.push_back(DescribeArray(ZarrArray::Open(store, member), *store, member));
  }
  if (!json_) {
    WriteGroupText(out, store->Describe(), arrays, members.groups);
    return;
  }
  ordered_json json;
  json["kind"] = "group";
  json["path"] = store->Describe();
  json["zarr_format"] = store->Contains("zarr.json") ? 3 : 2;
  json["consolidated"] = HasConsolidatedMetadata(*store);
  json["arrays"] = ordered_json::array();
  for (std::size_t member = 0; member < arrays.size(); ++member) {
    const ZarrMetadata& metadata = arrays[member].metadata;
    ordered_json entry;
    entry["name"] = arrays[member].name;
    entry["shape"] = metadata.shape;
    entry["dtype"] = std::string(metadata.dtype.name());
    entry["typestr"] = Typestr(metadata);
    entry["zarr_format"] = metadata.zarr_format;
    entry["chunks"] = metadata.read_chunks();
    entry["shards"] = metadata.sharded() ? ordered_json(metadata.chunks) : ordered_json();
    entry["dimension_names"] = arrays[member].attributes.dimension_names.empty()
                                   ? ordered_json()
                                   : ordered_json(arrays[member].attributes.dimension_names);
    json["arrays"].push_back(std::move(entry));
  }
  json["groups"] = members.groups;
  out << json.dump(2) << '\n';
}

}  // namespace tessera::cli
