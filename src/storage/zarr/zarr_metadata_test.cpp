#include "tessera/storage/zarr_metadata.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"
#include "test_seed.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::string_view kWhere = "/data/a.zarr/.zarray";

const fs::path& TestdataDir() {
  static const fs::path dir = TESSERA_ZARR_TESTDATA;
  return dir;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool IsNan(const FillValue& fill) {
  const double* number = std::get_if<double>(&fill);
  return number != nullptr && std::isnan(*number);
}

// Equality that treats a NaN fill value as equal to itself.
bool SameMetadata(ZarrMetadata a, ZarrMetadata b) {
  if (IsNan(a.fill_value) && IsNan(b.fill_value)) a.fill_value = b.fill_value = 0.0;
  return a == b;
}

CodecConfig Blosc(std::string cname, int level, int shuffle, int blocksize = 0) {
  return {.id = "blosc",
          .cname = std::move(cname),
          .level = level,
          .shuffle = shuffle,
          .blocksize = blocksize};
}
CodecConfig Leveled(std::string id, int level) { return {.id = std::move(id), .level = level}; }
CodecConfig Lz4(int acceleration) { return {.id = "lz4", .acceleration = acceleration}; }

ZarrMetadata Basic() {
  ZarrMetadata metadata;
  metadata.shape = {100, 50};
  metadata.chunks = {10, 25};
  metadata.dtype = float64;
  metadata.fill_value = 0.0;
  metadata.compressor = Blosc("lz4", 5, 1);
  return metadata;
}

// ---- writing -----------------------------------------------------------------------

TEST(ZarrMetadataToJsonTest, MatchesZarrPythonLayout) {
  EXPECT_EQ(ZarrMetadataToJson(Basic()), R"({
    "chunks": [
        10,
        25
    ],
    "compressor": {
        "blocksize": 0,
        "clevel": 5,
        "cname": "lz4",
        "id": "blosc",
        "shuffle": 1
    },
    "dimension_separator": ".",
    "dtype": "<f8",
    "fill_value": 0.0,
    "filters": null,
    "order": "C",
    "shape": [
        100,
        50
    ],
    "zarr_format": 2
})");
}

TEST(ZarrMetadataToJsonTest, WritesEachCodecWithNumcodecsKeys) {
  ZarrMetadata metadata = Basic();
  metadata.compressor = std::nullopt;
  metadata.filters = {Leveled("zstd", 3), Lz4(7), Leveled("zlib", 2), Leveled("gzip", 9)};
  Json document = Json::parse(ZarrMetadataToJson(metadata));
  EXPECT_TRUE(document["compressor"].is_null());
  EXPECT_EQ(document["filters"], Json::parse(R"([{"id": "zstd", "level": 3},
      {"id": "lz4", "acceleration": 7}, {"id": "zlib", "level": 2},
      {"id": "gzip", "level": 9}])"));
}

