#include "tessera/storage/zarr_metadata.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

using Json = nlohmann::json;

// A decoded chunk must fit in one Buffer in memory. No machine holds a 1 TiB chunk,
// and zarr-python's own guidance is chunks of a few MB to a few hundred MB, so a
// larger chunk can only come from a corrupt or hostile .zarray. Rejecting it here
// keeps a reader from attempting absurd allocations and keeps every later sum of a
// few chunk-sized buffers (read copies, encode bounds) far from Index overflow.
constexpr Index kMaxChunkBytes = Index{1} << 40;

// .zarray nests three levels deep and .zattrs are small user dictionaries. Parsing
// is iterative, but copying and serializing a JSON value recurse once per level, so
// a hostile document of 60,000 nested brackets would overflow the stack; 128 levels
// leave room for any real attributes.
constexpr int kMaxJsonDepth = 128;

// Codec parameter ranges accepted by the codec layer (codecs/*.cpp), repeated here so
// that a bad value is reported as a FormatError of the document, before any chunk.
constexpr int kBloscMaxLevel = 9;
constexpr int kBloscAutoShuffle = -1;  // numcodecs.Blosc.AUTOSHUFFLE
constexpr int kBloscBitShuffle = 2;
constexpr int kZstdMinLevel = -(1 << 17);   // ZSTD_minCLevel(): -ZSTD_TARGETLENGTH_MAX
constexpr int kZstdMaxLevel = 22;           // ZSTD_maxCLevel()
constexpr int kLz4MaxAcceleration = 65537;  // LZ4_ACCELERATION_MAX in lz4.c
constexpr int kZlibMinLevel = -1;           // Z_DEFAULT_COMPRESSION
constexpr int kZlibMaxLevel = 9;            // Z_BEST_COMPRESSION
// numcodecs' constructor defaults, used when a codec object leaves a key out.
constexpr int kDefaultBloscLevel = 5;
constexpr int kDefaultLevel = 1;  // Zstd(), Zlib() and GZip()

constexpr std::string_view kSupportedCodecs = "blosc, zstd, lz4, zlib, gzip";
constexpr std::array<std::string_view, 5> kBloscCnames = {"lz4", "lz4hc", "zstd", "blosclz",
                                                          "zlib"};
constexpr std::string_view kSupportedTypestrs =
    "|b1, |i1, |u1, <i2, <i4, <i8, <u2, <u4, <u8, <f4, <f8 and the big-endian >i2, >i4, >i8, "
    ">u2, >u4, >u8, >f4, >f8";

// ---- describing found values -------------------------------------------------------

