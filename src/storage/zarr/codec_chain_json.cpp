// v3 codec lists <-> ZarrCodecChain, one branch per codec name.
#include "codec_chain_json.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera::zarr_detail {
namespace {

constexpr std::string_view kSupportedNames =
    "transpose, bytes, sharding_indexed, blosc, zstd, gzip, crc32c";

// The codec's name and configuration (null when it has none).
struct CodecEntry {
  std::string name;
  const Json* configuration = nullptr;
};

CodecEntry EntryOf(const Json& codec, const std::string& key, std::string_view where) {
  if (codec.is_string()) return {codec.get<std::string>(), nullptr};
  const std::string expected = "a codec: {\"name\": ..., \"configuration\": {...}} or its name";
  if (!codec.is_object()) Fail(where, key, expected, codec);
  const Json& name = Require(codec, "name", where, "a codec name string", key + ".name");
  if (!name.is_string()) Fail(where, key + ".name", "a codec name string", name);
  const Json* configuration = Find(codec, "configuration");
  if (configuration != nullptr && !configuration->is_object()) {
    Fail(where, key + ".configuration", "an object", *configuration);
  }
  return {name.get<std::string>(), configuration};
}

const Json* Parameter(const CodecEntry& entry, std::string_view name) {
  return entry.configuration == nullptr ? nullptr : Find(*entry.configuration, name);
}

int IntParameter(const CodecEntry& entry, std::string_view name, int fallback,
                 const std::string& key, std::string_view where) {
  const Json* value = Parameter(entry, name);
  if (value == nullptr) return fallback;
  const std::optional<Index> number = AsIndex(*value);
  if (!number || *number < std::numeric_limits<int>::min() ||
      *number > std::numeric_limits<int>::max()) {
    Fail(where, key + ".configuration." + std::string(name), "an integer within 32 bits", *value);
  }
  return static_cast<int>(*number);
}

ByteOrder ParseEndian(const CodecEntry& entry, DType dtype, const std::string& key,
                      std::string_view where) {
  const Json* endian = Parameter(entry, "endian");
  if (endian == nullptr || endian->is_null()) {
    if (dtype.itemsize() > 1 && dtype != bool_) {
      Fail(where, key + ".configuration.endian",
           "\"little\" or \"big\" (required for multi-byte data types)", Json());
    }
    return ByteOrder::kLittle;
  }
  if (*endian != "little" && *endian != "big") {
    Fail(where, key + ".configuration.endian", "\"little\" or \"big\"", *endian);
  }
  // One-byte elements have no byte order: "big" means what "little" does, and is
  // written as neither (CodecChainToJson), so it reads back equal.
  if (dtype.itemsize() == 1) return ByteOrder::kLittle;
  return *endian == "big" ? ByteOrder::kBig : ByteOrder::kLittle;
}

// A bytes-to-bytes codec as the codec layer's config; MakeCodec validates it.
CodecConfig ParseBytesCodec(const CodecEntry& entry, DType dtype, const std::string& key,
                            std::string_view where) {
  CodecConfig config;
  config.id = entry.name;
  if (entry.name == "blosc") {
    // zarr-python's BloscCodec defaults: zstd, level 5, shuffle, the dtype's size.
    config.cname = "zstd";
    if (const Json* cname = Parameter(entry, "cname")) {
      if (!cname->is_string()) Fail(where, key + ".configuration.cname", "a string", *cname);
      config.cname = cname->get<std::string>();
    }
    config.level = IntParameter(entry, "clevel", 5, key, where);
    config.shuffle = 1;
    if (const Json* shuffle = Parameter(entry, "shuffle")) {
      const std::string expected = "\"noshuffle\", \"shuffle\" or \"bitshuffle\"";
      if (!shuffle->is_string()) Fail(where, key + ".configuration.shuffle", expected, *shuffle);
      const std::string& text = shuffle->get_ref<const std::string&>();
      if (text == "noshuffle") {
        config.shuffle = 0;
      } else if (text == "shuffle") {
        config.shuffle = 1;
      } else if (text == "bitshuffle") {
        config.shuffle = 2;
      } else {
        Fail(where, key + ".configuration.shuffle", expected, *shuffle);
      }
    }
    config.typesize = IntParameter(entry, "typesize", static_cast<int>(dtype.itemsize()), key,
                                   where);
    if (config.typesize < 1) {
      Fail(where, key + ".configuration.typesize", "an integer >= 1",
           *Parameter(entry, "typesize"));
    }
    config.blocksize = IntParameter(entry, "blocksize", 0, key, where);
  } else if (entry.name == "zstd") {
    config.level = IntParameter(entry, "level", 0, key, where);
    if (const Json* checksum = Parameter(entry, "checksum")) {
      if (!checksum->is_boolean()) {
        Fail(where, key + ".configuration.checksum", "true or false", *checksum);
      }
      config.checksum = checksum->get<bool>();
    }
  } else if (entry.name == "gzip") {
    config.level = IntParameter(entry, "level", 6, key, where);
  } else if (entry.name != "crc32c") {
    Fail(where, key + ".name", "a supported codec (" + std::string(kSupportedNames) + ")",
         Json(entry.name));
  }
  try {
    MakeCodec(config);
  } catch (const InvalidArgument& error) {
    FailText(where, key, "parameters the " + entry.name + " codec accepts",
             std::string(error.what()));
  }
  return config;
}

std::vector<Index> ParseTranspose(const CodecEntry& entry, std::size_t ndim, const std::string& key,
                                  std::string_view where) {
  const std::string expected =
      "a permutation of 0.." + std::to_string(static_cast<Index>(ndim) - 1) + " as a list";
  const Json* order = Parameter(entry, "order");
  if (order == nullptr || !order->is_array() || order->size() != ndim) {
    Fail(where, key + ".configuration.order", expected, order == nullptr ? Json() : *order);
  }
  std::vector<Index> permutation;
  std::vector<bool> seen(ndim, false);
  for (const Json& element : *order) {
    const std::optional<Index> dim = AsIndex(element);
    if (!dim || *dim < 0 || *dim >= static_cast<Index>(ndim) ||
        seen[static_cast<std::size_t>(*dim)]) {
      Fail(where, key + ".configuration.order", expected, *order);
    }
    seen[static_cast<std::size_t>(*dim)] = true;
    permutation.push_back(*dim);
  }
  return permutation;
}

// Composes `next` after `current` (both permutations of the same rank; empty = identity).
std::vector<Index> Compose(const std::vector<Index>& current, const std::vector<Index>& next) {
  if (current.empty()) return next;
  std::vector<Index> composed(next.size());
  for (std::size_t dim = 0; dim < next.size(); ++dim) {
    composed[dim] = current[static_cast<std::size_t>(next[dim])];
  }
  return composed;
}

bool IsIdentity(const std::vector<Index>& permutation) {
  for (std::size_t dim = 0; dim < permutation.size(); ++dim) {
    if (permutation[dim] != static_cast<Index>(dim)) return false;
  }
  return true;
}

std::shared_ptr<const ZarrSharding> ParseSharding(const CodecEntry& entry, DType dtype,
                                                  std::span<const Index> shard_shape,
                                                  const std::string& key, std::string_view where,
                                                  int depth) {
  if (depth >= kMaxShardingDepth) {
    FailText(where, key, "at most " + std::to_string(kMaxShardingDepth) + " nested shardings",
             "a deeper nesting");
  }
  const std::string configuration_key = key + ".configuration";
  if (entry.configuration == nullptr) {
    Fail(where, configuration_key, "an object with chunk_shape and codecs", Json());
  }
  auto sharding = std::make_shared<ZarrSharding>();
  const std::string chunk_key = configuration_key + ".chunk_shape";
  const std::string chunk_expected =
      "a list of " + std::to_string(shard_shape.size()) +
      " positive integers dividing the shard shape " +
      ShapeToString(Shape(shard_shape.begin(), shard_shape.end()));
  const Json& chunk_shape = Require(*entry.configuration, "chunk_shape", where, chunk_expected,
                                    chunk_key);
  if (!chunk_shape.is_array() || chunk_shape.size() != shard_shape.size()) {
    Fail(where, chunk_key, chunk_expected, chunk_shape);
  }
  for (std::size_t dim = 0; dim < shard_shape.size(); ++dim) {
    const std::optional<Index> extent = AsIndex(chunk_shape[dim]);
    if (!extent || *extent < 1 || shard_shape[dim] % *extent != 0) {
      Fail(where, chunk_key, chunk_expected, chunk_shape);
    }
    sharding->chunk_shape.push_back(*extent);
  }
  const Json& codecs = Require(*entry.configuration, "codecs", where, "a list of codecs",
                               configuration_key + ".codecs");
  sharding->codecs = ParseCodecChain(codecs, configuration_key + ".codecs", where, dtype,
                                     sharding->chunk_shape, depth + 1);
  const std::string index_key = configuration_key + ".index_codecs";
  if (const Json* index = Find(*entry.configuration, "index_codecs")) {
    // The index is an array of uint64 (offset, nbytes) pairs.
    const Shape index_shape(shard_shape.size() + 1, 1);
    sharding->index_codecs =
        ParseCodecChain(*index, index_key, where, uint64, index_shape, kMaxShardingDepth);
  } else {
    sharding->index_codecs.bytes_codecs.push_back(CodecConfig{.id = "crc32c"});
  }
  const ZarrCodecChain& index = sharding->index_codecs;
  // The index layout (ShardIndexLayout) has room for one checksum: a second crc32c
  // would make the index 4 bytes longer than Tessera reads.
  const bool index_ok = index.sharding == nullptr && index.transpose.empty() &&
                        index.bytes_codecs.size() <= 1 &&
                        std::ranges::all_of(index.bytes_codecs, [](const CodecConfig& codec) {
                          return codec.id == "crc32c";
                        });
  if (!index_ok) {
    FailText(where, index_key, "bytes, optionally followed by crc32c",
             DescribeCodecChain(index));
  }
  if (const Json* location = Find(*entry.configuration, "index_location")) {
    if (*location == "end") {
      sharding->index_at_end = true;
    } else if (*location == "start") {
      sharding->index_at_end = false;
    } else {
      Fail(where, configuration_key + ".index_location", "\"start\" or \"end\"", *location);
    }
  }
  return sharding;
}

Json BytesCodecJson(const CodecConfig& config) {
  Json codec = Json::object();
  codec["name"] = config.id;
  Json configuration = Json::object();
  if (config.id == "blosc") {
    configuration["cname"] = config.cname;
    configuration["clevel"] = config.level;
    configuration["shuffle"] = config.shuffle == 0   ? "noshuffle"
                               : config.shuffle == 2 ? "bitshuffle"
                                                     : "shuffle";
    configuration["typesize"] = config.typesize;
    configuration["blocksize"] = config.blocksize;
  } else if (config.id == "zstd") {
    configuration["level"] = config.level;
    configuration["checksum"] = config.checksum;
  } else if (config.id == "gzip") {
    configuration["level"] = config.level;
  } else if (config.id != "crc32c") {
    throw InvalidArgument("the " + config.id +
                          " codec has no Zarr v3 form in Tessera; v3 arrays take blosc, zstd, "
                          "gzip and crc32c");
  }
  if (config.id != "crc32c") codec["configuration"] = std::move(configuration);
  return codec;
}

}  // namespace

