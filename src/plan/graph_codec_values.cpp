// The graph codec's values as JSON (graph_codec_values.hpp).
#include "graph_codec_values.hpp"

#include <algorithm>
#include <bit>
#include <complex>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "tessera/core/errors.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera::planner::graph_codec {
namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kIntMin = std::numeric_limits<std::int64_t>::min();
constexpr int kIntLimit = std::numeric_limits<int>::max();

const Json& Array(const Json& value, const std::string& where, std::size_t max_size) {
  if (!value.is_array())
    Malformed(where, "expected a list, found " + std::string(value.type_name()));
  if (value.size() > max_size) {
    Malformed(where, "a list of " + std::to_string(value.size()) + " entries, at most " +
                         std::to_string(max_size) + " expected");
  }
  return value;
}

int ReadSmallInt(const Json& value, const std::string& where, int min = -kIntLimit) {
  return static_cast<int>(ReadInt(value, where, min, kIntLimit));
}

// ---- codecs, fill values ----------------------------------------------------------

Json WriteFill(const FillValue& fill) {
  return std::visit(
      [](const auto& value) -> Json {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else {
          return WriteScalar(Scalar(value));
        }
      },
      fill);
}

FillValue ReadFill(const Json& value, const std::string& where) {
  if (value.is_null()) return std::monostate{};
  return std::visit([](const auto& held) -> FillValue { return held; },
                    ReadScalar(value, where).value());
}

// ---- index maps -------------------------------------------------------------------

// Checks that every index `axis` reads for output indices [lo, hi) lies in [0, extent)
// of its input (through its table, when it has one).
void CheckAxisReads(const AxisMap& axis, Index lo, Index hi, Index extent,
                    const std::string& where) {
  if (axis.divisor < 1) Malformed(where, "an axis divisor below 1");
  if (axis.modulus < 0) Malformed(where, "a negative axis modulus");
  if (axis.table != nullptr) {
    for (const Index entry : *axis.table) {
      if (entry < 0 || entry >= extent) {
        Malformed(where, "a table entry " + std::to_string(entry) + " outside the input's " +
                             std::to_string(extent));
      }
    }
  }
  if (lo >= hi) return;
  // start + step * q over q in [lo / divisor, (hi - 1) / divisor] is monotone in q.
  const Index limit = axis.table != nullptr ? static_cast<Index>(axis.table->size()) : extent;
  Index ends[2];
  const Index quotients[2] = {lo / axis.divisor, (hi - 1) / axis.divisor};
  for (int end = 0; end < 2; ++end) {
    Index scaled = 0;
    if (__builtin_mul_overflow(axis.step, quotients[end], &scaled) ||
        __builtin_add_overflow(axis.start, scaled, &ends[end])) {
      Malformed(where, "an axis map whose indices overflow");
    }
  }
  Index first = std::min(ends[0], ends[1]);
  Index last = std::max(ends[0], ends[1]);
  if (axis.modulus > 0) {
    if (axis.modulus <= limit) return;  // every wrapped index is below the modulus
    // Larger than what it indexes: only a range within one period is checked.
    Index wrapped = first % axis.modulus;
    if (wrapped < 0) wrapped += axis.modulus;
    Index offset = 0;
    Index span = 0;
    if (__builtin_sub_overflow(first, wrapped, &offset) ||
        __builtin_sub_overflow(last, offset, &span) || span >= axis.modulus) {
      Malformed(where, "an axis modulus beyond its input");
    }
    first = wrapped;
    last = span;
  }
  if (first < 0 || last >= limit) {
    Malformed(where, "an axis map reading indices " + std::to_string(first) + " to " +
                         std::to_string(last) + " of an input axis of " + std::to_string(limit));
  }
}

AxisMap ReadAxis(const Json& value, const std::string& where, int input_ndim) {
  const Json& fields = Array(value, where, 6);
  if (fields.size() != 6)
    Malformed(where, "an axis map of " + std::to_string(fields.size()) + " fields");
  AxisMap axis(ReadSmallInt(fields[0], where, -1), ReadInt(fields[1], where, kIntMin, kIntMax),
               ReadInt(fields[2], where, kIntMin, kIntMax), ReadInt(fields[3], where, 1, kIntMax),
               ReadInt(fields[4], where, 0, kIntMax / 2));  // wrapping adds the modulus once
  if (axis.input_axis >= input_ndim) Malformed(where, "an axis map reading an axis out of range");
  if (!fields[5].is_null()) {
    axis.table = std::make_shared<const std::vector<Index>>(
        ReadIndices(fields[5], where, kIntMin, std::numeric_limits<std::size_t>::max()));
  }
  return axis;
}