// Cuts `text` to at most `limit` bytes without splitting a UTF-8 sequence.
std::string Abbreviate(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

// A short, bounded rendering of a JSON value for messages: at most a few levels and
// elements, so a message never repeats a whole hostile document.
std::string Render(const Json& value, int depth = 2) {
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

// Throws `<where>: key "<key>": <expected>, found <found>`.
[[noreturn]] void FailText(std::string_view where, std::string_view key, std::string_view expected,
                           std::string_view found) {
  throw FormatError(std::string(where) + ": key \"" + std::string(key) + "\": expected " +
                    std::string(expected) + ", found " + std::string(found));
}

[[noreturn]] void Fail(std::string_view where, std::string_view key, std::string_view expected,
                       const Json& found) {
  FailText(where, key, expected, Render(found));
}

// ---- JSON documents ----------------------------------------------------------------

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
    std::string reason = error.what();
    if (std::size_t bracket = reason.find("] "); bracket != std::string::npos) {
      reason.erase(0, bracket + 2);
    }
    // nlohmann counts the end of input as one more byte; a truncated document reads
    // "at byte N of N".
    const std::size_t byte = std::min<std::size_t>(error.byte, text.size());
    throw FormatError(std::string(where) + ": invalid JSON (error at byte " + std::to_string(byte) +
                      " of " + std::to_string(text.size()) + "): " + reason);
  } catch (const Json::exception& error) {
    std::string reason = error.what();
    if (std::size_t bracket = reason.find("] "); bracket != std::string::npos) {
      reason.erase(0, bracket + 2);
    }
    throw FormatError(std::string(where) + ": invalid JSON: " + reason);
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

// object[key]; a FormatError naming `shown_key` (default: `key`) when it is missing.
const Json& Require(const Json& object, std::string_view key, std::string_view where,
                    std::string_view expected, std::string_view shown_key = {}) {
  const Json* value = Find(object, key);
  if (value == nullptr) {
    FailText(where, shown_key.empty() ? key : shown_key, expected, "nothing (the key is missing)");
  }
  return *value;
}

// The value of a JSON integer that fits Index; nullopt for anything else.
std::optional<Index> AsIndex(const Json& value) {
  if (value.is_number_unsigned()) {
    auto number = value.get<std::uint64_t>();
    if (number > static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) return std::nullopt;
    return static_cast<Index>(number);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return std::nullopt;
}

Shape ParseExtents(const Json& value, std::string_view key, std::string_view where, Index min,
                   std::string_view expected) {
  if (!value.is_array()) Fail(where, key, expected, value);
  Shape extents;
  extents.reserve(value.size());
  for (const Json& element : value) {
    std::optional<Index> extent = AsIndex(element);
    if (!extent || *extent < min) Fail(where, key, expected, value);
    extents.push_back(*extent);
  }
  return extents;
}

std::string ShapeText(const Shape& shape) {
  std::string text = "[";
  for (std::size_t dim = 0; dim < shape.size(); ++dim) {
    if (dim > 0) text += ", ";
    text += std::to_string(shape[dim]);
  }
  return text + "]";
}

// ---- codecs ------------------------------------------------------------------------

int IntField(const Json& codec, std::string_view name, int fallback, int min, int max,
             const std::string& key, std::string_view where) {
  const Json* value = Find(codec, name);
  if (value == nullptr) return fallback;
  std::optional<Index> number = AsIndex(*value);
  if (!number || *number < min || *number > max) {
    Fail(where, key + "." + std::string(name),
         "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]", *value);
  }
  return static_cast<int>(*number);
}

CodecConfig ParseCodec(const Json& value, const std::string& key, std::string_view where) {
  if (!value.is_object()) {
    Fail(where, key,
         "a codec object such as {\"id\": \"zstd\", \"level\": 1} (ids: " +
             std::string(kSupportedCodecs) + ")",
         value);
  }
  const std::string id_key = key + ".id";
  const std::string id_expected = "a codec id string (" + std::string(kSupportedCodecs) + ")";
  const Json& id = Require(value, "id", where, id_expected, id_key);
  if (!id.is_string()) Fail(where, id_key, id_expected, id);
  // Keys a codec object has beyond those read below are ignored, as newer numcodecs
  // versions add some (Zstd's "checksum") that change nothing for decoding.
  CodecConfig config;
  config.id = id.get<std::string>();
  if (config.id == "blosc") {
    config.cname = "lz4";
    if (const Json* cname = Find(value, "cname"); cname != nullptr) {
      bool known = false;
      if (cname->is_string()) {
        for (std::string_view name : kBloscCnames)
          known = known || name == cname->get<std::string>();
      }
      if (!known) Fail(where, key + ".cname", "one of lz4, lz4hc, zstd, blosclz, zlib", *cname);
      config.cname = cname->get<std::string>();
    }
    config.level = IntField(value, "clevel", kDefaultBloscLevel, 0, kBloscMaxLevel, key, where);
    config.shuffle = IntField(value, "shuffle", 1, kBloscAutoShuffle, kBloscBitShuffle, key, where);
    config.blocksize =
        IntField(value, "blocksize", 0, 0, std::numeric_limits<int>::max(), key, where);
  } else if (config.id == "zstd") {
    config.level =
        IntField(value, "level", kDefaultLevel, kZstdMinLevel, kZstdMaxLevel, key, where);
  } else if (config.id == "lz4") {
    config.acceleration = IntField(value, "acceleration", 1, 1, kLz4MaxAcceleration, key, where);
  } else if (config.id == "zlib" || config.id == "gzip") {
    config.level =
        IntField(value, "level", kDefaultLevel, kZlibMinLevel, kZlibMaxLevel, key, where);
  } else {
    Fail(where, id_key, "a supported codec id (" + std::string(kSupportedCodecs) + ")", id);
  }
  return config;
}

Json CodecToJson(const CodecConfig& config) {
  Json codec = Json::object();
  codec["id"] = config.id;
  if (config.id == "blosc") {
    codec["cname"] = config.cname;
    codec["clevel"] = config.level;
    codec["shuffle"] = config.shuffle;
    codec["blocksize"] = config.blocksize;
  } else if (config.id == "zstd" || config.id == "zlib" || config.id == "gzip") {
    codec["level"] = config.level;
  } else if (config.id == "lz4") {
    codec["acceleration"] = config.acceleration;
  } else {
    throw InvalidArgument("cannot write codec id \"" + config.id +
                          "\" to .zarray; supported: " + std::string(kSupportedCodecs));
  }
  return codec;
}

// ---- fill values -------------------------------------------------------------------

// Integer bounds of an integer dtype.
struct IntegerRange {
  std::int64_t min;
  std::uint64_t max;
};

IntegerRange RangeOf(DType dtype) {
  return VisitDType(dtype, [](auto tag) -> IntegerRange {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return {static_cast<std::int64_t>(std::numeric_limits<T>::min()),
              static_cast<std::uint64_t>(std::numeric_limits<T>::max())};
    } else {
      return {0, 1};
    }
  });
}

// An integer's canonical FillValue: int64 when it fits, uint64 above INT64_MAX.
FillValue CanonicalInteger(bool negative, std::uint64_t magnitude_or_value, std::int64_t value) {
  if (negative) return value;
  if (magnitude_or_value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(magnitude_or_value);
  }
  return magnitude_or_value;
}

// A float that holds an integer value, as int64 / uint64; nullopt when fractional,
// not finite or beyond 64 bits.
std::optional<FillValue> IntegerOfFloat(double number) {
  if (!std::isfinite(number) || std::trunc(number) != number) return std::nullopt;
  constexpr double kTwoTo63 = 9223372036854775808.0;
  constexpr double kTwoTo64 = 18446744073709551616.0;
  if (number >= -kTwoTo63 && number < kTwoTo63) {
    auto value = static_cast<std::int64_t>(number);
    return CanonicalInteger(value < 0, static_cast<std::uint64_t>(value), value);
  }
  if (number >= 0 && number < kTwoTo64) return static_cast<std::uint64_t>(number);
  return std::nullopt;
}

bool InRange(const FillValue& integer, const IntegerRange& range) {
  if (const auto* value = std::get_if<std::int64_t>(&integer)) {
    return *value >= range.min && (*value < 0 || static_cast<std::uint64_t>(*value) <= range.max);
  }
  return std::get<std::uint64_t>(integer) <= range.max;
}

FillValue ParseFillValue(const Json& value, DType dtype, std::string_view typestr,
                         std::string_view where) {
  constexpr std::string_view kKey = "fill_value";
  if (value.is_null()) return std::monostate{};
  const std::string dtype_text =
      "dtype " + std::string(dtype.name()) + " (\"" + std::string(typestr) + "\")";
  switch (dtype.kind()) {
    case DTypeKind::kBool: {
      if (value.is_boolean()) return value.get<bool>();
      std::optional<Index> number = AsIndex(value);
      if (number && (*number == 0 || *number == 1)) return *number == 1;
      Fail(where, kKey, "true, false or null for " + dtype_text, value);
    }
    case DTypeKind::kSignedInt:
    case DTypeKind::kUnsignedInt: {
      const IntegerRange range = RangeOf(dtype);
      const std::string expected = "an integer in [" + std::to_string(range.min) + ", " +
                                   std::to_string(range.max) + "] or null for " + dtype_text;
      std::optional<FillValue> integer;
      if (value.is_number_unsigned()) {
        auto number = value.get<std::uint64_t>();
        integer = CanonicalInteger(false, number, 0);
      } else if (value.is_number_integer()) {
        auto number = value.get<std::int64_t>();
        integer = CanonicalInteger(number < 0, static_cast<std::uint64_t>(number), number);
      } else if (value.is_number_float()) {
        // An integral float ("3.0") is accepted, as numpy accepts it, but only where
        // floats are exact integers (|x| <= 2^53): beyond, the JSON parser has rounded
        // the written number (an out-of-range "-9223372036854775809" reads as -2^63).
        constexpr double kTwoTo53 = 9007199254740992.0;
        if (std::fabs(value.get<double>()) <= kTwoTo53) {
          integer = IntegerOfFloat(value.get<double>());
        }
      }
      if (!integer || !InRange(*integer, range)) Fail(where, kKey, expected, value);
      return *integer;
    }
    case DTypeKind::kFloat:
      break;
  }
  const std::string expected =
      "a number, \"NaN\", \"Infinity\", \"-Infinity\" or null for " + dtype_text;
  double number = 0;
  if (value.is_number()) {
    number = value.get<double>();
  } else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "NaN") {
      number = std::numeric_limits<double>::quiet_NaN();
    } else if (text == "Infinity") {
      number = std::numeric_limits<double>::infinity();
    } else if (text == "-Infinity") {
      number = -std::numeric_limits<double>::infinity();
    } else {
      Fail(where, kKey, expected, value);
    }
  } else {
    Fail(where, kKey, expected, value);
  }
  if (dtype == float32 && std::isfinite(number) &&
      std::fabs(number) > static_cast<double>(std::numeric_limits<float>::max())) {
    Fail(where, kKey,
         "a number within float32's range (|x| <= 3.4028234663852886e+38), \"NaN\", "
         "\"Infinity\", \"-Infinity\" or null for " +
             dtype_text,
         value);
  }
  return number;
}

