// The blosc decoder of LZ4, byte-shuffled frames against libblosc itself: every frame
// libblosc writes for 4- and 8-byte items (levels, block sizes, chunk sizes with and
// without a partial last block, data that compresses or not) decodes to the same bytes
// through BloscCodec::Decode, and the vectorised unshuffle equals the scalar one.
#include "blosc_shuffled_lz4.hpp"

#include <blosc.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/storage/codec.hpp"
#include "test_seed.hpp"

namespace tessera::codecs {
namespace {

std::vector<std::byte> RandomBytes(std::size_t size, std::mt19937_64& rng) {
  std::vector<std::byte> bytes(size);
  for (std::byte& b : bytes) b = static_cast<std::byte>(rng() & 0xff);
  return bytes;
}

TEST(UnshuffleBlock, VectorisedEqualsScalarForEveryItemsizeAndSize) {
  std::mt19937_64 rng(testing::TestSeed());
  for (std::size_t itemsize = 1; itemsize <= 16; ++itemsize) {
    for (std::size_t size :
         {0UL, 1UL, 7UL, 31UL, 255UL, 256UL, 257UL, 1000UL, 4099UL, 65536UL, 65541UL}) {
      const std::vector<std::byte> shuffled = RandomBytes(size, rng);
      std::vector<std::byte> fast(size);
      std::vector<std::byte> scalar(size);
      UnshuffleBlock(shuffled.data(), size, itemsize, fast.data());
      UnshuffleBlockScalar(shuffled.data(), size, itemsize, scalar.data());
      EXPECT_EQ(fast, scalar) << "itemsize " << itemsize << ", size " << size;
    }
  }
  // The scalar reference is the byte shuffle's inverse: item i's byte j is stream j's i.
  const std::vector<std::byte> shuffled = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4},
                                           std::byte{5}, std::byte{6}, std::byte{7}};
  std::vector<std::byte> out(7);
  UnshuffleBlockScalar(shuffled.data(), 7, 2, out.data());
  EXPECT_EQ(out, (std::vector<std::byte>{std::byte{1}, std::byte{4}, std::byte{2}, std::byte{5},
                                         std::byte{3}, std::byte{6}, std::byte{7}}));
}

// Values whose bytes compress well (a slow ramp) or not at all (random).
std::vector<std::byte> Values(std::size_t size, std::size_t itemsize, bool random,
                              std::mt19937_64& rng) {
  if (random) return RandomBytes(size, rng);
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<std::byte>(i % itemsize == 0 ? (i / itemsize / 97) & 0xff : i % 3);
  }
  return bytes;
}

TEST(DecodeShuffledLz4Frame, DecodesEveryFrameLibbloscWritesAsLibbloscDoes) {
  std::mt19937_64 rng(testing::TestSeed());
  int handled = 0;
  for (std::size_t itemsize : {4UL, 8UL}) {
    for (int level : {0, 1, 5, 9}) {
      for (int blocksize : {0, 1 << 12, 1 << 16}) {
        CodecConfig config;
        config.id = "blosc";
        config.cname = "lz4";
        config.level = level;
        config.shuffle = 1;
        config.blocksize = blocksize;
        const std::unique_ptr<Codec> codec = MakeCodec(config);
        // Tiny (one block, not split), a partial last block, and several whole blocks.
        for (std::size_t items : {3UL, 100UL, 40'001UL, 262'144UL, 300'007UL}) {
          for (bool random : {false, true}) {
            SCOPED_TRACE(std::to_string(itemsize) + "-byte items, level " + std::to_string(level) +
                         ", blocksize " + std::to_string(blocksize) + ", " + std::to_string(items) +
                         (random ? " random" : " ramp"));
            const std::vector<std::byte> raw = Values(items * itemsize, itemsize, random, rng);
            const Buffer frame = codec->Encode(raw, static_cast<std::int64_t>(itemsize));
            std::vector<std::byte> by_libblosc(raw.size());
            ASSERT_EQ(blosc_decompress_ctx(frame.data(), by_libblosc.data(), by_libblosc.size(), 1),
                      static_cast<int>(raw.size()));
            ASSERT_EQ(by_libblosc, raw);
            std::vector<std::byte> direct(raw.size());
            if (DecodeShuffledLz4Frame(frame.span(), direct)) {
              ++handled;
              EXPECT_EQ(direct, raw);
            }
            std::vector<std::byte> decoded(raw.size());
            codec->Decode(frame.span(), decoded);
            EXPECT_EQ(decoded, raw);
          }
        }
      }
    }
  }
  if (__builtin_cpu_supports("avx2")) {
    EXPECT_GT(handled, 50);  // level 0 and random data are stored uncompressed
  }
}

TEST(DecodeShuffledLz4Frame, LeavesOtherFramesToLibblosc) {
  std::mt19937_64 rng(testing::TestSeed());
  const std::vector<std::byte> raw = Values(80'000, 8, false, rng);
  for (const auto& [cname, shuffle, itemsize] :
       {std::tuple{"zstd", 1, 8}, std::tuple{"lz4", 2, 8}, std::tuple{"lz4", 0, 8},
        std::tuple{"lz4", 1, 2}, std::tuple{"blosclz", 1, 4}}) {
    CodecConfig config;
    config.id = "blosc";
    config.cname = cname;
    config.level = 5;
    config.shuffle = shuffle;
    const Buffer frame = MakeCodec(config)->Encode(raw, itemsize);
    std::vector<std::byte> out(raw.size(), std::byte{0x5a});
    EXPECT_FALSE(DecodeShuffledLz4Frame(frame.span(), out)) << cname << " shuffle " << shuffle;
    EXPECT_EQ(out, std::vector<std::byte>(raw.size(), std::byte{0x5a}));  // nothing written
  }
}

TEST(DecodeShuffledLz4Frame, CorruptStreamsAreFormatErrorsNeverWritesOutside) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "the decoder needs AVX2";
  std::mt19937_64 rng(testing::TestSeed());
  CodecConfig config;
  config.id = "blosc";
  config.cname = "lz4";
  config.level = 5;
  config.shuffle = 1;
  const std::vector<std::byte> raw = Values(200'000, 8, false, rng);
  const Buffer frame = MakeCodec(config)->Encode(raw, 8);
  const std::size_t data_start = 16;  // offsets and streams; the header stays valid
  int errors = 0;
  for (std::size_t position = data_start; position < frame.span().size();
       position += 1 + frame.span().size() / 200) {
    std::vector<std::byte> corrupt(frame.span().begin(), frame.span().end());
    corrupt[position] ^= std::byte{0xff};
    std::vector<std::byte> out(raw.size());
    try {
      ASSERT_TRUE(DecodeShuffledLz4Frame(corrupt, out));
    } catch (const FormatError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
  // A stream size past the end.
  std::vector<std::byte> truncated(frame.span().begin(), frame.span().begin() + 40);
  std::vector<std::byte> out(raw.size());
  EXPECT_THROW(DecodeShuffledLz4Frame(truncated, out), FormatError);
}

}  // namespace
}  // namespace tessera::codecs