GatherSource ReadSource(const Json& value, const std::string& where, const Shape& shape,
                        const Shape& input, int join_axis) {
  GatherSource source;
  const int ndim = static_cast<int>(shape.size());
  const int input_ndim = static_cast<int>(input.size());
  for (const Json& axis : Array(Field(value, "axes", where), where, kMaxRank)) {
    source.axes.push_back(ReadAxis(axis, where, input_ndim));
  }
  source.fixed = ReadIndices(Field(value, "fixed", where), where, -1);
  const Index join_extent = ndim == 0 ? 1 : shape[static_cast<std::size_t>(join_axis)];
  source.begin = ReadInt(Field(value, "begin", where), where, 0, join_extent);
  source.end = ReadInt(Field(value, "end", where), where, source.begin, join_extent);
  if (static_cast<int>(source.axes.size()) != ndim || source.fixed.size() != input.size()) {
    Malformed(where, "a source with " + std::to_string(source.axes.size()) + " axes and " +
                         std::to_string(source.fixed.size()) + " fixed indices for an output of " +
                         std::to_string(ndim) + " and an input of " + std::to_string(input_ndim) +
                         " dimensions");
  }
  std::vector<int> readers(input.size(), 0);
  for (int d = 0; d < ndim; ++d) {
    const AxisMap& axis = source.axes[static_cast<std::size_t>(d)];
    const bool joined = d == join_axis;
    const Index lo = joined ? source.begin : 0;
    const Index hi = joined ? source.end : shape[static_cast<std::size_t>(d)];
    if (axis.input_axis < 0) continue;
    ++readers[static_cast<std::size_t>(axis.input_axis)];
    CheckAxisReads(axis, lo, hi, input[static_cast<std::size_t>(axis.input_axis)], where);
  }
  for (std::size_t axis = 0; axis < input.size(); ++axis) {
    const bool fixed = source.fixed[axis] >= 0;
    if (readers[axis] + (fixed ? 1 : 0) != 1 || (fixed && source.fixed[axis] >= input[axis])) {
      Malformed(where, "input axis " + std::to_string(axis) +
                           " is not either read by one output axis or fixed at an index in it");
    }
  }
  return source;
}

}  // namespace

Json WriteCodec(const CodecConfig& codec) {
  return Json{{"id", codec.id},
              {"cname", codec.cname},
              {"level", codec.level},
              {"shuffle", codec.shuffle},
              {"blocksize", codec.blocksize},
              {"acceleration", codec.acceleration},
              {"typesize", codec.typesize},
              {"checksum", codec.checksum}};
}

CodecConfig ReadCodec(const Json& value, const std::string& where) {
  CodecConfig codec;
  codec.id = ReadString(Field(value, "id", where), where + " codec id");
  codec.cname = ReadString(Field(value, "cname", where), where + " codec cname");
  codec.level = ReadSmallInt(Field(value, "level", where), where + " codec level");
  codec.shuffle = ReadSmallInt(Field(value, "shuffle", where), where + " codec shuffle");
  codec.blocksize = ReadSmallInt(Field(value, "blocksize", where), where + " codec blocksize");
  codec.acceleration =
      ReadSmallInt(Field(value, "acceleration", where), where + " codec acceleration");
  codec.typesize = ReadSmallInt(Field(value, "typesize", where), where + " codec typesize");
  codec.checksum = ReadBool(Field(value, "checksum", where), where + " codec checksum");
  try {
    MakeCodec(codec);
  } catch (const InvalidArgument& error) {
    Malformed(where, std::string("invalid codec: ") + error.what());
  }
  return codec;
}

void Malformed(const std::string& where, const std::string& what) {
  throw FormatError("graph codec: " + where + ": " + what);
}

const Json& Field(const Json& object, std::string_view key, const std::string& where) {
  if (!object.is_object()) {
    Malformed(where, "expected a map, found " + std::string(object.type_name()));
  }
  const auto found = object.find(key);
  if (found == object.end()) Malformed(where, "no \"" + std::string(key) + "\"");
  return *found;
}