Json FillValueToJson(const FillValue& fill, DType dtype) {
  return std::visit(
      [dtype](const auto& value) -> Json {
        using V = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<V, double>) {
          if (std::isnan(value)) return "NaN";
          if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
          // An integral float for an integer dtype is written as zarr-python would.
          if (dtype.kind() == DTypeKind::kSignedInt || dtype.kind() == DTypeKind::kUnsignedInt) {
            if (std::optional<FillValue> integer = IntegerOfFloat(value)) {
              return FillValueToJson(*integer, dtype);
            }
          }
          return value;
        } else if constexpr (std::is_same_v<V, bool>) {
          if (dtype.kind() == DTypeKind::kFloat) return value ? 1.0 : 0.0;
          if (dtype.kind() != DTypeKind::kBool) return value ? 1 : 0;
          return value;
        } else {
          if (dtype.kind() == DTypeKind::kFloat) return static_cast<double>(value);
          if (dtype.kind() == DTypeKind::kBool) return value != 0;
          return value;
        }
      },
      fill);
}

// `fill` converted to T; throws InvalidArgument when T cannot hold it.
template <class T>
T FillAs(const FillValue& fill, DType dtype) {
  auto unrepresentable = [&](const std::string& value) -> InvalidArgument {
    return InvalidArgument("fill value " + value + " cannot be stored in dtype " +
                           std::string(dtype.name()));
  };
  if (std::holds_alternative<std::monostate>(fill)) return T{};
  if (const bool* flag = std::get_if<bool>(&fill)) return static_cast<T>(*flag);
  if constexpr (std::is_same_v<T, bool>) {
    if (const double* number = std::get_if<double>(&fill)) return *number != 0;
    if (const auto* value = std::get_if<std::int64_t>(&fill)) return *value != 0;
    return std::get<std::uint64_t>(fill) != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (const double* number = std::get_if<double>(&fill)) {
      if (std::isfinite(*number) &&
          std::fabs(*number) > static_cast<double>(std::numeric_limits<T>::max())) {
        throw unrepresentable(std::to_string(*number));
      }
      return static_cast<T>(*number);
    }
    if (const auto* value = std::get_if<std::int64_t>(&fill)) return static_cast<T>(*value);
    return static_cast<T>(std::get<std::uint64_t>(fill));
  } else {
    std::optional<FillValue> integer;
    if (const double* number = std::get_if<double>(&fill)) {
      integer = IntegerOfFloat(*number);
      if (!integer) throw unrepresentable(std::to_string(*number));
    } else {
      integer = fill;
    }
    if (!InRange(*integer, RangeOf(dtype))) {
      throw unrepresentable(std::visit(
          [](const auto& value) -> std::string {
            if constexpr (std::is_arithmetic_v<std::decay_t<decltype(value)>>) {
              return std::to_string(value);
            } else {
              return "null";
            }
          },
          *integer));
    }
    if (const auto* value = std::get_if<std::int64_t>(&*integer)) return static_cast<T>(*value);
    return static_cast<T>(std::get<std::uint64_t>(*integer));
  }
}

