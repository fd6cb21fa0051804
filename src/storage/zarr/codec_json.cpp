// numcodecs JSON <-> CodecConfig, one table row per codec id.
#include "codec_json.hpp"

#include <array>
#include <limits>
#include <span>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera::zarr_detail {
namespace {

// One integer parameter: its JSON key, the CodecConfig field it fills, and numcodecs'
// constructor default, used when a document leaves the key out.
struct IntParameter {
  std::string_view json_key;
  int CodecConfig::*field;
  int numcodecs_default;
};

// How one codec id is spelled in JSON.
struct CodecForm {
  std::string_view id;
  bool has_cname;  // blosc's "cname" string
  std::span<const IntParameter> parameters;
};

// numcodecs.Blosc(cname="lz4", clevel=5, shuffle=SHUFFLE, blocksize=AUTOBLOCKS).
constexpr std::string_view kDefaultBloscCname = "lz4";
constexpr std::array<IntParameter, 3> kBloscParameters = {{
    {"clevel", &CodecConfig::level, 5},
    {"shuffle", &CodecConfig::shuffle, 1},
    {"blocksize", &CodecConfig::blocksize, 0},
}};
// Zstd(level=1), Zlib(level=1) and GZip(level=1).
constexpr std::array<IntParameter, 1> kLevelParameters = {{{"level", &CodecConfig::level, 1}}};
// LZ4(acceleration=1).
constexpr std::array<IntParameter, 1> kLz4Parameters = {
    {{"acceleration", &CodecConfig::acceleration, 1}}};

constexpr std::array<CodecForm, 5> kCodecForms = {{
    {"blosc", true, kBloscParameters},
    {"zstd", false, kLevelParameters},
    {"lz4", false, kLz4Parameters},
    {"zlib", false, kLevelParameters},
    {"gzip", false, kLevelParameters},
}};

const CodecForm* FormOf(std::string_view id) {
  for (const CodecForm& form : kCodecForms) {
    if (form.id == id) return &form;
  }
  return nullptr;
}

std::string FormIds() {
  std::string ids;
  for (const CodecForm& form : kCodecForms) ids += (ids.empty() ? "" : ", ") + std::string(form.id);
  return ids;
}

// The JSON integer `value` as an int; FormatError naming `key` otherwise.
int IntOf(const Json& value, const std::string& key, std::string_view where) {
  const std::optional<Index> number = AsIndex(value);
  if (!number) Fail(where, key, "an integer", value);
  if (*number < std::numeric_limits<int>::min() || *number > std::numeric_limits<int>::max()) {
    Fail(where, key, "an integer within 32 bits", value);
  }
  return static_cast<int>(*number);
}

}  // namespace

CodecConfig ParseCodecJson(const Json& value, std::string_view key, std::string_view where) {
  if (!value.is_object()) {
    Fail(where, key,
         "a codec object such as {\"id\": \"zstd\", \"level\": 1} (ids: " + FormIds() + ")", value);
  }
  const std::string id_key = std::string(key) + ".id";
  const std::string id_expected = "a codec id string (" + FormIds() + ")";
  const Json& id = Require(value, "id", where, id_expected, id_key);
  if (!id.is_string()) Fail(where, id_key, id_expected, id);

  CodecConfig config;
  config.id = id.get<std::string>();
  const CodecForm* form = FormOf(config.id);
  if (form == nullptr) {
    // The codec layer words the refusal (and lists its ids); an id it accepts but this
    // table lacks has no JSON spelling here yet.
    std::string reason = "a codec without a .zarray form in Tessera";
    try {
      MakeCodec(config);
    } catch (const InvalidArgument& error) {
      reason = error.what();
    }
    Fail(where, id_key, "a supported codec id (" + reason + ")", id);
  }
  if (form->has_cname) {
    config.cname = kDefaultBloscCname;
    if (const Json* cname = Find(value, "cname"); cname != nullptr) {
      if (!cname->is_string()) Fail(where, std::string(key) + ".cname", "a string", *cname);
      config.cname = cname->get<std::string>();
    }
  }
  for (const IntParameter& parameter : form->parameters) {
    const Json* field = Find(value, parameter.json_key);
    config.*parameter.field =
        field == nullptr
            ? parameter.numcodecs_default
            : IntOf(*field, std::string(key) + "." + std::string(parameter.json_key), where);
  }
  try {
    MakeCodec(config);  // the codec layer's rules; constructing a codec allocates nothing large
  } catch (const InvalidArgument& error) {
    Fail(where, key, "parameters the " + config.id + " codec accepts (" + error.what() + ")",
         value);
  }
  return config;
}

Json CodecToJson(const CodecConfig& config) {
  const CodecForm* form = FormOf(config.id);
  if (form == nullptr) {
    throw InvalidArgument("cannot write codec id \"" + config.id +
                          "\" to .zarray; supported: " + FormIds());
  }
  Json codec = Json::object();
  codec["id"] = config.id;
  if (form->has_cname) codec["cname"] = config.cname;
  for (const IntParameter& parameter : form->parameters) {
    codec[std::string(parameter.json_key)] = config.*parameter.field;
  }
  return codec;
}

}  // namespace tessera::zarr_detail
