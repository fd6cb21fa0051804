// The graph codec (plan/internal/graph_codec.hpp): for every node kind, a graph built
// through the array API, encoded and decoded, plans the same ops (fingerprints, kinds,
// tasks, tiers, inputs), encodes to the same bytes again and computes bit-identical
// values; targets keep every option; what cannot cross processes is refused; damaged
// bytes are a FormatError, never a crash.
#include "tessera/plan/internal/graph_codec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/indexing.hpp"
#include "tessera/api/linalg.hpp"
#include "tessera/api/manipulation.hpp"
#include "tessera/api/map_blocks.hpp"
#include "tessera/api/reduction.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

using planner::DecodeGraph;
using planner::EncodeGraph;
using Json = nlohmann::json;

Spec TestSpec() {
  Spec spec;
  spec.allowed_mem = 64 << 20;
  spec.max_workers = 2;
  return spec;
}

std::vector<PlanOutput> OutputsOf(const std::vector<Array>& arrays) {
  std::vector<PlanOutput> outputs;
  for (const Array& array : arrays) outputs.push_back(PlanOutput{array.node(), std::nullopt});
  return outputs;
}

void ExpectSameOps(const FinalizedPlan& expected, const FinalizedPlan& actual) {
  ASSERT_EQ(expected.ops().size(), actual.ops().size());
  for (std::size_t op = 0; op < expected.ops().size(); ++op) {
    const OpInfo& a = expected.ops()[op];
    const OpInfo& b = actual.ops()[op];
    SCOPED_TRACE("op " + std::to_string(op) + " " + a.name);
    EXPECT_EQ(a.fingerprint, b.fingerprint);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.num_tasks, b.num_tasks);
    EXPECT_EQ(a.tier, b.tier);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.chunks, b.chunks);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.projected_mem, b.projected_mem);
  }
}

void ExpectSameValues(const NDArray& expected, const NDArray& actual) {
  ASSERT_EQ(expected.shape(), actual.shape());
  ASSERT_EQ(expected.dtype(), actual.dtype());
  ASSERT_EQ(expected.nbytes(), actual.nbytes());
  EXPECT_EQ(0, std::memcmp(expected.bytes().data(), actual.bytes().data(),
                           static_cast<std::size_t>(expected.nbytes())));
}

// Encodes `arrays`, decodes them, and checks that the decoded graph plans the same ops,
// encodes to the same bytes, and computes the same values bit for bit.
void ExpectRoundTrip(const std::vector<Array>& arrays) {
  const Spec& spec = arrays.front().spec();
  const std::vector<PlanOutput> outputs = OutputsOf(arrays);
  const std::string bytes = EncodeGraph(outputs);
  const std::vector<PlanOutput> decoded = DecodeGraph(bytes);
  ASSERT_EQ(decoded.size(), outputs.size());
  EXPECT_EQ(EncodeGraph(decoded), bytes);
  ExpectSameOps(Finalize(outputs, spec), Finalize(decoded, spec));
  std::vector<Array> again;
  for (const PlanOutput& output : decoded) {
    EXPECT_FALSE(output.target.has_value());
    again.emplace_back(output.node, spec);
  }
  const std::vector<NDArray> expected = compute(arrays);
  const std::vector<NDArray> actual = compute(again);
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    ExpectSameValues(expected[k], actual[k]);
  }
}

// Zarr v2 float64 metadata, chunks of 2 by 3 (2 in one dimension).
ZarrMetadata PlainMetadata(Shape shape) {
  ZarrMetadata metadata;
  metadata.shape = shape;
  metadata.chunks = shape.size() == 1 ? Shape{2} : Shape{2, 3};
  metadata.dtype = float64;
  return metadata;
}

// A (4, 6) float64 array of distinct values, some negative, in (3, 4) chunks.
Array Sample(const Spec& spec) {
  NDArray values({4, 6}, float64);
  auto data = values.mutable_data<double>();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = 0.1 * static_cast<double>(i) - 0.7;
  return asarray(values, {3, 4}, spec);
}