TEST(ZarrMetadataToJsonTest, WritesFillValuesAsZarrPythonDoes) {
  auto fill_json = [](DType dtype, FillValue fill) {
    ZarrMetadata metadata = Basic();
    metadata.dtype = dtype;
    metadata.fill_value = fill;
    return Json::parse(ZarrMetadataToJson(metadata))["fill_value"].dump();
  };
  EXPECT_EQ(fill_json(float64, std::numeric_limits<double>::quiet_NaN()), "\"NaN\"");
  EXPECT_EQ(fill_json(float32, std::numeric_limits<double>::infinity()), "\"Infinity\"");
  EXPECT_EQ(fill_json(float64, -std::numeric_limits<double>::infinity()), "\"-Infinity\"");
  EXPECT_EQ(fill_json(float64, 1.5), "1.5");
  EXPECT_EQ(fill_json(float64, std::int64_t{3}), "3.0");
  EXPECT_EQ(fill_json(int32, std::int64_t{-3}), "-3");
  EXPECT_EQ(fill_json(int32, 7.0), "7");  // an integral double for an int dtype
  EXPECT_EQ(fill_json(uint64, std::numeric_limits<std::uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(fill_json(bool_, true), "true");
  EXPECT_EQ(fill_json(bool_, std::int64_t{0}), "false");
  EXPECT_EQ(fill_json(bool_, 1.0), "true");  // a bool array holds (value != 0)
  EXPECT_EQ(fill_json(bool_, 0.0), "false");
  EXPECT_EQ(fill_json(int8, std::monostate{}), "null");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(fill_json(complex128, std::complex<double>(1.5, -2)), "[1.5,-2.0]");
  EXPECT_EQ(fill_json(complex64, std::complex<double>(nan, nan)), "[\"NaN\",\"NaN\"]");
  EXPECT_EQ(fill_json(complex64, 3.0), "[3.0,0.0]");  // a real fill for a complex dtype
  EXPECT_EQ(fill_json(float64, std::complex<double>(2.5, 0)), "2.5");
}

TEST(ZarrMetadataToJsonTest, UnknownCodecIdCannotBeWritten) {
  ZarrMetadata metadata = Basic();
  metadata.compressor = CodecConfig{.id = "lzma"};
  EXPECT_THROW(ZarrMetadataToJson(metadata), InvalidArgument);
}

// ---- round trips -------------------------------------------------------------------

void ExpectRoundTrip(const ZarrMetadata& metadata) {
  const std::string text = ZarrMetadataToJson(metadata);
  ZarrMetadata back = ParseZarrMetadata(text, kWhere);
  EXPECT_TRUE(SameMetadata(back, metadata)) << text;
  EXPECT_EQ(ZarrMetadataToJson(back), text);
}

TEST(ZarrMetadataRoundTripTest, HandPickedConfigurations) {
  std::vector<ZarrMetadata> cases;
  cases.push_back(Basic());
  {
    ZarrMetadata m;  // 0-d, uncompressed bool
    m.dtype = bool_;
    m.fill_value = true;
    cases.push_back(m);
  }
  {
    ZarrMetadata m;
    m.shape = {4, 5, 6};
    m.chunks = {2, 5, 3};
    m.dtype = int16;
    m.byte_order = ByteOrder::kBig;
    m.order = 'F';
    m.fill_value = std::int64_t{-7};
    m.compressor = Lz4(2);
    m.dimension_separator = '/';
    cases.push_back(m);
  }
  {
    ZarrMetadata m;
    m.shape = {0, 3};
    m.chunks = {1, 1000};
    m.dtype = uint64;
    m.fill_value = std::numeric_limits<std::uint64_t>::max();
    m.compressor = Leveled("zstd", -5);
    m.filters = {Leveled("zlib", 1), Blosc("zstd", 9, 2, 4096)};
    cases.push_back(m);
  }
  {
    ZarrMetadata m;
    m.shape = {7};
    m.chunks = {3};
    m.dtype = float32;
    m.fill_value = std::numeric_limits<double>::quiet_NaN();
    m.compressor = Blosc("blosclz", 0, -1);
    cases.push_back(m);
  }
  {
    ZarrMetadata m;
    m.shape = {1 << 20};
    m.chunks = {1 << 16};
    m.dtype = int64;
    m.fill_value = std::numeric_limits<std::int64_t>::min();
    m.compressor = Leveled("gzip", -1);
    cases.push_back(m);
  }
  {
    ZarrMetadata m = Basic();
    m.fill_value = std::monostate{};
    m.dtype = uint8;
    cases.push_back(m);
  }
  {
    ZarrMetadata m = Basic();
    m.fill_value = 5e-324;  // the smallest denormal survives the text round trip
    cases.push_back(m);
  }
  {
    ZarrMetadata m = Basic();
    m.fill_value = -0.0;
    m.dtype = float32;
    m.byte_order = ByteOrder::kBig;
    cases.push_back(m);
  }
  for (const ZarrMetadata& metadata : cases) ExpectRoundTrip(metadata);
}

// What ZarrArray::Create accepts (EncodeFillElement) is written so that the parser reads
// back the same element.
TEST(ZarrMetadataRoundTripTest, EveryEncodableFillValueReadsBackAsTheSameElement) {
  const std::vector<FillValue> fills = {std::monostate{},
                                        true,
                                        false,
                                        std::int64_t{0},
                                        std::int64_t{1},
                                        std::int64_t{-1},
                                        std::int64_t{127},
                                        std::int64_t{300},
                                        std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::uint64_t>::max(),
                                        0.0,
                                        -0.0,
                                        0.5,
                                        1.0,
                                        -128.0,
                                        3e38,
                                        1e300,
                                        std::numeric_limits<double>::quiet_NaN(),
                                        -std::numeric_limits<double>::infinity()};
  for (DType dtype :
       {bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64}) {
    for (std::size_t index = 0; index < fills.size(); ++index) {
      SCOPED_TRACE(std::string(dtype.name()) + " fill #" + std::to_string(index));
      const auto itemsize = static_cast<std::size_t>(dtype.itemsize());
      std::array<std::byte, 8> element{};
      try {
        EncodeFillElement(fills[index], dtype, std::span(element).first(itemsize));
      } catch (const InvalidArgument&) {
        continue;  // Create refuses it
      }
      ZarrMetadata metadata = Basic();
      metadata.dtype = dtype;
      metadata.fill_value = fills[index];
      const std::string text = ZarrMetadataToJson(metadata);
      std::array<std::byte, 8> back{};
      EncodeFillElement(ParseZarrMetadata(text, kWhere).fill_value, dtype,
                        std::span(back).first(itemsize));
      EXPECT_EQ(back, element) << text;
    }
  }
}

// Random metadata of every kind; replay a failure with TESSERA_TEST_SEED.
TEST(ZarrMetadataRoundTripTest, RandomConfigurations) {
  std::mt19937_64 random(testing::TestSeed());
  auto pick = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(random);
  };
  const std::vector<DType> dtypes = {bool_,  int8,   int16,   int32,   int64,     uint8,     uint16,
                                     uint32, uint64, float32, float64, complex64, complex128};
  auto random_codec = [&]() -> CodecConfig {
    switch (pick(0, 4)) {
      case 0: {
        const char* cnames[] = {"lz4", "lz4hc", "zstd", "blosclz", "zlib"};
        return Blosc(cnames[pick(0, 4)], static_cast<int>(pick(0, 9)),
                     static_cast<int>(pick(-1, 2)),
                     static_cast<int>(pick(0, 1) * pick(0, 1 << 20)));
      }
      case 1:
        return Leveled("zstd", static_cast<int>(pick(-131072, 22)));
      case 2:
        return Lz4(static_cast<int>(pick(1, 65537)));
      case 3:
        return Leveled("zlib", static_cast<int>(pick(-1, 9)));
      default:
        return Leveled("gzip", static_cast<int>(pick(-1, 9)));
    }
  };
  auto random_fill = [&](DType dtype) -> FillValue {
    if (pick(0, 9) == 0) return std::monostate{};
    switch (dtype.kind()) {
      case DTypeKind::kBool:
        return pick(0, 1) == 1;
      case DTypeKind::kSignedInt: {
        const std::int64_t bits = dtype.itemsize() * 8 - 1;
        const std::int64_t max =
            bits == 63 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << bits) - 1;
        return pick(-max - 1, max);
      }
      case DTypeKind::kUnsignedInt: {
        if (dtype == uint64 && pick(0, 1) == 1) {
          return static_cast<std::uint64_t>(pick(0, std::numeric_limits<std::int64_t>::max())) |
                 (std::uint64_t{1} << 63);
        }
        const std::int64_t bits = std::min<std::int64_t>(dtype.itemsize() * 8, 63);
        return pick(0, bits == 63 ? std::numeric_limits<std::int64_t>::max()
                                  : (std::int64_t{1} << bits) - 1);
      }
      case DTypeKind::kComplex:  // [real, imaginary], both exact in float32
        return std::complex<double>(static_cast<double>(pick(-1000, 1000)) / 8,
                                    static_cast<double>(pick(-1000, 1000)) / 4);
      case DTypeKind::kFloat:
        break;
    }
    switch (pick(0, 5)) {
      case 0:
        return std::numeric_limits<double>::quiet_NaN();
      case 1:
        return pick(0, 1) == 1 ? std::numeric_limits<double>::infinity()
                               : -std::numeric_limits<double>::infinity();
      case 2:
        return static_cast<double>(pick(-1000, 1000));
      default: {
        double number = 0;
        do {
          std::uint64_t bits = random();
          std::memcpy(&number, &bits, sizeof(number));
        } while (!std::isfinite(number) ||
                 (dtype == float32 &&
                  std::fabs(number) > static_cast<double>(std::numeric_limits<float>::max())));
        return number;
      }
    }
  };
  for (int trial = 0; trial < 2000; ++trial) {
    ZarrMetadata m;
    const auto ndim = static_cast<std::size_t>(pick(0, 4));
    m.shape.resize(ndim);
    m.chunks.resize(ndim);
    for (std::size_t dim = 0; dim < ndim; ++dim) {
      m.shape[dim] = pick(0, 500);  // 4 dims of 510-element float64 chunks stay under 2^40 bytes
      m.chunks[dim] = pick(1, m.shape[dim] + 10);
    }
    m.dtype = dtypes[static_cast<std::size_t>(pick(0, 12))];
    m.byte_order = m.dtype.itemsize() > 1 && pick(0, 1) == 1 ? ByteOrder::kBig : ByteOrder::kLittle;
    m.order = pick(0, 1) == 1 ? 'F' : 'C';
    m.fill_value = random_fill(m.dtype);
    if (pick(0, 3) > 0) m.compressor = random_codec();
    for (std::int64_t filter = pick(0, 2); filter > 0; --filter)
      m.filters.push_back(random_codec());
    m.dimension_separator = pick(0, 1) == 1 ? '/' : '.';
    SCOPED_TRACE("trial " + std::to_string(trial));
    ExpectRoundTrip(m);
    if (HasFatalFailure() || HasNonfatalFailure()) break;
  }
}

