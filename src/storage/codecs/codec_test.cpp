// Tests for the codecs layer, through the public interface (tessera/storage/codec.hpp):
//   1. round trips of every codec configuration over random and compressible data;
//   2. independent truth: numcodecs' encodings (testdata/, from make_fixtures.py) decode
//      to their raw bytes, and numcodecs decodes what we encode (check_decodes.py);
//   3. hostile input: truncated, mismatched and garbage frames throw FormatError;
//   4. the registry: MakeCodec, ParseCodecSpec, DescribeCodec;
//   5. one codec object shared by many threads.
// Random data comes from TESSERA_TEST_SEED (logged), so failures replay.
#include "tessera/storage/codec.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "little_endian.hpp"
#include "tessera/core/errors.hpp"
#include "test_seed.hpp"

namespace tessera {
namespace {

using Bytes = std::vector<std::byte>;

CodecConfig Blosc(const std::string& cname, int level, int shuffle, int blocksize = 0) {
  CodecConfig config;
  config.id = "blosc";
  config.cname = cname;
  config.level = level;
  config.shuffle = shuffle;
  config.blocksize = blocksize;
  return config;
}

CodecConfig Leveled(const std::string& id, int level) {
  CodecConfig config;
  config.id = id;
  config.level = level;
  return config;
}

CodecConfig Lz4(int acceleration) {
  CodecConfig config;
  config.id = "lz4";
  config.acceleration = acceleration;
  return config;
}

// Every blosc cname x shuffle mode, plus the other codecs at a few levels.
std::vector<CodecConfig> AllConfigs() {
  std::vector<CodecConfig> configs;
  for (const char* cname : {"lz4", "lz4hc", "zstd", "blosclz", "zlib"}) {
    for (int shuffle : {0, 1, 2, -1}) configs.push_back(Blosc(cname, 5, shuffle));
  }
  configs.push_back(Blosc("lz4", 0, 1));
  configs.push_back(Blosc("zstd", 9, 2));
  configs.push_back(Blosc("lz4", 1, 1, 4096));
  for (int level : {1, 3, -5, 19}) configs.push_back(Leveled("zstd", level));
  configs.push_back(Lz4(1));
  configs.push_back(Lz4(10));
  for (int level : {1, 9, -1}) configs.push_back(Leveled("zlib", level));
  for (int level : {1, 6}) configs.push_back(Leveled("gzip", level));
  return configs;
}

std::string TestName(const CodecConfig& config) {
  std::string name = DescribeCodec(config);
  std::string clean;
  for (char character : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(character)) != 0;
    if (keep)
      clean += character;
    else if (character == '-')
      clean += "minus";
    else if (!clean.empty() && clean.back() != '_')
      clean += '_';
  }
  while (!clean.empty() && clean.back() == '_') clean.pop_back();
  return clean;
}

Bytes RandomBytes(std::size_t size, std::mt19937_64& rng) {
  Bytes bytes(size);
  for (std::byte& value : bytes) value = static_cast<std::byte>(rng() & 0xFFu);
  return bytes;
}

// Slowly varying little-endian integers of `itemsize` bytes, cut to `size` bytes: the
// shape of real array chunks, compressible with or without shuffling.
Bytes CompressibleBytes(std::size_t size, std::size_t itemsize) {
  Bytes bytes(size);
  for (std::size_t index = 0; index < size; ++index) {
    const std::size_t item = index / itemsize;
    const std::size_t value = item / 16 + 1000;
    const std::size_t shift = 8 * (index % itemsize);
    bytes[index] = static_cast<std::byte>(shift < 64 ? (value >> shift) & 0xFFu : 0u);
  }
  return bytes;
}

// Float64 samples of a smooth function (like a simulation field).
Bytes SmoothFloat64(std::size_t count) {
  Bytes bytes(count * sizeof(double));
  for (std::size_t index = 0; index < count; ++index) {
    const double value = std::sin(static_cast<double>(index) * 1e-3) * 100.0;
    std::memcpy(bytes.data() + index * sizeof(double), &value, sizeof(double));
  }
  return bytes;
}

Bytes ToBytes(const Buffer& buffer) { return Bytes(buffer.data(), buffer.data() + buffer.size()); }

Bytes Decode(const Codec& codec, std::span<const std::byte> encoded, std::size_t size) {
  Buffer out(static_cast<std::int64_t>(size));
  codec.Decode(encoded, out.span());
  return ToBytes(out);
}

// Encodes, checks the size bound, decodes and compares.
void ExpectRoundTrip(const Codec& codec, const Bytes& raw, std::int64_t itemsize,
                     const std::string& what) {
  SCOPED_TRACE(DescribeCodec(codec.config()) + ", " + what + ", " + std::to_string(raw.size()) +
               " bytes, itemsize " + std::to_string(itemsize));
  const Buffer encoded = codec.Encode(raw, itemsize);
  EXPECT_LE(encoded.size(), codec.MaxEncodedSize(static_cast<std::int64_t>(raw.size())));
  EXPECT_TRUE(Decode(codec, encoded.span(), raw.size()) == raw) << "decoded bytes differ";
}

// ---- 1. Round trips ----------------------------------------------------------------------

class CodecRoundTrip : public ::testing::TestWithParam<CodecConfig> {};

TEST_P(CodecRoundTrip, RandomAndCompressibleDataOfEveryItemsize) {
  const std::unique_ptr<Codec> codec = MakeCodec(GetParam());
  EXPECT_EQ(codec->config(), GetParam());
  std::mt19937_64 rng(testing::TestSeed());
  for (std::int64_t itemsize : {1, 2, 4, 8}) {
    const auto width = static_cast<std::size_t>(itemsize);
    ExpectRoundTrip(*codec, RandomBytes(width * 5000, rng), itemsize, "random");
    ExpectRoundTrip(*codec, RandomBytes(width * 3001 + 3, rng), itemsize, "random, odd size");
    ExpectRoundTrip(*codec, RandomBytes(37, rng), itemsize, "random, tiny");
    const Bytes compressible = CompressibleBytes(width * 5000, width);
    ExpectRoundTrip(*codec, compressible, itemsize, "compressible");
    ExpectRoundTrip(*codec, CompressibleBytes(width * 3001 + 5, width), itemsize,
                    "compressible, odd size");
    const bool stores_verbatim = GetParam().id == "blosc" && GetParam().level == 0;
    if (!stores_verbatim) {
      EXPECT_LT(codec->Encode(compressible, itemsize).size(),
                static_cast<std::int64_t>(compressible.size()) / 2)
          << DescribeCodec(GetParam()) << " did not compress itemsize " << itemsize;
    }
  }
  // Several blosc blocks, several zlib/zstd internal blocks.
  ExpectRoundTrip(*codec, SmoothFloat64(100'000), 8, "smooth float64");
  // Itemsizes blosc cannot shuffle by (above 255) are compressed as bytes.
  ExpectRoundTrip(*codec, CompressibleBytes(300 * 40 + 1, 300), 300, "itemsize 300");
}

TEST_P(CodecRoundTrip, EmptyInput) {
  const std::unique_ptr<Codec> codec = MakeCodec(GetParam());
  for (std::int64_t itemsize : {1, 8}) ExpectRoundTrip(*codec, Bytes{}, itemsize, "empty");
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecRoundTrip, ::testing::ValuesIn(AllConfigs()),
                         [](const auto& param_info) { return TestName(param_info.param); });

TEST(BloscCodec, AutoShuffleResolvesByItemsize) {
  const std::unique_ptr<Codec> codec = MakeCodec(Blosc("lz4", 5, -1));
  const Bytes raw = CompressibleBytes(8000, 8);
  // Byte 2 of a blosc header holds the flags: 0x1 byte shuffle, 0x4 bit shuffle.
  const auto flags = [&](std::int64_t itemsize) {
    return std::to_integer<unsigned>(codec->Encode(raw, itemsize).data()[2]) & 0x5u;
  };
  EXPECT_EQ(flags(1), 0x4u);
  EXPECT_EQ(flags(2), 0x1u);
  EXPECT_EQ(flags(8), 0x1u);
}

TEST(BloscCodec, EncodeRejectsItemsizeBelowOne) {
  const std::unique_ptr<Codec> codec = MakeCodec(Blosc("lz4", 5, 1));
  const Bytes raw = CompressibleBytes(100, 1);
  EXPECT_THROW(codec->Encode(raw, 0), InvalidArgument);
}

TEST(Codec, MaxEncodedSizeRejectsNegativeSizes) {
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    EXPECT_THROW(codec->MaxEncodedSize(-1), InvalidArgument) << DescribeCodec(config);
    EXPECT_GT(codec->MaxEncodedSize(0), 0) << DescribeCodec(config);
    EXPECT_GE(codec->MaxEncodedSize(1 << 20), 1 << 20) << DescribeCodec(config);
  }
}

// ---- 2. numcodecs interoperability --------------------------------------------------------

const std::filesystem::path kTestdata = TESSERA_CODECS_TESTDATA;

Bytes ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open " + path.string());
  std::vector<char> chars((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  Bytes bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

void WriteFile(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!file) throw std::runtime_error("cannot write " + path.string());
}

// numcodecs' get_config() dicts <-> CodecConfig.
CodecConfig FromNumcodecs(const nlohmann::json& codec) {
  const std::string id = codec.at("id").get<std::string>();
  if (id == "blosc") {
    return Blosc(codec.at("cname").get<std::string>(), codec.at("clevel").get<int>(),
                 codec.at("shuffle").get<int>(), codec.at("blocksize").get<int>());
  }
  if (id == "lz4") return Lz4(codec.at("acceleration").get<int>());
  return Leveled(id, codec.at("level").get<int>());
}

nlohmann::json ToNumcodecs(const CodecConfig& config) {
  if (config.id == "blosc") {
    return {{"id", "blosc"},
            {"cname", config.cname},
            {"clevel", config.level},
            {"shuffle", config.shuffle},
            {"blocksize", config.blocksize}};
  }
  if (config.id == "lz4") return {{"id", "lz4"}, {"acceleration", config.acceleration}};
  return {{"id", config.id}, {"level", config.level}};
}

TEST(NumcodecsFixtures, DecodeToTheirRawBytes) {
  std::ifstream manifest_file(kTestdata / "fixtures.json");
  ASSERT_TRUE(manifest_file) << "missing " << (kTestdata / "fixtures.json")
                             << "; run testdata/make_fixtures.py";
  const nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  const nlohmann::json& fixtures = manifest.at("fixtures");
  ASSERT_GE(fixtures.size(), 30u);
  for (const nlohmann::json& fixture : fixtures) {
    const std::string name = fixture.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const CodecConfig config = FromNumcodecs(fixture.at("codec"));
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    const Bytes raw = ReadFile(kTestdata / fixture.at("raw").get<std::string>());
    const Bytes encoded = ReadFile(kTestdata / fixture.at("encoded").get<std::string>());
    EXPECT_TRUE(Decode(*codec, encoded, raw.size()) == raw) << "decoded bytes differ";
    // The same real frames into a chunk of the wrong size.
    EXPECT_THROW(Decode(*codec, encoded, raw.size() + 1), FormatError);
    if (!raw.empty()) {
      EXPECT_THROW(Decode(*codec, encoded, raw.size() - 1), FormatError);
    }
    // Our own encoding of the same input round-trips too.
    const auto itemsize = fixture.at("itemsize").get<std::int64_t>();
    EXPECT_TRUE(Decode(*codec, codec->Encode(raw, itemsize).span(), raw.size()) == raw);
  }
}

// Runs a shell command; returns its exit status, or -1 when it did not exit normally.
int RunCommand(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(NumcodecsFixtures, NumcodecsDecodesOurEncodings) {
  const std::string python = "/usr/bin/python3";
  const std::filesystem::path checker = kTestdata / "check_decodes.py";
  if (RunCommand(python + " -c 'import numcodecs' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << python << " cannot import numcodecs, the independent decoder";
  }
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tessera_codec_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);

  struct Input {
    std::string name;
    Bytes bytes;
    std::int64_t itemsize;
  };
  std::mt19937_64 rng(testing::TestSeed());
  const std::vector<Input> inputs = {
      {"smooth_f8", SmoothFloat64(2000), 8},
      {"counts_i4_odd", CompressibleBytes(4 * 1001 + 3, 4), 4},
      {"noise_u1", RandomBytes(3001, rng), 1},
      {"counts_i2", CompressibleBytes(2 * 2000, 2), 2},
      {"empty", Bytes{}, 1},
  };
  for (const Input& input : inputs) WriteFile(directory / (input.name + ".raw"), input.bytes);

  nlohmann::json fixtures = nlohmann::json::array();
  int index = 0;
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    for (const Input& input : inputs) {
      const std::string name = TestName(config) + "_" + input.name + "_" + std::to_string(index++);
      WriteFile(directory / (name + ".enc"), codec->Encode(input.bytes, input.itemsize).span());
      fixtures.push_back({{"name", name},
                          {"codec", ToNumcodecs(config)},
                          {"itemsize", input.itemsize},
                          {"raw", input.name + ".raw"},
                          {"encoded", name + ".enc"}});
    }
  }
  std::ofstream(directory / "fixtures.json") << nlohmann::json{{"fixtures", fixtures}}.dump(1);

  const int status = RunCommand(python + " " + checker.string() + " " + directory.string());
  if (status == 3) GTEST_SKIP() << "check_decodes.py could not import numcodecs";
  EXPECT_EQ(status, 0) << "numcodecs failed to decode some of our encodings (see stdout); "
                       << "they are kept in " << directory;
  if (status == 0) std::filesystem::remove_all(directory);
}

// ---- 3. Hostile input ---------------------------------------------------------------------

Bytes Encode(const CodecConfig& config, const Bytes& raw, std::int64_t itemsize = 8) {
  return ToBytes(MakeCodec(config)->Encode(raw, itemsize));
}

// Overwrites the 32-bit little-endian field at `offset` of a frame.
void StoreLittleEndian32(Bytes& bytes, std::size_t offset, std::uint32_t value) {
  ASSERT_LE(offset + codecs::kLittleEndian32Bytes, bytes.size());
  codecs::StoreLittleEndian32(value, bytes.data() + offset);
}

// Expects FormatError and that its message contains `needle`.
void ExpectFormatError(const Codec& codec, const Bytes& encoded, std::size_t out_size,
                       const std::string& needle = "") {
  try {
    Decode(codec, encoded, out_size);
    ADD_FAILURE() << DescribeCodec(codec.config()) << ": no FormatError for " << encoded.size()
                  << " encoded bytes into " << out_size;
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
        << "message '" << error.what() << "' lacks '" << needle << "'";
  }
}

TEST(CodecHostileInput, TruncatedFramesAreFormatErrors) {
  std::mt19937_64 rng(testing::TestSeed());
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    for (const Bytes& raw : {CompressibleBytes(20'000, 8), RandomBytes(5000, rng)}) {
      const Bytes encoded = Encode(config, raw);
      for (std::size_t keep :
           {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{10},
            std::size_t{16}, std::size_t{17}, encoded.size() / 2, encoded.size() - 1}) {
        if (keep >= encoded.size()) continue;
        SCOPED_TRACE(DescribeCodec(config) + ": first " + std::to_string(keep) + " of " +
                     std::to_string(encoded.size()) + " bytes");
        const Bytes truncated(encoded.begin(), encoded.begin() + static_cast<std::ptrdiff_t>(keep));
        EXPECT_THROW(Decode(*codec, truncated, raw.size()), FormatError);
      }
    }
  }
}

TEST(CodecHostileInput, ZeroLengthInputIsAFormatError) {
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    EXPECT_THROW(Decode(*codec, Bytes{}, 0), FormatError) << DescribeCodec(config);
    EXPECT_THROW(Decode(*codec, Bytes{}, 100), FormatError) << DescribeCodec(config);
  }
}

TEST(CodecHostileInput, GarbageIsAFormatError) {
  // Fixed seed: garbage is garbage, and a fixed sample keeps the test deterministic.
  std::mt19937_64 rng(12345);
  const std::vector<Bytes> garbage = {Bytes(64, std::byte{0xFF}), Bytes(64, std::byte{0}),
                                      RandomBytes(64, rng), RandomBytes(4096, rng)};
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    for (const Bytes& bytes : garbage) {
      EXPECT_THROW(Decode(*codec, bytes, 100), FormatError) << DescribeCodec(config);
      EXPECT_THROW(Decode(*codec, bytes, 10'000), FormatError) << DescribeCodec(config);
    }
  }
}

TEST(CodecHostileInput, WrongDecodedSizeIsAFormatError) {
  const Bytes raw = CompressibleBytes(10'000, 8);
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    const Bytes encoded = Encode(config, raw);
    ExpectFormatError(*codec, encoded, raw.size() - 1);
    ExpectFormatError(*codec, encoded, raw.size() + 1);
    ExpectFormatError(*codec, encoded, 0);
  }
}

// Random byte flips in a valid frame. Each decode either throws a FormatError whose
// message begins with the codec's name and says what it found (a figure), or returns the
// chunk's size in bytes. Where the format checks its payload (zlib's Adler-32, gzip's
// CRC-32) a decode that succeeds returns the original bytes; so does one whose flips all
// fall in bytes a decoder does not read for the chunk's values. Corruption in a header
// fields a decoder checks (blosc's sizes, lz4's 4-byte size) is always an error or
// harmless. Formats without
// a checksum (lz4 blocks, blosc, zstd frames without one) can decode a flipped payload
// to other bytes of the right size: counted and printed, since no decoder can tell.
TEST(CodecHostileInput, CorruptFramesThrowANamedFormatErrorOrDecodeTheOriginal) {
  std::mt19937_64 rng(testing::TestSeed());
  const Bytes raw = CompressibleBytes(20'000, 4);
  const std::regex figure("[0-9]");
  for (const CodecConfig& config : AllConfigs()) {
    SCOPED_TRACE(DescribeCodec(config));
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    const Bytes encoded = Encode(config, raw, 4);
    const bool checksummed = config.id == "zlib" || config.id == "gzip";
    // The header bytes the decoder checks against the chunk: blosc's nbytes, blocksize
    // and cbytes (bytes 4-15; its flags and typesize, bytes 2-3, only change how the
    // bytes are unshuffled), lz4's decoded size (bytes 0-3).
    const std::size_t header_start = config.id == "blosc" ? 4 : 0;
    const std::size_t header = config.id == "blosc" ? 12 : config.id == "lz4" ? 4 : 0;
    int errors = 0;
    int originals = 0;
    int different = 0;
    for (int trial = 0; trial < 200; ++trial) {
      Bytes corrupt = encoded;
      const std::size_t flips = 1 + rng() % 4;
      // One trial in four corrupts the header only.
      const bool in_header = header > 0 && trial % 4 == 0;
      for (std::size_t flip = 0; flip < flips; ++flip) {
        const std::size_t at = in_header ? header_start + rng() % header : rng() % corrupt.size();
        corrupt[at] ^= static_cast<std::byte>(1 + rng() % 255);
      }
      if (corrupt == encoded) continue;  // two flips undid each other
      try {
        const Bytes decoded = Decode(*codec, corrupt, raw.size());
        ASSERT_EQ(decoded.size(), raw.size()) << "trial " << trial;
        if (decoded == raw) {
          ++originals;
        } else {
          ++different;
          EXPECT_FALSE(checksummed) << "trial " << trial << ": a corrupt " << config.id
                                    << " stream passed its checksum with other bytes";
          EXPECT_FALSE(in_header) << "trial " << trial
                                  << ": a corrupt header decoded to other bytes";
        }
      } catch (const FormatError& error) {
        ++errors;
        const std::string message = error.what();
        EXPECT_EQ(message.rfind(config.id, 0), 0u)
            << "trial " << trial << ": the message does not name the codec: " << message;
        EXPECT_TRUE(std::regex_search(message, figure))
            << "trial " << trial << ": the message says no figure: " << message;
      }
    }
    EXPECT_GT(errors, 0) << "no corruption was ever detected";
    std::cout << "  " << DescribeCodec(config) << ": " << errors << " format errors, " << originals
              << " decoded as the original, " << different << " decoded to other bytes\n";
  }
}

TEST(BloscHostileInput, HeaderNbytesDifferentFromChunkSize) {
  const std::unique_ptr<Codec> codec = MakeCodec(Blosc("lz4", 5, 1));
  const Bytes raw = CompressibleBytes(1000, 8);
  const Bytes encoded = Encode(codec->config(), raw);
  ExpectFormatError(*codec, encoded, 999, "claims 1000 decoded bytes, expected 999");
  ExpectFormatError(*codec, encoded, 1001, "claims 1000 decoded bytes, expected 1001");
  Bytes lying = encoded;
  StoreLittleEndian32(lying, 4, 999);  // nbytes
  ExpectFormatError(*codec, lying, 1000, "claims 999 decoded bytes");
}

TEST(BloscHostileInput, HeaderCbytesDifferentFromChunkLength) {
  const std::unique_ptr<Codec> codec = MakeCodec(Blosc("zstd", 5, 2));
  const Bytes raw = CompressibleBytes(4000, 4);
  const Bytes encoded = Encode(codec->config(), raw, 4);
  const auto cbytes = static_cast<std::uint32_t>(encoded.size());
  for (std::uint32_t claimed : {cbytes - 1, cbytes + 1, 16u, 0xFFFFFFFFu}) {
    Bytes lying = encoded;
    StoreLittleEndian32(lying, 12, claimed);
    ExpectFormatError(*codec, lying, raw.size(), "compressed bytes");
  }
  Bytes padded = encoded;
  padded.push_back(std::byte{0});
  ExpectFormatError(*codec, padded, raw.size(), "truncated or padded");
}

TEST(BloscHostileInput, HeaderBlocksizeOrTypesizeOutOfRange) {
  const std::unique_ptr<Codec> codec = MakeCodec(Blosc("lz4", 5, 1));
  const Bytes raw = CompressibleBytes(4000, 4);
  const Bytes encoded = Encode(codec->config(), raw, 4);
  for (std::uint32_t blocksize : {0u, 4001u, 0x7FFFFFFFu}) {
    Bytes lying = encoded;
    StoreLittleEndian32(lying, 8, blocksize);
    ExpectFormatError(*codec, lying, raw.size(), "blocksize");
  }
  Bytes no_typesize = encoded;
  no_typesize[3] = std::byte{0};
  ExpectFormatError(*codec, no_typesize, raw.size(), "typesize");
}

TEST(BloscHostileInput, BlockOffsetsOutsideTheChunk) {
  const std::unique_ptr<Codec> codec = MakeCodec(Blosc("lz4", 5, 1));
  const Bytes raw = CompressibleBytes(100'000, 8);
  const Bytes encoded = Encode(codec->config(), raw);
  ASSERT_EQ(std::to_integer<unsigned>(encoded[2]) & 0x2u, 0u) << "expected a compressed frame";
  for (std::uint32_t offset : {0u, 19u, static_cast<std::uint32_t>(encoded.size()), 0xFFFFFFu}) {
    Bytes lying = encoded;
    StoreLittleEndian32(lying, 16, offset);  // the first block's start
    ExpectFormatError(*codec, lying, raw.size(), "blosc block 0 starts at byte");
  }
  // A header whose blocksize implies more block offsets than the chunk holds.
  Bytes tiny_blocks = encoded;
  StoreLittleEndian32(tiny_blocks, 8, 1);
  ExpectFormatError(*codec, tiny_blocks, raw.size(), "offset table exceeds");
}

TEST(Lz4HostileInput, SizeHeaderDifferentFromChunkSize) {
  const std::unique_ptr<Codec> codec = MakeCodec(Lz4(1));
  const Bytes raw = CompressibleBytes(5000, 8);
  const Bytes encoded = Encode(codec->config(), raw);
  ExpectFormatError(*codec, encoded, 4999, "claims 5000 decoded bytes, expected 4999");
  ExpectFormatError(*codec, encoded, 5001, "claims 5000 decoded bytes, expected 5001");
  for (std::uint32_t claimed : {4999u, 5001u, 0u, 0xFFFFFFFFu}) {
    Bytes lying = encoded;
    StoreLittleEndian32(lying, 0, claimed);
    // The header now matches the chunk size, but the block does not.
    if (claimed <= 5001u) ExpectFormatError(*codec, lying, claimed);
    ExpectFormatError(*codec, lying, raw.size(), "claims");
  }
}

// A zstd frame that does not record its decoded size (as streaming writers produce).
Bytes ZstdFrameWithoutContentSize(const Bytes& raw) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0);
  Bytes frame(ZSTD_compressBound(raw.size()));
  ZSTD_inBuffer input{raw.data(), raw.size(), 0};
  ZSTD_outBuffer output{frame.data(), frame.size(), 0};
  const std::size_t remaining = ZSTD_compressStream2(context, &output, &input, ZSTD_e_end);
  ZSTD_freeCCtx(context);
  EXPECT_EQ(remaining, 0u);
  frame.resize(output.pos);
  EXPECT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  return frame;
}

TEST(ZstdHostileInput, ContentSizeDifferentFromChunkSize) {
  const std::unique_ptr<Codec> codec = MakeCodec(Leveled("zstd", 1));
  const Bytes raw = CompressibleBytes(6000, 8);
  const Bytes encoded = Encode(codec->config(), raw);
  ExpectFormatError(*codec, encoded, 5999, "claims 6000 decoded bytes, expected 5999");
  ExpectFormatError(*codec, encoded, 6001, "claims 6000 decoded bytes, expected 6001");
}

TEST(ZstdHostileInput, FrameWithoutContentSizeMustFillTheChunkExactly) {
  const std::unique_ptr<Codec> codec = MakeCodec(Leveled("zstd", 1));
  const Bytes raw = CompressibleBytes(50'000, 8);
  const Bytes frame = ZstdFrameWithoutContentSize(raw);
  EXPECT_TRUE(Decode(*codec, frame, raw.size()) == raw);
  ExpectFormatError(*codec, frame, raw.size() - 1, "more than");
  ExpectFormatError(*codec, frame, raw.size() + 1, "decodes to 50000 bytes");
  const Bytes truncated(frame.begin(), frame.end() - 1);
  EXPECT_THROW(Decode(*codec, truncated, raw.size()), FormatError);
}

TEST(ZstdHostileInput, TrailingBytesAreAFormatError) {
  const std::unique_ptr<Codec> codec = MakeCodec(Leveled("zstd", 3));
  const Bytes raw = CompressibleBytes(6000, 8);
  Bytes encoded = Encode(codec->config(), raw);
  encoded.push_back(std::byte{0x42});
  EXPECT_THROW(Decode(*codec, encoded, raw.size()), FormatError);
}

TEST(ZlibHostileInput, TrailingBytesAndSecondGzipMemberAreFormatErrors) {
  const Bytes raw = CompressibleBytes(6000, 8);
  for (const char* id : {"zlib", "gzip"}) {
    const std::unique_ptr<Codec> codec = MakeCodec(Leveled(id, 6));
    const Bytes encoded = Encode(codec->config(), raw);
    Bytes trailing = encoded;
    trailing.push_back(std::byte{0});
    ExpectFormatError(*codec, trailing, raw.size(), "trailing bytes");
    Bytes twice = encoded;
    twice.insert(twice.end(), encoded.begin(), encoded.end());
    ExpectFormatError(*codec, twice, raw.size(), "trailing bytes");
    ExpectFormatError(*codec, twice, 2 * raw.size());
  }
}

TEST(ZlibHostileInput, ContainersAreNotInterchangeable) {
  const Bytes raw = CompressibleBytes(6000, 8);
  const std::unique_ptr<Codec> zlib = MakeCodec(Leveled("zlib", 6));
  const std::unique_ptr<Codec> gzip = MakeCodec(Leveled("gzip", 6));
  EXPECT_THROW(Decode(*zlib, Encode(gzip->config(), raw), raw.size()), FormatError);
  EXPECT_THROW(Decode(*gzip, Encode(zlib->config(), raw), raw.size()), FormatError);
}

// ---- 4. Registry --------------------------------------------------------------------------

// ---- DecodedSize and DecodeUpTo (the stages of a multi-stage pipeline) -------------------

TEST(CodecDecodedSize, IsTheFramesDeclaredSizeWhereTheFormatRecordsIt) {
  std::mt19937_64 rng(testing::TestSeed() + 40);
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    for (const Bytes& raw : {CompressibleBytes(20'000, 8), RandomBytes(777, rng), Bytes{}}) {
      SCOPED_TRACE(DescribeCodec(config) + ", " + std::to_string(raw.size()) + " bytes");
      const Bytes encoded = Encode(config, raw);
      const std::optional<std::int64_t> size = codec->DecodedSize(encoded);
      if (config.id == "zlib") {
        EXPECT_EQ(size, std::nullopt);  // the zlib format does not record it
      } else {
        EXPECT_EQ(size, static_cast<std::int64_t>(raw.size()));
      }
    }
  }
}

TEST(CodecDecodedSize, IsNulloptForFramesTooShortToDeclareIt) {
  const Bytes raw = CompressibleBytes(5000, 8);
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    const Bytes encoded = Encode(config, raw);
    for (std::size_t keep : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
      const Bytes truncated(encoded.begin(), encoded.begin() + static_cast<std::ptrdiff_t>(keep));
      EXPECT_EQ(codec->DecodedSize(truncated), std::nullopt)
          << DescribeCodec(config) << ", first " << keep << " bytes";
    }
  }
  // blosc: shorter than its 16-byte header.
  const Bytes blosc = Encode(Blosc("lz4", 5, 1), raw);
  EXPECT_EQ(MakeCodec(Blosc("lz4", 5, 1))->DecodedSize(Bytes(blosc.begin(), blosc.begin() + 15)),
            std::nullopt);
  // zstd: a frame that does not record its content size.
  EXPECT_EQ(MakeCodec(Leveled("zstd", 1))->DecodedSize(ZstdFrameWithoutContentSize(raw)),
            std::nullopt);
  // gzip: no gzip magic.
  EXPECT_EQ(MakeCodec(Leveled("gzip", 1))->DecodedSize(Bytes(64, std::byte{0})), std::nullopt);
}

TEST(CodecDecodedSize, IsAClaimThatDecodeStillChecks) {
  const Bytes raw = CompressibleBytes(6000, 8);
  // lz4: the size header.
  Bytes lz4 = Encode(Lz4(1), raw);
  StoreLittleEndian32(lz4, 0, 0xFFFF'FFF0u);
  const std::unique_ptr<Codec> lz4_codec = MakeCodec(Lz4(1));
  EXPECT_EQ(lz4_codec->DecodedSize(lz4), std::int64_t{0xFFFF'FFF0});
  // blosc: nbytes at byte 4.
  Bytes blosc = Encode(Blosc("lz4", 5, 1), raw);
  StoreLittleEndian32(blosc, 4, 6001);
  const std::unique_ptr<Codec> blosc_codec = MakeCodec(Blosc("lz4", 5, 1));
  EXPECT_EQ(blosc_codec->DecodedSize(blosc), 6001);
  ExpectFormatError(*blosc_codec, blosc, 6001);
  // gzip: the ISIZE trailer, the size modulo 2^32, is only a hint.
  Bytes gzip = Encode(Leveled("gzip", 1), raw);
  StoreLittleEndian32(gzip, gzip.size() - 4, 7);
  const std::unique_ptr<Codec> gzip_codec = MakeCodec(Leveled("gzip", 1));
  EXPECT_EQ(gzip_codec->DecodedSize(gzip), 7);
  ExpectFormatError(*gzip_codec, gzip, 7, "more than");
}

TEST(CodecDecodeUpTo, DecodesAnySizeWithinTheCapacity) {
  std::mt19937_64 rng(testing::TestSeed() + 41);
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    for (const Bytes& raw : {CompressibleBytes(20'000, 8), RandomBytes(777, rng), Bytes{}}) {
      SCOPED_TRACE(DescribeCodec(config) + ", " + std::to_string(raw.size()) + " bytes");
      const Bytes encoded = Encode(config, raw);
      for (std::size_t capacity : {raw.size(), raw.size() + 1, 2 * raw.size() + 100}) {
        Buffer out(static_cast<std::int64_t>(capacity));
        const std::int64_t size = codec->DecodeUpTo(encoded, out.span());
        ASSERT_EQ(size, static_cast<std::int64_t>(raw.size())) << "capacity " << capacity;
        EXPECT_TRUE(Bytes(out.data(), out.data() + size) == raw) << "capacity " << capacity;
      }
      if (raw.empty()) continue;
      Buffer small(static_cast<std::int64_t>(raw.size() - 1));
      EXPECT_THROW(codec->DecodeUpTo(encoded, small.span()), FormatError);
    }
  }
}

TEST(CodecDecodeUpTo, RefusesAClaimBeyondTheCapacityBeforeDecoding) {
  const Bytes raw = CompressibleBytes(6000, 8);
  Bytes lz4 = Encode(Lz4(1), raw);
  StoreLittleEndian32(lz4, 0, 0xFFFF'FFF0u);
  Buffer out(10'000);
  try {
    MakeCodec(Lz4(1))->DecodeUpTo(lz4, out.span());
    ADD_FAILURE() << "expected a FormatError";
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("claims 4294967280 decoded bytes, more than"),
              std::string::npos)
        << error.what();
  }
  // Every codec refuses garbage and truncated frames.
  std::mt19937_64 rng(12345);
  for (const CodecConfig& config : AllConfigs()) {
    const std::unique_ptr<Codec> codec = MakeCodec(config);
    const Bytes encoded = Encode(config, raw);
    for (const Bytes& bad :
         {Bytes{}, RandomBytes(64, rng), Bytes(encoded.begin(), encoded.begin() + 10)}) {
      EXPECT_THROW(codec->DecodeUpTo(bad, out.span()), FormatError) << DescribeCodec(config);
    }
  }
  // zlib records no size: a stream longer than the capacity stops at it.
  const Bytes zeros(1 << 20, std::byte{0});
  for (const char* id : {"zlib", "gzip"}) {
    const Bytes encoded = Encode(Leveled(id, 9), zeros);
    try {
      MakeCodec(Leveled(id, 9))->DecodeUpTo(encoded, out.span());
      ADD_FAILURE() << id << ": expected a FormatError";
    } catch (const FormatError& error) {
      EXPECT_NE(std::string(error.what()).find("decodes to more than 10000 bytes"),
                std::string::npos)
          << error.what();
    }
  }
}

TEST(MakeCodec, RejectsBadConfigsWithInvalidArgument) {
  CodecConfig unknown;
  unknown.id = "snappy";
  CodecConfig empty;
  const std::vector<CodecConfig> bad = {
      unknown,
      empty,
      Blosc("snappy", 5, 1),
      Blosc("LZ4", 5, 1),
      Blosc("lz4", 10, 1),
      Blosc("lz4", -1, 1),
      Blosc("lz4", 5, 3),
      Blosc("lz4", 5, -2),
      Blosc("lz4", 5, 1, -1),
      Leveled("zstd", 23),
      Leveled("zstd", -1'000'000),
      Leveled("zlib", 10),
      Leveled("zlib", -2),
      Leveled("gzip", 10),
      Lz4(0),
      Lz4(-3),
      Lz4(70'000),
  };
  for (const CodecConfig& config : bad) {
    EXPECT_THROW(MakeCodec(config), InvalidArgument) << DescribeCodec(config);
  }
  try {
    MakeCodec(unknown);
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("blosc, zstd, lz4, zlib, gzip"), std::string::npos)
        << error.what();
  }
  try {
    MakeCodec(Blosc("snappy", 5, 1));
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("lz4, lz4hc, zstd, blosclz, zlib"), std::string::npos)
        << error.what();
  }
}

TEST(ParseCodecSpec, AcceptsTheDocumentedForms) {
  const std::vector<std::pair<std::string, CodecConfig>> cases = {
      {"blosc", Blosc("lz4", 5, 1)},
      {"blosc:lz4", Blosc("lz4", 5, 1)},
      {"blosc:lz4hc:9", Blosc("lz4hc", 9, 1)},
      {"blosc:zstd:3:bitshuffle", Blosc("zstd", 3, 2)},
      {"blosc:blosclz:1:noshuffle", Blosc("blosclz", 1, 0)},
      {"blosc:zlib:4:2", Blosc("zlib", 4, 2)},
      {"blosc:lz4:5:autoshuffle", Blosc("lz4", 5, -1)},
      {"blosc-lz4", Blosc("lz4", 5, 1)},
      {"blosc-zstd:7:noshuffle", Blosc("zstd", 7, 0)},
      {"BLOSC:LZ4:5:Shuffle", Blosc("lz4", 5, 1)},
      {"zstd", Leveled("zstd", 1)},
      {"zstd:3", Leveled("zstd", 3)},
      {"zstd:-5", Leveled("zstd", -5)},
      {"lz4", Lz4(1)},
      {"lz4:8", Lz4(8)},
      {"zlib", Leveled("zlib", 1)},
      {"zlib:6", Leveled("zlib", 6)},
      {"gzip", Leveled("gzip", 1)},
      {"gzip:5", Leveled("gzip", 5)},
  };
  for (const auto& [spec, expected] : cases) {
    EXPECT_EQ(ParseCodecSpec(spec), expected)
        << spec << " -> " << DescribeCodec(ParseCodecSpec(spec));
  }
}

TEST(ParseCodecSpec, RejectsBadSpecsWithTheAcceptedForms) {
  for (const char* spec : {"",
                           "none",
                           "foo",
                           ":",
                           "blosc:",
                           "blosc-",
                           "blosc::5",
                           "blosc:snappy",
                           "blosc:lz4:x",
                           "blosc:lz4:10",
                           "blosc:lz4:5:wiggle",
                           "blosc:lz4:5:shuffle:9",
                           "blosc:lz4:5x",
                           "zstd:99",
                           "zstd:3:4",
                           "zstd:",
                           "lz4:0",
                           "lz4:1:2",
                           "zlib:10",
                           "gzip:x",
                           "gzip:-2"}) {
    try {
      ParseCodecSpec(spec);
      ADD_FAILURE() << "'" << spec << "' was accepted";
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find("Accepted forms"), std::string::npos)
          << error.what();
    }
  }
}

TEST(DescribeCodec, NamesEveryField) {
  EXPECT_EQ(DescribeCodec(Blosc("lz4", 5, 1)), "blosc(lz4, level 5, shuffle)");
  EXPECT_EQ(DescribeCodec(Blosc("zstd", 3, 2)), "blosc(zstd, level 3, bitshuffle)");
  EXPECT_EQ(DescribeCodec(Blosc("zlib", 1, 0, 65536)),
            "blosc(zlib, level 1, noshuffle, blocksize 65536)");
  EXPECT_EQ(DescribeCodec(Blosc("lz4", 5, -1)), "blosc(lz4, level 5, autoshuffle)");
  EXPECT_EQ(DescribeCodec(Leveled("zstd", 3)), "zstd(level 3)");
  EXPECT_EQ(DescribeCodec(Lz4(1)), "lz4(acceleration 1)");
  EXPECT_EQ(DescribeCodec(Leveled("zlib", 6)), "zlib(level 6)");
  EXPECT_EQ(DescribeCodec(Leveled("gzip", 5)), "gzip(level 5)");
  EXPECT_EQ(DescribeCodec(ParseCodecSpec("blosc-lz4")), "blosc(lz4, level 5, shuffle)");
}

// ---- 5. Concurrency -----------------------------------------------------------------------

TEST(CodecConcurrency, SharedCodecsEncodeAndDecodeInParallel) {
  std::vector<std::unique_ptr<Codec>> codecs;
  for (const CodecConfig& config : AllConfigs()) codecs.push_back(MakeCodec(config));
  const std::uint64_t seed = testing::TestSeed();
  constexpr int kThreads = 8;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int thread_index = 0; thread_index < kThreads; ++thread_index) {
    threads.emplace_back([&, thread_index] {
      std::mt19937_64 rng(seed + static_cast<std::uint64_t>(thread_index));
      for (int round = 0; round < 3; ++round) {
        for (const std::unique_ptr<Codec>& codec : codecs) {
          const std::size_t itemsize = std::size_t{1} << (rng() % 4);
          Bytes raw = CompressibleBytes(itemsize * (2000 + rng() % 3000), itemsize);
          raw[rng() % raw.size()] = std::byte{static_cast<unsigned char>(thread_index)};
          try {
            const Buffer encoded = codec->Encode(raw, static_cast<std::int64_t>(itemsize));
            if (Decode(*codec, encoded.span(), raw.size()) != raw) failures.fetch_add(1);
          } catch (const std::exception&) {
            failures.fetch_add(1);
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace tessera