TEST(GraphCodecTest, SourcesAndGeneratorsRoundTrip) {
  const Spec spec = TestSpec();
  NDArray ints({5}, int32);
  auto data = ints.mutable_data<std::int32_t>();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = -2 + 3 * static_cast<std::int32_t>(i);
  ExpectRoundTrip({Sample(spec), asarray(ints, {2}, spec), ones({3, 5}, int8, {2, 2}, spec),
                   zeros({7}, uint16, {3}, spec), full({2, 3}, 0.1, float32, {1, 3}, spec),
                   full({4}, std::numeric_limits<std::uint64_t>::max(), uint64, {4}, spec),
                   full({3}, std::complex<double>(1.5, -0.25), complex128, {2}, spec),
                   full({2}, true, bool_, {1}, spec), arange(0.5, 10, 0.25, float32, 7, spec),
                   arange(11, 4, spec), tessera::random::random({5, 4}, {2, 3}, spec, 42)});
}

TEST(GraphCodecTest, ElementwiseWithCastsBroadcastsAndScalarsRoundTrips) {
  const Spec spec = TestSpec();
  const Array x = Sample(spec);
  const Array small = arange(0, 6, 1, int16, 4, spec);  // (6,): broadcast along rows
  const Array sum = x + small;                          // int16 cast to float64
  const Array masked = where(x > 0.2, x, 2.5);
  const Array mixed = exp(small) * 3 - astype(x, float32);  // exp of int16 computes in float32
  const Array bits = (astype(x * 10, int32) & 6) << 1;
  ExpectRoundTrip({sum, masked, mixed, bits, -x, sqrt(abs(x)), isnan(x / 0.0),
                   broadcast_to(small, {3, 6}), astype(x, complex64) * 2});
}

TEST(GraphCodecTest, StoredSourceRoundTripsAndAChangedArrayIsRefused) {
  const Spec spec = TestSpec();
  testing::TempDir dir("graph_codec");
  auto store = DirectoryStore::Open(dir.path() / "data.zarr");
  const NDArray values = Sample(spec).compute();
  ZarrArray::Create(store, "plain", PlainMetadata({4, 6})).Write(values, 1);
  ZarrArray::Create(store, "sharded",
                    MakeV3Metadata({4, 6}, {2, 3}, float64, ParseCodecSpec("zstd:1"), Shape{4, 6}))
      .Write(values, 1);
  const Array plain = from_zarr(store, "plain", spec);
  const Array sharded = from_zarr(store, "sharded", spec);
  ExpectRoundTrip({plain * 2 + sharded, sharded.rechunk({4, 1})});

  const std::string bytes = EncodeGraph(OutputsOf({plain}));
  ZarrArray::Create(store, "plain", PlainMetadata({4, 7}));
  try {
    DecodeGraph(bytes);
    FAIL() << "expected FormatError";
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("is now float64 (4, 7)"), std::string::npos)
        << error.what();
  }
}

TEST(GraphCodecTest, RechunksAndReductionsRoundTrip) {
  const Spec spec = TestSpec();
  const Array x = Sample(spec);
  const Array cube = reshape(arange(0, 60, 1, int32, 7, spec), {3, 4, 5});
  ExpectRoundTrip({x.rechunk({1, 6}), sum(x, 0), mean(cube, {0, 2}, true), var(x, 1, false, 1),
                   tessera::std(cube, {}, false, 0.5), argmax(x, 1), argmin(cube),
                   sum(cube, 1, false, float64), prod(astype(x, float32), 0, true), min(x),
                   max(cube, {1, 2}), all(x > -1), any(cube > 58, 0), count_nonzero(cube, 2)});
}