// ---- documents written by zarr-python ----------------------------------------------

ZarrMetadata ParseFixture(const std::string& name) {
  const fs::path path = TestdataDir() / (name + ".zarray");
  return ParseZarrMetadata(ReadFile(path), path.string());
}

TEST(ZarrPythonFixturesTest, DefaultBloscFloat64) {
  ZarrMetadata m = ParseFixture("f8_blosc_default");
  EXPECT_TRUE(SameMetadata(m, Basic()));
  EXPECT_EQ(m.dimension_separator, '.');  // zarr-python 2.13 leaves the key out
  EXPECT_EQ(m.grid().grid_shape(), (Shape{10, 2}));
  EXPECT_EQ(m.chunk_nbytes(), 10 * 25 * 8);
}

// zarr-python writes a complex fill value as [real, imaginary].
TEST(ZarrPythonFixturesTest, Complex128WithItsFillValuePair) {
  ZarrMetadata m = ParseFixture("c16_blosc");
  EXPECT_EQ(m.dtype, complex128);
  EXPECT_EQ(m.byte_order, ByteOrder::kLittle);
  EXPECT_EQ(m.fill_value, FillValue(std::complex<double>(0.0, 0.0)));
  EXPECT_EQ(m.chunk_nbytes(), 2 * 16);
  EXPECT_EQ(Json::parse(ZarrMetadataToJson(m))["fill_value"], Json::parse("[0.0, 0.0]"));
}

TEST(ZarrPythonFixturesTest, NanZstdFloat32) {
  ZarrMetadata m = ParseFixture("f4_nan_zstd");
  EXPECT_EQ(m.dtype, float32);
  EXPECT_TRUE(IsNan(m.fill_value));
  EXPECT_EQ(m.compressor, Leveled("zstd", 3));
  EXPECT_EQ(m.shape, Shape{7});
  EXPECT_EQ(m.chunks, Shape{3});
}

TEST(ZarrPythonFixturesTest, BigEndianLz4FortranOrder) {
  ZarrMetadata m = ParseFixture("i2_bigendian_lz4_f_order");
  EXPECT_EQ(m.dtype, int16);
  EXPECT_EQ(m.byte_order, ByteOrder::kBig);
  EXPECT_EQ(m.order, 'F');
  EXPECT_EQ(m.fill_value, FillValue(std::int64_t{-7}));
  EXPECT_EQ(m.compressor, Lz4(2));
  EXPECT_EQ(m.shape, (Shape{4, 5, 6}));
  EXPECT_EQ(m.chunks, (Shape{2, 5, 3}));
}

TEST(ZarrPythonFixturesTest, Uint64MaxZlibSlashSeparator) {
  ZarrMetadata m = ParseFixture("u8_max_zlib_slash");
  EXPECT_EQ(m.dtype, uint64);
  EXPECT_EQ(m.fill_value, FillValue(std::numeric_limits<std::uint64_t>::max()));
  EXPECT_EQ(m.compressor, Leveled("zlib", 6));
  EXPECT_EQ(m.dimension_separator, '/');
}

