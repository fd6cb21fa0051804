// The codec registry: MakeCodec (id -> implementation), ParseCodecSpec (command-line
// strings -> CodecConfig) and DescribeCodec (CodecConfig -> one line for people).
//
// Defaults for parts a spec leaves out are numcodecs' constructor defaults, so that "zstd"
// means what Zstd() means to zarr-python: blosc lz4 level 5 byte-shuffle, zstd level 1,
// lz4 acceleration 1, zlib and gzip level 1.
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "blosc_codec.hpp"
#include "crc32c_codec.hpp"
#include "lz4_codec.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/codec.hpp"
#include "zlib_codec.hpp"
#include "zstd_codec.hpp"

namespace tessera {
namespace {

constexpr std::string_view kAcceptedIds = "blosc, zstd, lz4, zlib, gzip, crc32c";

constexpr std::string_view kAcceptedSpecs =
    "blosc[:CNAME[:LEVEL[:SHUFFLE]]] (CNAME lz4, lz4hc, zstd, blosclz, zlib; LEVEL 0..9; "
    "SHUFFLE noshuffle, shuffle, bitshuffle), blosc-CNAME[:LEVEL[:SHUFFLE]], zstd[:LEVEL], "
    "lz4[:ACCELERATION], zlib[:LEVEL], gzip[:LEVEL]; e.g. blosc:zstd:3:bitshuffle";

// numcodecs' default levels (Zstd(), Zlib() and GZip() all default to level 1).
constexpr int kZstdDefaultLevel = 1;
constexpr int kZlibDefaultLevel = 1;

std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  while (true) {
    const std::size_t colon = text.find(':');
    fields.push_back(text.substr(0, colon));
    if (colon == std::string_view::npos) return fields;
    text.remove_prefix(colon + 1);
  }
}

[[noreturn]] void ThrowBadSpec(std::string_view spec, const std::string& problem) {
  throw InvalidArgument("codec '" + std::string(spec) + "': " + problem +
                        ". Accepted forms: " + std::string(kAcceptedSpecs));
}

int ParseInt(std::string_view spec, std::string_view field, std::string_view what) {
  int value = 0;
  const char* end = field.data() + field.size();
  const auto [stop, error] = std::from_chars(field.data(), end, value);
  if (error != std::errc() || stop != end) {
    ThrowBadSpec(spec, std::string(what) + " '" + std::string(field) + "' is not an integer");
  }
  return value;
}

std::string Lowercase(std::string_view text) {
  std::string lower(text);
  for (char& character : lower) {
    if (character >= 'A' && character <= 'Z') character = static_cast<char>(character - 'A' + 'a');
  }
  return lower;
}

}  // namespace

std::unique_ptr<Codec> MakeCodec(const CodecConfig& config) {
  if (config.id == "blosc") return std::make_unique<codecs::BloscCodec>(config);
  if (config.id == "zstd") return std::make_unique<codecs::ZstdCodec>(config);
  if (config.id == "lz4") return std::make_unique<codecs::Lz4Codec>(config);
  if (config.id == "zlib" || config.id == "gzip") {
    return std::make_unique<codecs::ZlibCodec>(config);
  }
  if (config.id == "crc32c") return std::make_unique<codecs::Crc32cCodec>(config);
  throw InvalidArgument("unknown codec id '" + config.id + "'; supported ids are " +
                        std::string(kAcceptedIds));
}