TEST(GraphCodecTest, ContractionsRoundTrip) {
  const Spec spec = TestSpec();
  const Array x = Sample(spec);
  const Array y = reshape(arange(0, 18, 1, int32, 5, spec), {6, 3});
  const Array batch = reshape(arange(0, 48, 1, float64, 16, spec), {2, 4, 6});
  ExpectRoundTrip({matmul(x, y), matmul(batch, y), tensordot(x, x, {1}, {1}),
                   outer(arange(0, 3, 1, float32, 2, spec), arange(0, 4, 1, float32, 3, spec)),
                   vecdot(x, x)});
}

TEST(GraphCodecTest, GathersAndReshapesRoundTrip) {
  const Spec spec = TestSpec();
  const Array x = Sample(spec);
  const Index picks[] = {5, 0, 3, 3};
  ExpectRoundTrip({x[{Slice(1, std::nullopt), Slice(std::nullopt, std::nullopt, -2)}], x[2],
                   x[Slice::Every(2)].rechunk({1, 1})[{Slice(), Slice(1, 4)}], take(x, picks, 1),
                   concat({x, x * 2}, 1), stack({x, -x, x}, 2), permute_dims(x, {1, 0}), flip(x),
                   roll(x, 2, 1), repeat(x, 3, 0), tile(x, {2, 1}), expand_dims(x, 1),
                   squeeze(x[{Slice(0, 1)}], 0), reshape(x, {2, 12}), reshape(x, {24}),
                   reshape(arange(0, 12, 1, int8, 5, spec), {3, 2, 2})});
}

// A FunctionLoader for the tests' recipes: "scale:<factor>" multiplies its one float64
// input by the factor.
BlockFunction ScaleBy(double factor) {
  return [factor](std::span<const NDArray> inputs, const BlockInfo&) {
    NDArray out(inputs[0].shape(), float64);
    const auto in = inputs[0].data<double>();
    auto result = out.mutable_data<double>();
    for (std::size_t i = 0; i < in.size(); ++i) result[i] = in[i] * factor;
    return out;
  };
}

class ScaleLoader {
 public:
  ScaleLoader() {
    SetFunctionLoader([](std::string_view recipe, DType dtype) -> BlockFunction {
      EXPECT_EQ(dtype, float64);
      EXPECT_TRUE(recipe.starts_with("scale:"));
      return ScaleBy(std::stod(std::string(recipe.substr(6))));
    });
  }
  ~ScaleLoader() { SetFunctionLoader(nullptr); }
  ScaleLoader(const ScaleLoader&) = delete;
  ScaleLoader& operator=(const ScaleLoader&) = delete;
};

TEST(GraphCodecTest, MapBlocksWithARecipeRoundTrips) {
  const ScaleLoader loader;
  const Spec spec = TestSpec();
  const Array x = Sample(spec);
  const Array tripled =
      map_blocks(ScaleBy(3), {x}, float64, 1024, "scale-v1", [] { return std::string("scale:3"); });
  ExpectRoundTrip({tripled + 1, map_blocks(ScaleBy(0.5), {tripled}, float64, 0, "half",
                                           [] { return std::string("scale:0.5"); })});
}

TEST(GraphCodecTest, MapBlocksWithoutARecipeOrALoaderIsRefused) {
  const Spec spec = TestSpec();
  const Array x = Sample(spec);
  const Array lambda = map_blocks(ScaleBy(2), {x}, float64, 0, "doubler");
  try {
    EncodeGraph(OutputsOf({lambda}));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& error) {
    EXPECT_EQ(std::string(error.what()),
              "map_blocks \"doubler\" has a C++ function, which cannot be sent to other "
              "processes: run it with executor \"threads\", \"sync\" or \"mpi\"");
  }
  const Array shippable =
      map_blocks(ScaleBy(2), {x}, float64, 0, "doubler", [] { return std::string("scale:2"); });
  const std::string bytes = EncodeGraph(OutputsOf({shippable}));
  EXPECT_THROW(DecodeGraph(bytes), InvalidArgument);  // no loader installed
}