std::int64_t ReadInt(const Json& value, const std::string& where, std::int64_t min,
                     std::int64_t max) {
  std::int64_t result = 0;
  if (value.is_number_unsigned()) {
    const auto held = value.get<std::uint64_t>();
    if (held > static_cast<std::uint64_t>(kIntMax)) Malformed(where, "an integer beyond int64");
    result = static_cast<std::int64_t>(held);
  } else if (value.is_number_integer()) {
    result = value.get<std::int64_t>();
  } else {
    Malformed(where, "expected an integer, found " + std::string(value.type_name()));
  }
  if (result < min || result > max) {
    Malformed(where, "the integer " + std::to_string(result) + " is outside [" +
                         std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return result;
}

std::uint64_t ReadUInt(const Json& value, const std::string& where) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  return static_cast<std::uint64_t>(ReadInt(value, where, 0, kIntMax));
}

bool ReadBool(const Json& value, const std::string& where) {
  if (!value.is_boolean())
    Malformed(where, "expected a boolean, found " + std::string(value.type_name()));
  return value.get<bool>();
}

const std::string& ReadString(const Json& value, const std::string& where) {
  if (!value.is_string())
    Malformed(where, "expected a string, found " + std::string(value.type_name()));
  return value.get_ref<const std::string&>();
}

Json WriteDouble(double value) { return std::bit_cast<std::uint64_t>(value); }

double ReadDouble(const Json& value, const std::string& where) {
  return std::bit_cast<double>(ReadUInt(value, where));
}

Json WriteDType(DType dtype) { return std::string(dtype.name()); }

DType ReadDType(const Json& value, const std::string& where) {
  const std::string& name = ReadString(value, where);
  try {
    return DType::FromName(name);
  } catch (const InvalidArgument&) {
    Malformed(where, "unknown dtype \"" + name + "\"");
  }
}

std::vector<Index> ReadIndices(const Json& value, const std::string& where, Index min,
                               std::size_t max_size) {
  std::vector<Index> indices;
  for (const Json& entry : Array(value, where, max_size)) {
    indices.push_back(ReadInt(entry, where, min, kIntMax));
  }
  return indices;
}

std::vector<int> ReadInts(const Json& value, const std::string& where, int min, int max) {
  std::vector<int> ints;
  for (const Json& entry : Array(value, where, kMaxRank)) {
    ints.push_back(static_cast<int>(ReadInt(entry, where, min, max)));
  }
  return ints;
}

Json WriteScalar(const Scalar& scalar) {
  return std::visit(
      [](const auto& value) -> Json {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>) {
          return Json{{"bool", value}};
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return Json{{"int", value}};
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          return Json{{"uint", value}};
        } else if constexpr (std::is_same_v<T, double>) {
          return Json{{"float", WriteDouble(value)}};
        } else {
          return Json{{"complex", {WriteDouble(value.real()), WriteDouble(value.imag())}}};
        }
      },
      scalar.value());
}

Scalar ReadScalar(const Json& value, const std::string& where) {
  if (!value.is_object() || value.size() != 1) {
    Malformed(where, "a scalar must be a map of one entry");
  }
  const std::string& kind = value.begin().key();
  const Json& held = value.begin().value();
  if (kind == "bool") return Scalar(ReadBool(held, where));
  if (kind == "int") return Scalar(ReadInt(held, where, kIntMin, kIntMax));
  if (kind == "uint") return Scalar(ReadUInt(held, where));
  if (kind == "float") return Scalar(ReadDouble(held, where));
  if (kind == "complex") {
    const Json& parts = Array(held, where, 2);
    if (parts.size() != 2) Malformed(where, "a complex scalar needs two parts");
    return Scalar(std::complex<double>(ReadDouble(parts[0], where), ReadDouble(parts[1], where)));
  }
  Malformed(where, "unknown scalar kind \"" + kind + "\"");
}

Json WriteContraction(const Contraction& contraction) {
  return Json{{"num_batch", contraction.num_batch},
              {"a_dims", contraction.a_dims},
              {"b_dims", contraction.b_dims}};
}

Contraction ReadContraction(const Json& value, const std::string& where) {
  constexpr int kLimit = 4 * static_cast<int>(kMaxRank);  // any dimension or pair index
  Contraction contraction;
  contraction.num_batch = ReadSmallInt(Field(value, "num_batch", where), where, 0);
  contraction.a_dims = ReadInts(Field(value, "a_dims", where), where, -kLimit, kLimit);
  contraction.b_dims = ReadInts(Field(value, "b_dims", where), where, -kLimit, kLimit);
  return contraction;
}

Json WriteIndexMap(const IndexMap& map) {
  Json sources = Json::array();
  for (const GatherSource& source : map.sources) {
    Json axes = Json::array();
    for (const AxisMap& axis : source.axes) {
      axes.push_back({axis.input_axis, axis.start, axis.step, axis.divisor, axis.modulus,
                      axis.table != nullptr ? Json(*axis.table) : Json(nullptr)});
    }
    sources.push_back(Json{{"axes", std::move(axes)},
                           {"fixed", source.fixed},
                           {"begin", source.begin},
                           {"end", source.end}});
  }
  return Json{{"join_axis", map.join_axis}, {"sources", std::move(sources)}};
}

