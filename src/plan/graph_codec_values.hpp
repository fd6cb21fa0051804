// The values of the graph codec (tessera/plan/internal/graph_codec.hpp) as JSON, to be
// written as CBOR: shapes, scalars (floats by their bits, so bit-exact), codecs, fill
// values, index maps, contractions and Zarr targets. Each Read* checks what it reads and
// throws FormatError("graph codec: <where>: <what was wrong>") for anything malformed;
// `where` names the node or target being read. Internal to src/plan.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/scalar.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/plan/internal/contraction.hpp"
#include "tessera/plan/internal/index_map.hpp"
#include "tessera/plan/plan_options.hpp"

namespace tessera::planner::graph_codec {

using Json = nlohmann::json;

// The most dimensions an array of a decoded graph may have (far above any real array;
// it bounds the work of checking one).
inline constexpr std::size_t kMaxRank = 64;

[[noreturn]] void Malformed(const std::string& where, const std::string& what);

// The member `key` of `object`; FormatError when `object` is not an object or lacks it.
const Json& Field(const Json& object, std::string_view key, const std::string& where);
// An integer in [min, max].
std::int64_t ReadInt(const Json& value, const std::string& where, std::int64_t min,
                     std::int64_t max);
std::uint64_t ReadUInt(const Json& value, const std::string& where);
bool ReadBool(const Json& value, const std::string& where);
const std::string& ReadString(const Json& value, const std::string& where);
// A double stored as its IEEE bits (WriteDouble).
Json WriteDouble(double value);
double ReadDouble(const Json& value, const std::string& where);

Json WriteDType(DType dtype);
DType ReadDType(const Json& value, const std::string& where);
// A list of at most `max_size` indices, each >= min.
std::vector<Index> ReadIndices(const Json& value, const std::string& where, Index min,
                               std::size_t max_size = kMaxRank);
std::vector<int> ReadInts(const Json& value, const std::string& where, int min, int max);

Json WriteCodec(const CodecConfig& codec);
CodecConfig ReadCodec(const Json& value, const std::string& where);

Json WriteScalar(const Scalar& scalar);
Scalar ReadScalar(const Json& value, const std::string& where);

Json WriteContraction(const Contraction& contraction);
Contraction ReadContraction(const Json& value, const std::string& where);

// The map as written; ReadIndexMap checks its structure (a source per input, every
// index it reads inside its input, the sources covering the output along the join
// axis) against the output's shape and the inputs'.
Json WriteIndexMap(const IndexMap& map);
IndexMap ReadIndexMap(const Json& value, const std::string& where, const Shape& shape,
                      const std::vector<Shape>& input_shapes);

// Every field of the target but file_ops; InvalidArgument for a store without a
// Location(). ReadTarget opens the store (create = false): StorageError when it is gone.
Json WriteTarget(const ZarrTarget& target);
ZarrTarget ReadTarget(const Json& value, const std::string& where);

}  // namespace tessera::planner::graph_codec