TEST(GraphCodecTest, MemoryStoresAreRefused) {
  const Spec spec = TestSpec();
  auto store = MemoryStore::Create();
  ZarrArray::Create(store, "x", PlainMetadata({4}));
  EXPECT_THROW(EncodeGraph(OutputsOf({from_zarr(store, "x", spec) + 1})), InvalidArgument);
  ZarrTarget target;
  target.store = store;
  target.path = "y";
  EXPECT_THROW(EncodeGraph({PlanOutput{Sample(spec).node(), target}}), InvalidArgument);
}

TEST(GraphCodecTest, TargetsKeepEveryOption) {
  const Spec spec = TestSpec();
  testing::TempDir dir("graph_codec_target");
  ZarrTarget target;
  target.store = DirectoryStore::Open(dir.path() / "out.zarr");
  target.path = "group/t2m";
  target.inner_chunks = {2, 3};
  target.zarr_format = 3;
  target.shards = Shape{4, 6};
  target.checksum = true;
  target.float16 = true;
  target.consolidated = true;
  target.compressor = ParseCodecSpec("blosc:zstd:3:bitshuffle");
  target.dimension_names = {"time", "x"};
  target.fill_value = std::complex<double>(-0.0, 1e300);
  target.attributes_json = R"({"units": "K"})";
  target.byte_order = ByteOrder::kBig;
  target.resume = true;
  target.overwrite = false;
  ZarrTarget plain;  // the defaults, to a directory
  plain.directory = dir.path() / "plain.zarr";
  plain.fill_value = FillValue{};  // null, which differs from no fill value
  const Array x = Sample(spec);
  const Array y = x + 1;
  const std::vector<PlanOutput> decoded =
      DecodeGraph(EncodeGraph({PlanOutput{x.node(), target}, PlanOutput{y.node(), plain}}));
  ASSERT_EQ(decoded.size(), 2U);
  ASSERT_TRUE(decoded[0].target.has_value());
  const ZarrTarget& got = *decoded[0].target;
  ASSERT_NE(got.store, nullptr);
  EXPECT_EQ(got.store->Location(), target.store->Location());
  EXPECT_EQ(got.path, target.path);
  EXPECT_EQ(got.inner_chunks, target.inner_chunks);
  EXPECT_EQ(got.zarr_format, target.zarr_format);
  EXPECT_EQ(got.shards, target.shards);
  EXPECT_TRUE(got.checksum && got.float16 && got.consolidated && got.resume);
  EXPECT_FALSE(got.overwrite);
  EXPECT_EQ(got.compressor, target.compressor);
  EXPECT_EQ(got.dimension_names, target.dimension_names);
  ASSERT_TRUE(got.fill_value.has_value());
  const auto* fill = std::get_if<std::complex<double>>(&*got.fill_value);
  ASSERT_NE(fill, nullptr);
  EXPECT_TRUE(std::signbit(fill->real()));
  EXPECT_EQ(fill->imag(), 1e300);
  EXPECT_EQ(got.attributes_json, target.attributes_json);
  EXPECT_EQ(got.byte_order, ByteOrder::kBig);
  EXPECT_EQ(got.file_ops, nullptr);

  ASSERT_TRUE(decoded[1].target.has_value());
  const ZarrTarget& directory = *decoded[1].target;
  EXPECT_EQ(directory.store, nullptr);
  EXPECT_EQ(directory.directory, plain.directory);
  EXPECT_EQ(directory.compressor, plain.compressor);
  EXPECT_EQ(directory.zarr_format, std::nullopt);
  EXPECT_EQ(directory.shards, std::nullopt);
  ASSERT_TRUE(directory.fill_value.has_value());
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*directory.fill_value));
  EXPECT_TRUE(directory.overwrite);
  EXPECT_FALSE(directory.resume);
  ExpectSameOps(Finalize({PlanOutput{y.node(), plain}}, spec),
                Finalize({PlanOutput{decoded[1].node, directory}}, spec));
}