CodecConfig ParseCodecSpec(std::string_view text) {
  const std::string spec = Lowercase(text);
  std::vector<std::string_view> fields = SplitFields(spec);
  // "blosc-lz4..." (the CLI's spelling) is "blosc:lz4...".
  constexpr std::string_view kBloscDash = "blosc-";
  if (fields[0].starts_with(kBloscDash)) {
    const std::string_view cname = fields[0].substr(kBloscDash.size());
    fields[0] = "blosc";
    fields.insert(fields.begin() + 1, cname);
  }
  for (std::string_view field : fields) {
    if (field.empty()) ThrowBadSpec(text, "empty field");
  }

  CodecConfig config;
  config.id = std::string(fields[0]);
  std::size_t max_fields = 2;
  if (config.id == "none") {
    ThrowBadSpec(text, "'none' means no compression; it is not a codec");
  } else if (config.id == "blosc") {
    max_fields = 4;
    if (fields.size() > 1) config.cname = std::string(fields[1]);
    if (fields.size() > 2) config.level = ParseInt(text, fields[2], "level");
    if (fields.size() > 3) {
      const std::optional<int> shuffle = codecs::ParseBloscShuffle(fields[3]);
      if (!shuffle) ThrowBadSpec(text, "unknown shuffle '" + std::string(fields[3]) + "'");
      config.shuffle = *shuffle;
    }
  } else if (config.id == "zstd") {
    config.level = fields.size() > 1 ? ParseInt(text, fields[1], "level") : kZstdDefaultLevel;
  } else if (config.id == "zlib" || config.id == "gzip") {
    config.level = fields.size() > 1 ? ParseInt(text, fields[1], "level") : kZlibDefaultLevel;
  } else if (config.id == "lz4") {
    if (fields.size() > 1) config.acceleration = ParseInt(text, fields[1], "acceleration");
  } else {
    ThrowBadSpec(text, "unknown codec '" + config.id + "'");
  }
  if (fields.size() > max_fields) ThrowBadSpec(text, "too many ':' fields");

  try {
    MakeCodec(config);  // Validates cname and ranges; construction allocates nothing large.
  } catch (const InvalidArgument& error) {
    ThrowBadSpec(text, error.what());
  }
  return config;
}

std::int64_t Codec::MaxEncodedSize(std::int64_t raw_size) const {
  if (raw_size < 0) {
    throw InvalidArgument("MaxEncodedSize needs raw_size >= 0, got " + std::to_string(raw_size));
  }
  return MaxEncodedSizeOf(raw_size);
}

std::int64_t Codec::EncodeWorkingBytes(std::int64_t raw_size, std::int64_t itemsize) const {
  if (raw_size < 0) {
    throw InvalidArgument("EncodeWorkingBytes needs raw_size >= 0, got " +
                          std::to_string(raw_size));
  }
  return EncodeWorkingBytesOf(raw_size, itemsize);
}

std::int64_t Codec::DecodeWorkingBytes(std::int64_t raw_size, std::int64_t itemsize) const {
  if (raw_size < 0) {
    throw InvalidArgument("DecodeWorkingBytes needs raw_size >= 0, got " +
                          std::to_string(raw_size));
  }
  return DecodeWorkingBytesOf(raw_size, itemsize);
}

std::int64_t Codec::DecodeUpTo(std::span<const std::byte> encoded,
                               std::span<std::byte> capacity) const {
  const std::optional<std::int64_t> size = DecodedSize(encoded);
  if (!size) {
    throw FormatError(config().id + " frame of " + std::to_string(encoded.size()) +
                      " bytes declares no decoded size: truncated, or not " + config().id +
                      " data");
  }
  if (*size < 0 || static_cast<std::uint64_t>(*size) > capacity.size()) {
    throw FormatError(config().id + " frame claims " + std::to_string(*size) +
                      " decoded bytes, more than the " + std::to_string(capacity.size()) +
                      " bytes it may decode to");
  }
  Decode(encoded, capacity.first(static_cast<std::size_t>(*size)));
  return *size;
}

std::string DescribeCodec(const CodecConfig& config) {
  if (config.id == "blosc") {
    std::string text = "blosc(" + config.cname + ", level " + std::to_string(config.level) + ", " +
                       codecs::BloscShuffleName(config.shuffle);
    if (config.blocksize != 0) text += ", blocksize " + std::to_string(config.blocksize);
    if (config.typesize != 0) text += ", typesize " + std::to_string(config.typesize);
    return text + ")";
  }
  if (config.id == "lz4") return "lz4(acceleration " + std::to_string(config.acceleration) + ")";
  if (config.id == "zstd" && config.checksum) {
    return "zstd(level " + std::to_string(config.level) + ", checksum)";
  }
  if (config.id == "zstd" || config.id == "zlib" || config.id == "gzip") {
    return config.id + "(level " + std::to_string(config.level) + ")";
  }
  if (config.id == "crc32c") return "crc32c";
  return "unknown codec '" + config.id + "'";
}

}  // namespace tessera