IndexMap ReadIndexMap(const Json& value, const std::string& where, const Shape& shape,
                      const std::vector<Shape>& input_shapes) {
  IndexMap map;
  const int ndim = static_cast<int>(shape.size());
  map.join_axis = ReadSmallInt(Field(value, "join_axis", where), where, 0);
  if (map.join_axis >= std::max(ndim, 1)) Malformed(where, "a join axis out of range");
  const Json& sources = Array(Field(value, "sources", where), where, input_shapes.size());
  if (sources.size() != input_shapes.size()) {
    Malformed(where, std::to_string(sources.size()) + " sources for " +
                         std::to_string(input_shapes.size()) + " inputs");
  }
  Index covered = 0;
  for (std::size_t k = 0; k < input_shapes.size(); ++k) {
    const std::string source_where = where + " source " + std::to_string(k);
    map.sources.push_back(
        ReadSource(sources[k], source_where, shape, input_shapes[k], map.join_axis));
    if (map.sources.back().begin != covered)
      Malformed(source_where, "sources that leave a gap or overlap");
    covered = map.sources.back().end;
  }
  if (covered != (ndim == 0 ? 1 : shape[static_cast<std::size_t>(map.join_axis)])) {
    Malformed(where, "sources that do not cover the output");
  }
  return map;
}

Json WriteTarget(const ZarrTarget& target) {
  std::string location;
  if (target.store != nullptr) {
    const std::optional<std::string> where = target.store->Location();
    if (!where) {
      throw InvalidArgument("to_zarr into " + target.store->Describe() + " (\"" + target.path +
                            "\"): the store lives in this process's memory, so other processes "
                            "cannot write it: write to a directory, or run with executor "
                            "\"threads\", \"sync\" or \"mpi\"");
    }
    location = *where;
  } else {
    location = std::filesystem::absolute(target.directory).lexically_normal().string();
  }
  return Json{{"in_store", target.store != nullptr},
              {"location", location},
              {"path", target.path},
              {"inner_chunks", target.inner_chunks},
              {"zarr_format", target.zarr_format ? Json(*target.zarr_format) : Json(nullptr)},
              {"shards", target.shards ? Json(*target.shards) : Json(nullptr)},
              {"checksum", target.checksum},
              {"float16", target.float16},
              {"consolidated", target.consolidated},
              {"compressor", target.compressor ? WriteCodec(*target.compressor) : Json(nullptr)},
              {"dimension_names", target.dimension_names},
              {"fill_value", target.fill_value ? WriteFill(*target.fill_value) : Json(nullptr)},
              {"has_fill_value", target.fill_value.has_value()},
              {"attributes_json", target.attributes_json},
              {"big_endian", target.byte_order == ByteOrder::kBig},
              {"resume", target.resume},
              {"overwrite", target.overwrite}};
}

ZarrTarget ReadTarget(const Json& value, const std::string& where) {
  ZarrTarget target;
  const auto field = [&](std::string_view key) -> const Json& { return Field(value, key, where); };
  const std::string& location = ReadString(field("location"), where);
  if (!IsObjectStoreLocation(location) && !std::filesystem::path(location).is_absolute()) {
    Malformed(where, "the location \"" + location + "\" is not an absolute path or s3:// URL");
  }
  target.path = ReadString(field("path"), where);
  target.inner_chunks = ReadIndices(field("inner_chunks"), where, 1);
  if (!field("zarr_format").is_null()) {
    target.zarr_format = static_cast<int>(ReadInt(field("zarr_format"), where, 2, 3));
  }
  if (!field("shards").is_null()) target.shards = ReadIndices(field("shards"), where, 1);
  target.checksum = ReadBool(field("checksum"), where);
  target.float16 = ReadBool(field("float16"), where);
  target.consolidated = ReadBool(field("consolidated"), where);
  target.compressor.reset();
  if (!field("compressor").is_null()) target.compressor = ReadCodec(field("compressor"), where);
  for (const Json& name : Array(field("dimension_names"), where, kMaxRank)) {
    target.dimension_names.push_back(ReadString(name, where));
  }
  if (ReadBool(field("has_fill_value"), where)) {
    target.fill_value = ReadFill(field("fill_value"), where);
  }
  target.attributes_json = ReadString(field("attributes_json"), where);
  target.byte_order = ReadBool(field("big_endian"), where) ? ByteOrder::kBig : ByteOrder::kLittle;
  target.resume = ReadBool(field("resume"), where);
  target.overwrite = ReadBool(field("overwrite"), where);
  if (ReadBool(field("in_store"), where)) {
    target.store = OpenStore(location, {.create = false});
  } else {
    target.directory = location;
  }
  return target;
}

}  // namespace tessera::planner::graph_codec