// Bytes of a graph of many kinds (no stored source: damaged bytes must not name a store
// that happens to exist).
std::string RichGraph() {
  const Spec spec = TestSpec();
  const Array x = Sample(spec);
  const Index picks[] = {1, 0};
  const Array y = where(x > 0, x, 1.5) + arange(0, 6, 1, int16, 4, spec);
  return EncodeGraph(OutputsOf({sum(y.rechunk({2, 2}), 1), matmul(x, permute_dims(x, {1, 0})),
                                concat({take(x, picks, 0), x[{Slice(0, 2)}]}, 0),
                                reshape(x, {6, 4}), tessera::random::random({3}, {2}, spec, 7)}));
}

void ExpectFormatErrorOrGraph(std::string_view bytes) {
  try {
    DecodeGraph(bytes);
  } catch (const FormatError&) {
  }
}

TEST(GraphCodecTest, EveryTruncationIsAFormatError) {
  const std::string bytes = RichGraph();
  ASSERT_NO_THROW(DecodeGraph(bytes));
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_THROW(DecodeGraph(std::string_view(bytes).substr(0, length)), FormatError)
        << "prefix of " << length << " bytes";
  }
}

TEST(GraphCodecTest, FlippedBytesAreAFormatErrorOrAGraph) {
  const std::string bytes = RichGraph();
  std::mt19937_64 random(20240611);  // fixed: a failure replays
  std::uniform_int_distribution<std::size_t> position(0, bytes.size() - 1);
  std::uniform_int_distribution<int> bit(0, 7);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = bytes;
    const int flips = 1 + trial % 4;
    for (int flip = 0; flip < flips; ++flip) {
      damaged[position(random)] ^= static_cast<char>(1 << bit(random));
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    ExpectFormatErrorOrGraph(damaged);  // any other exception fails the test
  }
}

TEST(GraphCodecTest, MalformedGraphsNameWhatIsWrong) {
  const Spec spec = TestSpec();
  const Json valid = Json::from_cbor(EncodeGraph(OutputsOf({Sample(spec) + 1})));
  const auto expect_error = [](const Json& graph, const std::string& expected) {
    const std::vector<std::uint8_t> bytes = Json::to_cbor(graph);
    try {
      DecodeGraph(std::string(bytes.begin(), bytes.end()));
      FAIL() << "expected FormatError containing " << expected;
    } catch (const FormatError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  };
  Json graph = valid;
  graph["version"] = 2;
  expect_error(graph, "version 2, but this build reads version 1");
  graph = valid;
  graph["format"] = "zarr";
  expect_error(graph, "not a Tessera graph");
  graph = valid;
  graph["nodes"].back()["inputs"][0] = 7;
  expect_error(graph, "outside [0, ");
  graph = valid;
  graph["nodes"][0]["chunks"] = Json::array({3});
  expect_error(graph, "chunks (3,) for shape (4, 6)");
  graph = valid;
  graph["nodes"][0]["shape"] = Json::array({Index{1} << 40, Index{1} << 40});
  expect_error(graph, "overflows");
  graph = valid;  // 2^51 bytes claimed: refused before anything is allocated
  graph["nodes"][0]["shape"] = Json::array({Index{1} << 24, Index{1} << 24});
  expect_error(graph, "192 bytes of data for 2251799813685248");
  graph = valid;
  graph["nodes"][0]["data"] = Json::binary({1, 2, 3});
  expect_error(graph, "3 bytes of data for 192");
  graph = valid;
  graph["nodes"].back()["op"] = "frobnicate";
  expect_error(graph, "frobnicate");
  graph = valid;
  graph["nodes"].back()["kind"] = "teleport";
  expect_error(graph, "unknown kind \"teleport\"");
  graph = valid;
  graph["nodes"][0]["dtype"] = "float128";
  expect_error(graph, "unknown dtype");
  graph = valid;
  graph["outputs"][0]["node"] = 99;
  expect_error(graph, "output 0");
  EXPECT_THROW(DecodeGraph(std::string(100000, '\x81')), FormatError);  // nested lists
  EXPECT_THROW(DecodeGraph(""), FormatError);
}

}  // namespace
}  // namespace tessera