std::string DumpOrThrow(const Json& document, std::string_view what) {
  try {
    return document.dump(4, ' ', /*ensure_ascii=*/true);
  } catch (const Json::exception& error) {
    throw InvalidArgument("cannot write " + std::string(what) + ": " + error.what());
  }
}

}  // namespace

// ---- type strings ------------------------------------------------------------------

std::string ZarrTypestr(DType dtype, ByteOrder byte_order) {
  char order = byte_order == ByteOrder::kBig ? '>' : '<';
  if (dtype.itemsize() == 1) order = '|';
  char kind = 'f';
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      kind = 'b';
      break;
    case DTypeKind::kSignedInt:
      kind = 'i';
      break;
    case DTypeKind::kUnsignedInt:
      kind = 'u';
      break;
    case DTypeKind::kFloat:
      break;
  }
  return std::string{order, kind, static_cast<char>('0' + dtype.itemsize())};
}

std::pair<DType, ByteOrder> ParseZarrTypestr(std::string_view typestr) {
  auto unsupported = [&]() -> InvalidArgument {
    return InvalidArgument("unsupported Zarr dtype \"" + std::string(typestr) +
                           "\"; supported: " + std::string(kSupportedTypestrs));
  };
  if (typestr.size() != 3) throw unsupported();
  const char order = typestr[0];
  if (order != '<' && order != '>' && order != '|') throw unsupported();
  std::optional<DType> dtype;
  const std::string_view code = typestr.substr(1);
  if (code == "b1") dtype = bool_;
  if (code == "i1") dtype = int8;
  if (code == "i2") dtype = int16;
  if (code == "i4") dtype = int32;
  if (code == "i8") dtype = int64;
  if (code == "u1") dtype = uint8;
  if (code == "u2") dtype = uint16;
  if (code == "u4") dtype = uint32;
  if (code == "u8") dtype = uint64;
  if (code == "f4") dtype = float32;
  if (code == "f8") dtype = float64;
  if (!dtype) throw unsupported();
  // numpy writes '|' ("not applicable") for single bytes; '<' and '>' mean the same there.
  if (dtype->itemsize() == 1) return {*dtype, ByteOrder::kLittle};
  if (order == '|') throw unsupported();
  return {*dtype, order == '>' ? ByteOrder::kBig : ByteOrder::kLittle};
}