TEST(ZarrPythonFixturesTest, UncompressedZeroDimensionalBool) {
  ZarrMetadata m = ParseFixture("b1_uncompressed_0d");
  EXPECT_EQ(m.dtype, bool_);
  EXPECT_TRUE(m.shape.empty());
  EXPECT_TRUE(m.chunks.empty());
  EXPECT_EQ(m.fill_value, FillValue(true));
  EXPECT_FALSE(m.compressor.has_value());
  EXPECT_EQ(m.grid().num_blocks(), 1);
  EXPECT_EQ(m.chunk_nbytes(), 1);
}

TEST(ZarrPythonFixturesTest, GzipWithZlibFilterAndNullFill) {
  ZarrMetadata m = ParseFixture("i8_gzip_zlib_filter");
  EXPECT_EQ(m.dtype, int64);
  EXPECT_EQ(m.fill_value, FillValue(std::monostate{}));
  EXPECT_EQ(m.compressor, Leveled("gzip", 5));
  EXPECT_EQ(m.filters, std::vector<CodecConfig>{Leveled("zlib", 1)});
}

TEST(ZarrPythonFixturesTest, BloscZstdBitshuffleUint8) {
  ZarrMetadata m = ParseFixture("u1_blosc_zstd_bitshuffle");
  EXPECT_EQ(m.dtype, uint8);
  EXPECT_EQ(m.fill_value, FillValue(std::int64_t{255}));
  EXPECT_EQ(m.compressor, Blosc("zstd", 9, 2, 4096));
}

TEST(ZarrPythonFixturesTest, NegativeInfinityAutoshuffle) {
  ZarrMetadata m = ParseFixture("f8_neg_inf_autoshuffle_dot");
  EXPECT_EQ(m.byte_order, ByteOrder::kBig);
  EXPECT_EQ(m.fill_value, FillValue(-std::numeric_limits<double>::infinity()));
  EXPECT_EQ(m.compressor, Blosc("lz4", 5, -1));  // AUTOSHUFFLE is kept for the codec
}

TEST(ZarrPythonFixturesTest, ChunkLargerThanShapeAndEmptyShape) {
  ZarrMetadata small = ParseFixture("i1_chunk_larger_than_shape");
  EXPECT_EQ(small.fill_value, FillValue(std::int64_t{-128}));
  EXPECT_EQ(small.grid().num_blocks(), 1);
  ZarrMetadata empty = ParseFixture("u4_empty_shape");
  EXPECT_EQ(empty.grid().num_blocks(), 0);
  EXPECT_EQ(empty.fill_value, FillValue(std::int64_t{0}));
}

// Where zarr-python wrote every key (dimension_separator included), our writer
// reproduces its document byte for byte.
TEST(ZarrPythonFixturesTest, WriterReproducesZarrPythonText) {
  int compared = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(TestdataDir())) {
    if (entry.path().extension() != ".zarray") continue;
    if (entry.path().filename().string().starts_with("unsupported")) continue;
    const std::string text = ReadFile(entry.path());
    ZarrMetadata m = ParseZarrMetadata(text, entry.path().string());
    if (text.find("dimension_separator") == std::string::npos) continue;
    EXPECT_EQ(ZarrMetadataToJson(m), text) << entry.path();
    ++compared;
  }
  EXPECT_GE(compared, 3);
}

// zarr-python's float16 ("<f2") is held as float32, stored as float16.
TEST(ZarrPythonFixturesTest, HalfFloatsAreAStorageType) {
  const fs::path path = TestdataDir() / "f2_blosc.zarray";
  const ZarrMetadata metadata = ParseZarrMetadata(ReadFile(path), path.string());
  EXPECT_EQ(metadata.dtype, float32);
  EXPECT_TRUE(metadata.float16_storage);
  EXPECT_EQ(metadata.byte_order, ByteOrder::kLittle);
  EXPECT_NE(ZarrMetadataToJson(metadata).find("\"<f2\""), std::string::npos);
  EXPECT_EQ(ParseZarrMetadata(ZarrMetadataToJson(metadata), "round trip"), metadata);
}

TEST(ZarrPythonFixturesTest, UnsupportedArraysAreRejectedClearly) {
  struct Case {
    std::string name;
    std::string key;
    std::string mention;
  };
  for (const Case& c : std::vector<Case>{{"unsupported_delta_filter", "filters[0].id", "delta"},
                                         {"unsupported_datetime", "dtype", "<M8[ns]"},
                                         {"unsupported_bytes", "dtype", "|S10"}}) {
    const fs::path path = TestdataDir() / (c.name + ".zarray");
    try {
      ParseZarrMetadata(ReadFile(path), path.string());
      ADD_FAILURE() << c.name << " was accepted";
    } catch (const FormatError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(path.string()), std::string::npos) << message;
      EXPECT_NE(message.find("key \"" + c.key + "\""), std::string::npos) << message;
      EXPECT_NE(message.find(c.mention), std::string::npos) << message;
    }
  }
}

TEST(ZarrPythonFixturesTest, Attributes) {
  const fs::path path = TestdataDir() / "f8_blosc_default.zattrs";
  ZarrAttributes attributes = ParseZarrAttributes(ReadFile(path), path.string());
  EXPECT_EQ(attributes.dimension_names, (std::vector<std::string>{"y", "x"}));
  Json other = Json::parse(attributes.other_json);
  EXPECT_FALSE(other.contains("_ARRAY_DIMENSIONS"));
  EXPECT_EQ(other["units"], "K");
  EXPECT_EQ(other["long_name"], "2 m temperature \xc2\xb0");
  EXPECT_EQ(ZarrAttributesToJson(attributes), ReadFile(path));
}

// ---- live interoperability with zarr-python ----------------------------------------

// Zarr-python and numcodecs are installed for the system interpreter only.
constexpr const char* kPython = "/usr/bin/python3";

