#include "zarr_format_options.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <system_error>

#include "tessera/core/errors.hpp"

namespace tessera::cli {
namespace {

// "dimension 0 (time)", or "dimension 0" without names; for messages.
std::string DimensionName(const std::vector<std::string>& names, std::size_t dim) {
  if (dim < names.size()) return "dimension " + std::to_string(dim) + " (" + names[dim] + ")";
  return "dimension " + std::to_string(dim);
}

}  // namespace

Shape ParseExtentList(const std::string& text, const std::string& option,
                      const std::string& array_label, const Shape& shape,
                      const std::vector<std::string>& dimension_names) {
  std::string example;  // -1 (a whole dimension) first, 10 for the others
  for (std::size_t dim = 0; dim < shape.size(); ++dim) example += dim == 0 ? "-1" : ",10";
  const std::string expected =
      "give one length per dimension (shape " + ShapeToString(shape) +
      "), comma-separated, -1 for a whole dimension, e.g. " + option + " " + example;
  Shape extents;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    Index value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size()) {
      throw InvalidArgument(option + " \"" + text + "\": \"" + std::string(item) +
                            "\" is not a whole number; " + expected);
    }
    extents.push_back(value);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (extents.size() != shape.size()) {
    throw InvalidArgument(option + " \"" + text + "\" gives " + std::to_string(extents.size()) +
                          (extents.size() == 1 ? " value" : " values") + " but " + array_label +
                          " has " +
                          std::to_string(shape.size()) + " dimensions; " + expected);
  }
  for (std::size_t dim = 0; dim < extents.size(); ++dim) {
    if (extents[dim] < 1 && extents[dim] != -1) {
      throw InvalidArgument(option + " \"" + text + "\": " + std::to_string(extents[dim]) +
                            " for " + DimensionName(dimension_names, dim) +
                            " must be >= 1, or -1 for the whole dimension");
    }
  }
  return extents;
}

std::optional<CodecConfig> AsV3Compressor(const std::optional<CodecConfig>& compressor) {
  if (!compressor) return compressor;
  if (compressor->id == "lz4") return ParseCodecSpec("blosc-lz4");
  if (compressor->id == "zlib") {
    CodecConfig gzip = ParseCodecSpec("gzip");
    gzip.level = compressor->level;
    return gzip;
  }
  return compressor;
}

void ZarrFormatOptions::Register(CLI::App& command, const std::string& keeps) {
  command
      .add_option("--zarr-format", zarr_format_,
                  "Zarr format to write: 2 (.zarray) or 3 (zarr.json); default: " + keeps +
                      " (3 with --shards)")
      ->check(CLI::IsMember({2, 3}));
  command.add_option("--shards", shards_,
                     "Write a sharded Zarr v3 array: shard shape, one per dimension, each a "
                     "multiple of the chunks (-1 = the whole dimension), e.g. 1000,1000; tasks "
                     "write whole shards");
  command.add_flag("--checksum", checksum_,
                   "End every chunk in a crc32c checksum (Zarr v3), checked on every read");
  command.add_flag("--consolidated", consolidated_,
                   "Write consolidated metadata into the group the array is written into "
                   "(a group that has some is always kept current)");
}

int ZarrFormatOptions::Apply(ToZarrOptions& options, const std::string& array_label,
                             const Shape& shape, const Shape& chunks, const ZarrMetadata* source,
                             const std::vector<std::string>& dimension_names) const {
  int format = zarr_format_ != 0 ? zarr_format_ : (source != nullptr ? source->zarr_format : 3);
  if (!shards_.empty()) {
    if (zarr_format_ == 2) {
      throw InvalidArgument("--shards writes a sharded Zarr v3 array; drop --zarr-format 2 (or "
                            "--shards for a Zarr v2 target)");
    }
    Shape shards = ParseExtentList(shards_, "--shards", array_label, shape, dimension_names);
    for (std::size_t dim = 0; dim < shards.size(); ++dim) {
      if (shards[dim] != -1) continue;
      const Index chunk = std::max<Index>(chunks[dim], 1);
      shards[dim] = std::max<Index>((shape[dim] + chunk - 1) / chunk, 1) * chunk;
    }
    options.shards = std::move(shards);
    format = 3;
  }
  if (checksum_ && format != 3) {
    throw InvalidArgument("--checksum (crc32c) is Zarr v3's; add --zarr-format 3 or drop it");
  }
  options.zarr_format = format;
  options.consolidated = consolidated_;
  options.checksum = checksum_ || (format == 3 && source != nullptr && ChunkChecksum(*source));
  return format;
}

std::string FormatText(const ToZarrOptions& options, int zarr_format) {
  std::string text = "Zarr v" + std::to_string(zarr_format);
  if (options.shards) text += ", shards " + ShapeToString(*options.shards);
  if (options.checksum) text += ", crc32c";
  return text;
}

}  // namespace tessera::cli