DType StoredElementType(const ZarrMetadata& metadata) {
  return metadata.float16_storage ? uint16 : metadata.dtype;
}

ZarrCodecChain ParseCodecChain(const Json& codecs, std::string_view key, std::string_view where,
                               DType dtype, std::span<const Index> chunk_shape, int depth) {
  const std::string list_key(key);
  const std::string expected = "a list of codecs with one array-to-bytes codec (bytes or "
                               "sharding_indexed)";
  if (!codecs.is_array() || codecs.empty()) Fail(where, list_key, expected, codecs);
  ZarrCodecChain chain;
  bool have_array_to_bytes = false;
  for (std::size_t index = 0; index < codecs.size(); ++index) {
    const std::string codec_key = list_key + "[" + std::to_string(index) + "]";
    const CodecEntry entry = EntryOf(codecs[index], codec_key, where);
    const bool array_to_bytes = entry.name == "bytes" || entry.name == "sharding_indexed";
    if (entry.name == "transpose") {
      if (have_array_to_bytes) {
        FailText(where, codec_key, "array-to-array codecs (transpose) before the bytes codec",
                 "transpose after it");
      }
      chain.transpose = Compose(chain.transpose,
                                ParseTranspose(entry, chunk_shape.size(), codec_key, where));
    } else if (array_to_bytes) {
      if (have_array_to_bytes) {
        FailText(where, codec_key, "exactly one array-to-bytes codec", "a second one");
      }
      have_array_to_bytes = true;
      if (entry.name == "bytes") {
        chain.endian = ParseEndian(entry, dtype, codec_key, where);
      } else {
        if (!chain.transpose.empty() && !IsIdentity(chain.transpose)) {
          FailText(where, codec_key,
                   "sharding_indexed without a transpose before it (Tessera shards arrays "
                   "in their own order; put the transpose in the inner codecs)",
                   "a transpose first");
        }
        chain.sharding = ParseSharding(entry, dtype, chunk_shape, codec_key, where, depth);
      }
    } else {
      if (!have_array_to_bytes) {
        FailText(where, codec_key, "bytes-to-bytes codecs after the bytes codec",
                 entry.name + " before it");
      }
      chain.bytes_codecs.push_back(ParseBytesCodec(entry, dtype, codec_key, where));
    }
  }
  if (!have_array_to_bytes) Fail(where, list_key, expected, codecs);
  if (chain.sharding != nullptr && !chain.bytes_codecs.empty()) {
    FailText(where, list_key,
             "no bytes-to-bytes codec after sharding_indexed (a shard read in parts cannot be "
             "decoded as a whole; put compression and checksums in the inner codecs)",
             DescribeCodec(chain.bytes_codecs.front()) + " after it");
  }
  if (IsIdentity(chain.transpose)) chain.transpose.clear();
  return chain;
}