bool HaveZarrPython() {
  static const bool have = [] {
    const std::string command = std::string(kPython) + " -c 'import zarr, numcodecs' 2>/dev/null";
    return fs::exists(kPython) && std::system(command.c_str()) == 0;
  }();
  return have;
}

using testing::TempDir;

int RunPython(const fs::path& script_path, const std::string& script, const fs::path& argument) {
  std::ofstream(script_path) << script;
  const std::string command =
      std::string(kPython) + " " + script_path.string() + " " + argument.string();
  return std::system(command.c_str());
}

TEST(ZarrPythonLiveTest, ParsesWhatZarrPythonWritesNow) {
  if (!HaveZarrPython()) GTEST_SKIP() << "needs zarr-python for " << kPython;
  TempDir temp;
  const std::string script = R"(
import sys, numpy as np, numcodecs, zarr
root = sys.argv[1]
zarr.open(root + "/a.zarr", mode="w", shape=(20, 30), chunks=(7, 8), dtype="<i4", fill_value=-1,
          compressor=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE))
zarr.open(root + "/b.zarr", mode="w", shape=(5,), chunks=(5,), dtype=">f8", fill_value=np.nan,
          compressor=numcodecs.GZip(level=9), order="F", dimension_separator="/")
zarr.open(root + "/c.zarr", mode="w", shape=(3, 3, 3), chunks=(1, 2, 3), dtype="|u1",
          fill_value=None, compressor=None, filters=[numcodecs.Zstd(level=-2), numcodecs.LZ4()])
)";
  ASSERT_EQ(RunPython(temp.path() / "make.py", script, temp.path()), 0);

  ZarrMetadata a = ParseZarrMetadata(ReadFile(temp.path() / "a.zarr/.zarray"), "a");
  EXPECT_EQ(a.dtype, int32);
  EXPECT_EQ(a.shape, (Shape{20, 30}));
  EXPECT_EQ(a.chunks, (Shape{7, 8}));
  EXPECT_EQ(a.fill_value, FillValue(std::int64_t{-1}));
  EXPECT_EQ(a.compressor, Blosc("zstd", 3, 2));

  ZarrMetadata b = ParseZarrMetadata(ReadFile(temp.path() / "b.zarr/.zarray"), "b");
  EXPECT_EQ(b.dtype, float64);
  EXPECT_EQ(b.byte_order, ByteOrder::kBig);
  EXPECT_TRUE(IsNan(b.fill_value));
  EXPECT_EQ(b.compressor, Leveled("gzip", 9));
  EXPECT_EQ(b.order, 'F');
  EXPECT_EQ(b.dimension_separator, '/');

  ZarrMetadata c = ParseZarrMetadata(ReadFile(temp.path() / "c.zarr/.zarray"), "c");
  EXPECT_EQ(c.dtype, uint8);
  EXPECT_EQ(c.fill_value, FillValue(std::monostate{}));
  EXPECT_FALSE(c.compressor.has_value());
  EXPECT_EQ(c.filters, (std::vector<CodecConfig>{Leveled("zstd", -2), Lz4(1)}));
}

TEST(ZarrPythonLiveTest, ZarrPythonReadsWhatWeWrite) {
  if (!HaveZarrPython()) GTEST_SKIP() << "needs zarr-python for " << kPython;
  TempDir temp;
  std::vector<ZarrMetadata> cases = {Basic()};
  {
    ZarrMetadata m;
    m.shape = {9, 4};
    m.chunks = {2, 4};
    m.dtype = uint16;
    m.byte_order = ByteOrder::kBig;
    m.order = 'F';
    m.fill_value = std::int64_t{65535};
    m.compressor = Leveled("zstd", 5);
    m.filters = {Leveled("zlib", 3)};
    m.dimension_separator = '/';
    cases.push_back(m);
  }
  {
    ZarrMetadata m;
    m.dtype = float32;
    m.fill_value = -std::numeric_limits<double>::infinity();
    m.compressor = Lz4(3);
    cases.push_back(m);
  }
  {
    ZarrMetadata m;
    m.shape = {10};
    m.chunks = {4};
    m.dtype = bool_;
    m.fill_value = true;
    m.compressor = Blosc("blosclz", 1, 0, 256);
    cases.push_back(m);
  }
  for (std::size_t index = 0; index < cases.size(); ++index) {
    fs::create_directories(temp.path() / std::to_string(index));
    std::ofstream(temp.path() / std::to_string(index) / ".zarray")
        << ZarrMetadataToJson(cases[index]);
  }
  // zarr-python opens each array and reports what it understood, as JSON.
  const std::string script = R"(
import json, math, os, sys, zarr
root = sys.argv[1]
seen = []
for index in range(len([d for d in os.listdir(root) if d.isdigit()])):
    z = zarr.open(os.path.join(root, str(index)), mode="r")
    fill = z.fill_value
    if fill is not None:
        fill = getattr(fill, "item", lambda: fill)()
        if isinstance(fill, float) and math.isnan(fill): fill = "NaN"
        elif isinstance(fill, float) and math.isinf(fill): fill = "Infinity" if fill > 0 else "-Infinity"
    seen.append({"shape": list(z.shape), "chunks": list(z.chunks), "dtype": z.dtype.str,
                 "order": z.order, "fill_value": fill,
                 "compressor": z.compressor.get_config() if z.compressor else None,
                 "filters": [f.get_config() for f in (z.filters or [])],
                 "dimension_separator": z._dimension_separator or "."})
with open(os.path.join(root, "seen.json"), "w") as out:
    json.dump(seen, out)
)";
  ASSERT_EQ(RunPython(temp.path() / "read.py", script, temp.path()), 0);
  Json seen = Json::parse(ReadFile(temp.path() / "seen.json"));
  ASSERT_EQ(seen.size(), cases.size());
  for (std::size_t index = 0; index < cases.size(); ++index) {
    SCOPED_TRACE("case " + std::to_string(index));
    Json ours = Json::parse(ZarrMetadataToJson(cases[index]));
    EXPECT_EQ(seen[index]["shape"], ours["shape"]);
    EXPECT_EQ(seen[index]["chunks"], ours["chunks"]);
    EXPECT_EQ(seen[index]["dtype"], ours["dtype"]);
    EXPECT_EQ(seen[index]["order"], ours["order"]);
    EXPECT_EQ(seen[index]["fill_value"], ours["fill_value"]);
    EXPECT_EQ(seen[index]["compressor"], ours["compressor"]);
    EXPECT_EQ(seen[index]["filters"], ours["filters"].is_null() ? Json::array() : ours["filters"]);
    EXPECT_EQ(seen[index]["dimension_separator"], ours["dimension_separator"]);
  }
}