// ---- fill elements -----------------------------------------------------------------

void EncodeFillElement(const FillValue& fill, DType dtype, std::span<std::byte> out) {
  if (static_cast<std::int64_t>(out.size()) != dtype.itemsize()) {
    throw InvalidArgument("EncodeFillElement: output has " + std::to_string(out.size()) +
                          " bytes, dtype " + std::string(dtype.name()) + " needs " +
                          std::to_string(dtype.itemsize()));
  }
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T element = FillAs<T>(fill, dtype);
    std::memcpy(out.data(), &element, sizeof(T));
  });
}

std::int64_t ZarrMetadata::chunk_nbytes() const {
  return CheckedMul(ShapeSize(chunks), dtype.itemsize());
}

// ---- .zarray -----------------------------------------------------------------------

ZarrMetadata ParseZarrMetadata(std::string_view json, std::string_view where) {
  const Json document = ParseDocument(json, where);
  ZarrMetadata metadata;

  const Json& format = Require(document, "zarr_format", where, "2 (Zarr v2)");
  if (AsIndex(format) != 2) Fail(where, "zarr_format", "2 (Zarr v2)", format);

  const std::string_view kShapeExpected = "an array of integers >= 0";
  metadata.shape = ParseExtents(Require(document, "shape", where, kShapeExpected), "shape", where,
                                0, kShapeExpected);
  const std::string chunks_expected = "an array of " + std::to_string(metadata.shape.size()) +
                                      " integers >= 1 (one per dimension of shape " +
                                      ShapeText(metadata.shape) + ")";
  const Json& chunks = Require(document, "chunks", where, chunks_expected);
  metadata.chunks = ParseExtents(chunks, "chunks", where, 1, chunks_expected);
  if (metadata.chunks.size() != metadata.shape.size()) {
    Fail(where, "chunks", chunks_expected, chunks);
  }

  const std::string dtype_expected =
      "a supported type string (" + std::string(kSupportedTypestrs) + ")";
  const Json& dtype = Require(document, "dtype", where, dtype_expected);
  if (!dtype.is_string()) Fail(where, "dtype", dtype_expected, dtype);
  try {
    std::tie(metadata.dtype, metadata.byte_order) = ParseZarrTypestr(dtype.get<std::string>());
  } catch (const InvalidArgument&) {
    Fail(where, "dtype", dtype_expected, dtype);
  }

  const Json& compressor =
      Require(document, "compressor", where, "null or a codec object such as {\"id\": \"zstd\"}");
  if (!compressor.is_null()) metadata.compressor = ParseCodec(compressor, "compressor", where);

  const Json& fill = Require(document, "fill_value", where, "a fill value or null");
  metadata.fill_value = ParseFillValue(fill, metadata.dtype, dtype.get<std::string>(), where);

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
      metadata.filters.push_back(
          ParseCodec(filters[index], "filters[" + std::to_string(index) + "]", where));
    }
  }

  if (const Json* separator = Find(document, "dimension_separator");
      separator != nullptr && !separator->is_null()) {
    if (*separator != "." && *separator != "/") {
      Fail(where, "dimension_separator", "\".\" or \"/\" (or the key left out)", *separator);
    }
    metadata.dimension_separator = separator->get<std::string>()[0];
  }

  // Sizes: every count and byte size a reader derives from the metadata must fit.
  try {
    CheckedMul(ShapeSize(metadata.shape), metadata.dtype.itemsize());
  } catch (const InvalidArgument&) {
    FailText(where, "shape",
             "an array whose byte size (elements x " + std::to_string(metadata.dtype.itemsize()) +
                 " bytes) fits in 64 bits",
             ShapeText(metadata.shape));
  }
  for (std::size_t dim = 0; dim < metadata.shape.size(); ++dim) {
    // The chunk grid rounds shape / chunks up as (shape + chunks - 1) / chunks, whose
    // intermediate shape + chunks must fit in 64 bits.
    Index rounded = 0;
    if (__builtin_add_overflow(metadata.shape[dim], metadata.chunks[dim], &rounded)) {
      FailText(where, "chunks",
               "extents whose chunk grid fits in 64 bits with shape " + ShapeText(metadata.shape),
               ShapeText(metadata.chunks));
    }
  }
  Index chunk_bytes = 0;
  try {
    chunk_bytes = metadata.chunk_nbytes();
  } catch (const InvalidArgument&) {
    chunk_bytes = std::numeric_limits<Index>::max();
  }
  if (chunk_bytes > kMaxChunkBytes) {
    FailText(where, "chunks",
             "chunks of at most 2^40 bytes (1 TiB) each; with dtype " +
                 std::string(metadata.dtype.name()) + " these chunks hold " +
                 (chunk_bytes == std::numeric_limits<Index>::max()
                      ? std::string("more than 2^63 bytes")
                      : std::to_string(chunk_bytes) + " bytes"),
             ShapeText(metadata.chunks));
  }
  return metadata;
}

