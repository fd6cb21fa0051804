#include "json_fields.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera::zarr_detail {
namespace {

// .zarray nests three levels deep and .zattrs are small user dictionaries. Parsing
// is iterative, but copying and serializing a JSON value recurse once per level, so
// a hostile document of 60,000 nested brackets would overflow the stack; 128 levels
// leave room for any real attributes.
constexpr int kMaxJsonDepth = 128;

// Cuts `text` to at most `limit` bytes without splitting a UTF-8 sequence.
std::string Abbreviate(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; the reason follows.
std::string ReasonOf(const Json::exception& error) {
  std::string reason = error.what();
  if (std::size_t bracket = reason.find("] "); bracket != std::string::npos) {
    reason.erase(0, bracket + 2);
  }
  return reason;
}

}  // namespace

std::string Render(const Json& value, int depth) {
  constexpr std::size_t kMaxElements = 8;
  constexpr std::size_t kMaxStringBytes = 60;
  if (value.is_array() || value.is_object()) {
    const bool is_array = value.is_array();
    if (value.empty()) return is_array ? "[]" : "{}";
    if (depth == 0) return is_array ? "[...]" : "{...}";
    std::string text = is_array ? "[" : "{";
    std::size_t count = 0;
    for (auto it = value.begin(); it != value.end(); ++it, ++count) {
      if (count > 0) text += ", ";
      if (count == kMaxElements) {
        text += "...";
        break;
      }
      if (!is_array) text += Abbreviate(Json(it.key()).dump(), kMaxStringBytes) + ": ";
      text += Render(*it, depth - 1);
    }
    return text + (is_array ? "]" : "}");
  }
  return Abbreviate(value.dump(), kMaxStringBytes);
}

void FailText(std::string_view where, std::string_view key, std::string_view expected,
              std::string_view found) {
  throw FormatError(std::string(where) + ": key \"" + std::string(key) + "\": expected " +
                    std::string(expected) + ", found " + std::string(found));
}

void Fail(std::string_view where, std::string_view key, std::string_view expected,
          const Json& found) {
  FailText(where, key, expected, Render(found));
}

Json ParseDocument(std::string_view text, std::string_view where) {
  Json::parser_callback_t limit_depth = [where](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth) {
      throw FormatError(std::string(where) + ": JSON nested deeper than " +
                        std::to_string(kMaxJsonDepth) + " levels; metadata is never that deep");
    }
    return true;
  };
  Json document;
  try {
    document = Json::parse(text.begin(), text.end(), limit_depth);
  } catch (const Json::parse_error& error) {
    // nlohmann counts the end of input as one more byte; a truncated document reads
    // "at byte N of N".
    const std::size_t byte = std::min<std::size_t>(error.byte, text.size());
    throw FormatError(std::string(where) + ": invalid JSON (error at byte " + std::to_string(byte) +
                      " of " + std::to_string(text.size()) + "): " + ReasonOf(error));
  } catch (const Json::exception& error) {
    throw FormatError(std::string(where) + ": invalid JSON: " + ReasonOf(error));
  }
  if (!document.is_object()) {
    throw FormatError(std::string(where) + ": expected a JSON object at the top level, found " +
                      Render(document));
  }
  return document;
}

const Json* Find(const Json& object, std::string_view key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const Json& Require(const Json& object, std::string_view key, std::string_view where,
                    std::string_view expected, std::string_view shown_key) {
  const Json* value = Find(object, key);
  if (value == nullptr) {
    FailText(where, shown_key.empty() ? key : shown_key, expected, "nothing (the key is missing)");
  }
  return *value;
}

std::optional<Index> AsIndex(const Json& value) {
  if (value.is_number_unsigned()) {
    auto number = value.get<std::uint64_t>();
    if (number > static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) return std::nullopt;
    return static_cast<Index>(number);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return std::nullopt;
}

Json ParseAttributesObject(std::string_view other_json) {
  Json values;
  try {
    values = Json::parse(other_json);
  } catch (const Json::exception& error) {
    throw InvalidArgument("ZarrAttributes::other_json is not valid JSON: " +
                          std::string(error.what()));
  }
  if (!values.is_object()) {
    throw InvalidArgument("ZarrAttributes::other_json must be a JSON object, found " +
                          Render(values));
  }
  return values;
}

Shape ParseExtents(const Json& value, std::string_view key, std::string_view where, Index min,
                   std::string_view expected) {
  if (!value.is_array()) Fail(where, key, expected, value);
  Shape extents;
  extents.reserve(value.size());
  for (const Json& element : value) {
    const std::optional<Index> extent = AsIndex(element);
    if (!extent || *extent < min) Fail(where, key, expected, value);
    extents.push_back(*extent);
  }
  return extents;
}

std::string DumpOrThrow(const Json& document, std::string_view what) {
  try {
    return document.dump(4, ' ', /*ensure_ascii=*/true);
  } catch (const Json::exception& error) {
    throw InvalidArgument("cannot write " + std::string(what) + ": " + error.what());
  }
}

}  // namespace tessera::zarr_detail