// ---- malformed documents -----------------------------------------------------------

// A valid document with one key replaced (or removed, for a discarded value).
std::string WithKey(const std::string& key, const std::string& value_json) {
  Json document = Json::parse(ZarrMetadataToJson(Basic()));
  if (value_json.empty()) {
    document.erase(key);
  } else {
    document[key] = Json::parse(value_json);
  }
  return document.dump();
}

struct BadDocument {
  std::string label;
  std::string json;
  std::string key;     // the key the message must name
  std::string detail;  // more text the message must contain (may be empty)
};

std::vector<BadDocument> BadDocuments() {
  std::vector<BadDocument> cases;
  auto add = [&cases](const std::string& key, const std::string& value,
                      const std::string& shown_key = "", const std::string& detail = "") {
    cases.push_back({key + " = " + (value.empty() ? "<missing>" : value), WithKey(key, value),
                     shown_key.empty() ? key : shown_key, detail});
  };
  for (const char* key : {"zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value",
                          "order", "filters"}) {
    add(key, "");  // missing
  }
  for (const char* value : {"3", "1", "\"2\"", "2.0", "null", "[2]"}) add("zarr_format", value);
  for (const char* value : {"\"10\"", "10", "[100, \"a\"]", "[100, 1.5]", "[-1, 50]", "{}", "null",
                            "[100, true]", "[9223372036854775808, 1]"}) {
    add("shape", value);
  }
  for (const char* value : {"[0, 5]", "[-5, 5]", "[10]", "[10, 5, 5]", "\"5\"", "[10, 5.0]",
                            "[10, true]", "null", "[]"}) {
    add("chunks", value);
  }
  for (const char* value :
       {"8", "null", "\"<c32\"", "\"<M8[ns]\"", "\"|S10\"", "\"<f3\"", "\"|i2\"", "\"float64\"",
        "\"<f8 \"", "\"\"", "[\"<f8\"]", "\"<U4\"", "\"O\""}) {
    add("dtype", value);
  }
  for (const char* value : {"\"zstd\"", "5", "[]", "true"}) add("compressor", value);
  add("compressor", R"({"id": "lzma"})", "compressor.id");
  add("compressor", R"({"id": "delta", "dtype": "<f8"})", "compressor.id");
  add("compressor", R"({"level": 1})", "compressor.id");
  add("compressor", R"({"id": 5})", "compressor.id");
  add("compressor", R"({"id": null})", "compressor.id");
  // Parameters of the right JSON type that the codec layer rejects: the message names
  // the codec object and gives the codec layer's reason.
  add("compressor", R"({"id": "blosc", "clevel": 10})", "compressor", "level must be 0..9, got 10");
  add("compressor", R"({"id": "blosc", "clevel": -1})", "compressor", "got -1");
  add("compressor", R"({"id": "blosc", "clevel": "5"})", "compressor.clevel");
  add("compressor", R"({"id": "blosc", "clevel": 5.0})", "compressor.clevel");
  add("compressor", R"({"id": "blosc", "cname": "snappy"})", "compressor", "'snappy'");
  add("compressor", R"({"id": "blosc", "cname": 1})", "compressor.cname");
  add("compressor", R"({"id": "blosc", "shuffle": 3})", "compressor", "shuffle must be");
  add("compressor", R"({"id": "blosc", "shuffle": -2})", "compressor", "got -2");
  add("compressor", R"({"id": "blosc", "blocksize": -1})", "compressor", "blocksize");
  add("compressor", R"({"id": "blosc", "blocksize": 4294967296})", "compressor.blocksize",
      "32 bits");
  add("compressor", R"({"id": "zstd", "level": 23})", "compressor", "zstd level");
  add("compressor", R"({"id": "zstd", "level": -200000})", "compressor", "got -200000");
  add("compressor", R"({"id": "lz4", "acceleration": 0})", "compressor", "acceleration");
  add("compressor", R"({"id": "lz4", "acceleration": null})", "compressor.acceleration");
  add("compressor", R"({"id": "zlib", "level": 10})", "compressor", "zlib level");
  add("compressor", R"({"id": "gzip", "level": 1.5})", "compressor.level");
  add("compressor", R"({"id": "gzip", "level": 18446744073709551615})", "compressor.level");
  for (const char* value : {"\"zlib\"", "5", "{}", "true"}) add("filters", value);
  add("filters", R"([{"id": "delta", "dtype": "<f8"}])", "filters[0].id");
  add("filters", R"([{"id": "zlib", "level": 1}, 5])", "filters[1]");
  add("filters", R"([{"id": "zlib", "level": 11}])", "filters[0]", "got 11");
  for (const char* value : {"\"X\"", "\"c\"", "1", "null", "\"CF\"", "\"\""}) add("order", value);
  for (const char* value : {"\"-\"", "\"\"", "1", "\"//\"", "\"\\\\\"", "[\".\"]"}) {
    add("dimension_separator", value);
  }
  // fill_value of the wrong kind for the dtype (the base dtype is <f8).
  for (const char* value : {"\"foo\"", "\"nan\"", "\"inf\"", "true", "[1]", "{}", "\"\""}) {
    add("fill_value", value);
  }
  auto add_typed = [&cases](const std::string& dtype, const std::string& fill) {
    Json document = Json::parse(ZarrMetadataToJson(Basic()));
    document["dtype"] = dtype;
    document["fill_value"] = Json::parse(fill);
    cases.push_back({"fill_value " + fill + " for " + dtype, document.dump(), "fill_value", ""});
  };
  for (const char* fill :
       {"1.5", "\"NaN\"", "\"Infinity\"", "2147483648", "-2147483649", "true", "1e300", "\"1\""}) {
    add_typed("<i4", fill);
  }
  for (const char* fill : {"-1", "256", "255.5", "-0.5"}) add_typed("|u1", fill);
  for (const char* fill : {"-128.5", "128", "-129"}) add_typed("|i1", fill);
  for (const char* fill : {"-1", "18446744073709551616", "1e20", "\"NaN\""}) add_typed("<u8", fill);
  for (const char* fill : {"9223372036854775808", "-9223372036854775809", "9007199254740994.0"}) {
    add_typed("<i8", fill);
  }
  for (const char* fill : {"2", "-1", "\"true\"", "0.5", "\"NaN\""}) add_typed("|b1", fill);
  for (const char* fill : {"1e39", "-3.5e38"}) add_typed("<f4", fill);
  // Sizes that overflow or exceed the chunk cap.
  auto add_sizes = [&cases](const std::string& shape, const std::string& chunks,
                            const std::string& dtype, const std::string& key) {
    Json document = Json::parse(ZarrMetadataToJson(Basic()));
    document["shape"] = Json::parse(shape);
    document["chunks"] = Json::parse(chunks);
    document["dtype"] = dtype;
    cases.push_back(
        {"shape " + shape + " chunks " + chunks + " " + dtype, document.dump(), key, ""});
  };
  add_sizes("[4611686018427387904, 4]", "[1, 1]", "|u1", "shape");  // 2^62 * 4 elements
  add_sizes("[2305843009213693952]", "[1]", "<f8", "shape");        // 2^61 * 8 bytes
  add_sizes("[10, 10]", "[4294967296, 4294967296]", "|u1", "chunks");
  add_sizes("[10, 10, 10]", "[1048576, 1048576, 2]", "<f8", "chunks");  // 2^43 bytes
  add_sizes("[10]", "[1099511627777]", "|u1", "chunks");                // 2^40 + 1 bytes
  add_sizes("[9223372036854775807]", "[2]", "|u1", "chunks");           // grid rounding overflows
  return cases;
}