void ValidateCodecChain(const ZarrCodecChain& chain, DType dtype,
                        std::span<const Index> chunk_shape, std::string_view key, int depth) {
  // The JSON round trip runs every rule ParseCodecChain applies.
  try {
    ParseCodecChain(CodecChainToJson(chain, dtype), key, "codecs", dtype, chunk_shape, depth);
  } catch (const FormatError& error) {
    throw InvalidArgument(error.what());
  }
}

Json CodecChainToJson(const ZarrCodecChain& chain, DType dtype) {
  Json codecs = Json::array();
  if (!chain.transpose.empty()) {
    codecs.push_back({{"name", "transpose"}, {"configuration", {{"order", chain.transpose}}}});
  }
  if (chain.sharding != nullptr) {
    const ZarrSharding& sharding = *chain.sharding;
    Json configuration = Json::object();
    configuration["chunk_shape"] = sharding.chunk_shape;
    configuration["codecs"] = CodecChainToJson(sharding.codecs, dtype);
    configuration["index_codecs"] = CodecChainToJson(sharding.index_codecs, uint64);
    configuration["index_location"] = sharding.index_at_end ? "end" : "start";
    codecs.push_back({{"name", "sharding_indexed"}, {"configuration", std::move(configuration)}});
  } else {
    Json bytes = {{"name", "bytes"}};
    if (dtype.itemsize() > 1) {
      bytes["configuration"] = {{"endian", chain.endian == ByteOrder::kBig ? "big" : "little"}};
    }
    codecs.push_back(std::move(bytes));
  }
  for (const CodecConfig& config : chain.bytes_codecs) codecs.push_back(BytesCodecJson(config));
  return codecs;
}

std::string DescribeCodecChain(const ZarrCodecChain& chain) {
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "" : " -> ") + part; };
  if (!chain.transpose.empty()) add("transpose " + ShapeToString(chain.transpose));
  if (chain.sharding != nullptr) {
    const ZarrSharding& sharding = *chain.sharding;
    add("sharding_indexed (inner chunks " + ShapeToString(sharding.chunk_shape) + ", index at " +
        (sharding.index_at_end ? "end" : "start") + ": " +
        DescribeCodecChain(sharding.index_codecs) + ") of [" +
        DescribeCodecChain(sharding.codecs) + "]");
  } else {
    add(std::string("bytes (") + (chain.endian == ByteOrder::kBig ? "big" : "little") + ")");
  }
  for (const CodecConfig& config : chain.bytes_codecs) add(DescribeCodec(config));
  return text;
}

}  // namespace tessera::zarr_detail