std::string ZarrMetadataToJson(const ZarrMetadata& metadata) {
  Json document = Json::object();
  document["zarr_format"] = 2;
  document["shape"] = metadata.shape;
  document["chunks"] = metadata.chunks;
  document["dtype"] = ZarrTypestr(metadata.dtype, metadata.byte_order);
  document["order"] = std::string(1, metadata.order);
  document["fill_value"] = FillValueToJson(metadata.fill_value, metadata.dtype);
  document["compressor"] = metadata.compressor ? CodecToJson(*metadata.compressor) : Json();
  if (metadata.filters.empty()) {
    document["filters"] = nullptr;
  } else {
    Json filters = Json::array();
    for (const CodecConfig& filter : metadata.filters) filters.push_back(CodecToJson(filter));
    document["filters"] = std::move(filters);
  }
  document["dimension_separator"] = std::string(1, metadata.dimension_separator);
  // nlohmann's objects keep keys sorted, as zarr-python's json.dumps(sort_keys=True).
  return DumpOrThrow(document, ".zarray");
}

// ---- .zattrs -----------------------------------------------------------------------

namespace {
constexpr std::string_view kDimensionsKey = "_ARRAY_DIMENSIONS";
}  // namespace

ZarrAttributes ParseZarrAttributes(std::string_view json, std::string_view where) {
  Json document = ParseDocument(json, where);
  ZarrAttributes attributes;
  if (const Json* names = Find(document, kDimensionsKey); names != nullptr) {
    const std::string_view expected = "an array of dimension names (strings)";
    if (!names->is_array()) Fail(where, kDimensionsKey, expected, *names);
    for (const Json& name : *names) {
      if (!name.is_string()) Fail(where, kDimensionsKey, expected, *names);
      attributes.dimension_names.push_back(name.get<std::string>());
    }
    // An empty list (a 0-d array's) stays among the other attributes, so that it is
    // written back: xarray needs the key present even when it lists no dimension.
    if (!attributes.dimension_names.empty()) document.erase(std::string(kDimensionsKey));
  }
  attributes.other_json = document.dump();
  return attributes;
}

std::string ZarrAttributesToJson(const ZarrAttributes& attributes) {
  Json document;
  try {
    document = Json::parse(attributes.other_json);
  } catch (const Json::exception& error) {
    throw InvalidArgument("ZarrAttributes::other_json is not valid JSON: " +
                          std::string(error.what()));
  }
  if (!document.is_object()) {
    throw InvalidArgument("ZarrAttributes::other_json must be a JSON object, found " +
                          Render(document));
  }
  if (!attributes.dimension_names.empty()) {
    document[std::string(kDimensionsKey)] = attributes.dimension_names;
  }
  return DumpOrThrow(document, ".zattrs");
}

}  // namespace tessera