TEST(ZarrMetadataParseTest, EveryBadKeyIsAFormatErrorNamingDocumentAndKey) {
  const std::vector<BadDocument> cases = BadDocuments();
  EXPECT_GT(cases.size(), 120u);
  for (const BadDocument& bad : cases) {
    SCOPED_TRACE(bad.label);
    try {
      ParseZarrMetadata(bad.json, kWhere);
      ADD_FAILURE() << "accepted: " << bad.json;
    } catch (const FormatError& error) {
      const std::string message = error.what();
      EXPECT_TRUE(message.starts_with(std::string(kWhere) + ": key \"" + bad.key + "\": "))
          << message;
      EXPECT_NE(message.find("expected"), std::string::npos) << message;
      EXPECT_NE(message.find(", found "), std::string::npos) << message;
      EXPECT_NE(message.find(bad.detail), std::string::npos) << message;
    }
  }
}

TEST(ZarrMetadataParseTest, MessagesSayWhatWasExpectedAndFound) {
  auto message_of = [](const std::string& json) {
    try {
      ParseZarrMetadata(json, kWhere);
    } catch (const FormatError& error) {
      return std::string(error.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message_of(WithKey("chunks", "[10, 0]")),
            std::string(kWhere) +
                ": key \"chunks\": expected an array of 2 integers >= 1 (one per dimension of "
                "shape (100, 50)), found [10, 0]");
  EXPECT_EQ(message_of(WithKey("zarr_format", "3")),
            std::string(kWhere) + ": key \"zarr_format\": expected 2 (Zarr v2), found 3");
  EXPECT_EQ(message_of(WithKey("shape", "")),
            std::string(kWhere) +
                ": key \"shape\": expected an array of integers >= 0, found nothing (the key is "
                "missing)");
  const std::string dtype = message_of(WithKey("dtype", "\"<c32\""));
  EXPECT_NE(dtype.find("found \"<c32\""), std::string::npos) << dtype;
  EXPECT_NE(dtype.find("<f8"), std::string::npos) << dtype;  // lists what is supported
  const std::string codec = message_of(WithKey("compressor", R"({"id": "lzma"})"));
  EXPECT_NE(codec.find("blosc, zstd, lz4, zlib, gzip"), std::string::npos) << codec;
  EXPECT_NE(codec.find("found \"lzma\""), std::string::npos) << codec;
  const std::string cap = message_of(WithKey("chunks", "[1048576, 1048576]"));
  EXPECT_NE(cap.find("2^40"), std::string::npos) << cap;
}

TEST(ZarrMetadataParseTest, InvalidJsonIsAFormatErrorWithPosition) {
  for (const std::string& text :
       {std::string(""), std::string("{"), std::string("{\"zarr_format\": }"),
        std::string("{\"zarr_format\": 2,"), ZarrMetadataToJson(Basic()).substr(0, 120),
        std::string("{\"a\": 1e400}"), std::string("\xff"), std::string("{\"a\": \"\xc3\"}"),
        std::string("{} trailing")}) {
    SCOPED_TRACE(text);
    try {
      ParseZarrMetadata(text, kWhere);
      ADD_FAILURE() << "accepted";
    } catch (const FormatError& error) {
      const std::string message = error.what();
      EXPECT_TRUE(message.starts_with(std::string(kWhere) + ": invalid JSON")) << message;
    }
  }
  try {
    ParseZarrMetadata("{\"zarr_format\": 2, ]", kWhere);
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("at byte 20 of 20"), std::string::npos)
        << error.what();
  }
}

TEST(ZarrMetadataParseTest, TopLevelMustBeAnObject) {
  for (const char* text : {"[]", "2", "\"x\"", "null", "true", "[{\"zarr_format\": 2}]"}) {
    try {
      ParseZarrMetadata(text, kWhere);
      ADD_FAILURE() << "accepted " << text;
    } catch (const FormatError& error) {
      const std::string message = error.what();
      EXPECT_TRUE(message.starts_with(std::string(kWhere) + ": expected a JSON object")) << message;
    }
  }
}

TEST(ZarrMetadataParseTest, DeepNestingIsRejectedNotOverflowed) {
  std::string deep =
      "{\"zarr_format\": 2, \"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_THROW(ParseZarrMetadata(deep, kWhere), FormatError);
  EXPECT_THROW(ParseZarrAttributes(deep, kWhere), FormatError);
}

TEST(ZarrMetadataParseTest, LenientWhereZarrPythonIs) {
  // dimension_separator missing or null means "."; extra top-level and codec keys
  // (newer numcodecs add some) are ignored; codec keys left out take numcodecs'
  // defaults; integral floats are accepted as integer fill values.
  Json document = Json::parse(ZarrMetadataToJson(Basic()));
  document["dimension_separator"] = nullptr;
  document["attributes"] = {{"ignored", true}};
  document["compressor"] = {{"id", "zstd"}, {"checksum", false}};
  document["filters"] = Json::array();
  document["dtype"] = "<i2";
  document["fill_value"] = 3.0;
  ZarrMetadata m = ParseZarrMetadata(document.dump(), kWhere);
  EXPECT_EQ(m.dimension_separator, '.');
  EXPECT_EQ(m.compressor, Leveled("zstd", 1));
  EXPECT_TRUE(m.filters.empty());
  EXPECT_EQ(m.fill_value, FillValue(std::int64_t{3}));

  document["compressor"] = {{"id", "blosc"}};
  EXPECT_EQ(ParseZarrMetadata(document.dump(), kWhere).compressor, Blosc("lz4", 5, 1, 0));
  document["compressor"] = {{"id", "lz4"}};
  EXPECT_EQ(ParseZarrMetadata(document.dump(), kWhere).compressor, Lz4(1));
  document["compressor"] = {{"id", "gzip"}};
  EXPECT_EQ(ParseZarrMetadata(document.dump(), kWhere).compressor, Leveled("gzip", 1));
  // "<b1" and ">u1" mean the same as numpy's "|b1" and "|u1".
  document["dtype"] = "<b1";
  document["fill_value"] = false;
  EXPECT_EQ(ParseZarrMetadata(document.dump(), kWhere).dtype, bool_);
  document["dtype"] = ">u1";
  document["fill_value"] = 0;
  EXPECT_EQ(ParseZarrMetadata(document.dump(), kWhere).byte_order, ByteOrder::kLittle);
}

TEST(ZarrMetadataParseTest, LargestAcceptedSizes) {
  Json document = Json::parse(ZarrMetadataToJson(Basic()));
  document["dtype"] = "|u1";
  // The chunk grid computes shape + chunks - 1, so shape + chunks must fit.
  document["shape"] = {std::numeric_limits<std::int64_t>::max() - 1};
  document["chunks"] = {1};
  ZarrMetadata m = ParseZarrMetadata(document.dump(), kWhere);
  EXPECT_EQ(m.grid().num_blocks(), std::numeric_limits<std::int64_t>::max() - 1);
  document["shape"] = {std::numeric_limits<std::int64_t>::max()};
  EXPECT_THROW(ParseZarrMetadata(document.dump(), kWhere), FormatError);
  document["shape"] = {std::int64_t{1} << 40};
  document["chunks"] = {std::int64_t{1} << 40};  // exactly the 1 TiB cap
  EXPECT_EQ(ParseZarrMetadata(document.dump(), kWhere).chunk_nbytes(), std::int64_t{1} << 40);
}

// ---- sizes -------------------------------------------------------------------------

TEST(ZarrMetadataTest, ChunkNbytes) {
  ZarrMetadata m = Basic();
  EXPECT_EQ(m.chunk_nbytes(), 2000);
  m.dtype = int16;
  EXPECT_EQ(m.chunk_nbytes(), 500);
  m.chunks = {};
  m.shape = {};
  EXPECT_EQ(m.chunk_nbytes(), 2);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Resuming compares the metadata an interrupted run wrote with the new one: a NaN fill
// must equal itself, and fill values that are written differently must not be equal.
TEST(ZarrMetadataEqualityTest, ComparesFillValuesAsWritten) {
  ZarrMetadata a;
  a.shape = {4};
  a.chunks = {2};
  a.fill_value = std::numeric_limits<double>::quiet_NaN();
  ZarrMetadata b = a;
  EXPECT_EQ(a, b);
  b.fill_value = 0.0;
  EXPECT_NE(a, b);
  a.fill_value = -0.0;
  EXPECT_NE(a, b);
  a.fill_value = std::monostate{};
  EXPECT_NE(a, b);
  b.fill_value = std::monostate{};
  EXPECT_EQ(a, b);
  b.chunks = {3};
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace tessera
