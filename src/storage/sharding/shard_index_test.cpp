// ShardIndex and ShardBuilder: the shard container of Zarr v3's sharding_indexed codec.
// The byte layout is checked against shards written out by hand (the index as the spec
// lays it out, its CRC-32C computed here bit by bit), round trips run over every index
// layout, and every corrupt index is refused with a FormatError naming the shard.
#include "tessera/storage/shard_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/memory_store.hpp"
#include "test_seed.hpp"

namespace tessera {
namespace {

using Bytes = std::vector<std::byte>;
constexpr std::uint64_t kEmpty = ShardEntry::kEmpty;

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one bit at a time: the
// reference the index's checksum is compared with.
std::uint32_t ReferenceCrc32c(std::span<const std::byte> bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (const std::byte byte : bytes) {
    crc ^= std::to_integer<std::uint32_t>(byte);
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1u) != 0 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

Bytes BytesOf(std::string_view text) {
  Bytes bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

void AppendUint64(Bytes& out, std::uint64_t value, bool big_endian) {
  for (int byte = 0; byte < 8; ++byte) {
    const int shift = big_endian ? 8 * (7 - byte) : 8 * byte;
    out.push_back(static_cast<std::byte>((value >> shift) & 0xFFu));
  }
}

void AppendUint32Le(Bytes& out, std::uint32_t value) {
  for (int byte = 0; byte < 4; ++byte)
    out.push_back(static_cast<std::byte>((value >> (8 * byte)) & 0xFFu));
}

// An index as the spec lays it out: (offset, nbytes) pairs, then the CRC-32C of the pairs
// (little-endian) when `checksum`.
Bytes EncodeIndex(const std::vector<ShardEntry>& entries, bool big_endian, bool checksum) {
  Bytes index;
  for (const ShardEntry& entry : entries) {
    AppendUint64(index, entry.offset, big_endian);
    AppendUint64(index, entry.nbytes, big_endian);
  }
  if (checksum) AppendUint32Le(index, ReferenceCrc32c(index));
  return index;
}

Bytes Concat(const Bytes& a, const Bytes& b) {
  Bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// The index bytes of a whole shard.
std::span<const std::byte> IndexPart(std::span<const std::byte> shard,
                                     const ShardIndexLayout& layout) {
  const auto index_bytes = static_cast<std::size_t>(layout.IndexBytes());
  return layout.at_end ? shard.last(index_bytes) : shard.first(index_bytes);
}

Bytes Finished(ShardBuilder& builder) {
  const std::span<const std::byte> shard = builder.Finish();
  return Bytes(shard.begin(), shard.end());
}

// Runs `call`, which must throw FormatError whose message contains every one of `parts`.
template <typename Call>
void ExpectFormatError(Call&& call, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "expected a FormatError";
  } catch (const FormatError& error) {
    const std::string message = error.what();
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos)
          << "message \"" << message << "\" lacks \"" << part << "\"";
    }
  }
}

TEST(ReferenceCrc32c, MatchesTheStandardCheckValueAndTheLibrary) {
  // The CRC-32C check value of "123456789" (RFC 3720, appendix B.4).
  EXPECT_EQ(ReferenceCrc32c(BytesOf("123456789")), 0xE3069283u);
  const Bytes text = BytesOf("Tessera shards their inner chunks");
  EXPECT_EQ(ReferenceCrc32c(text), Crc32cOf(text));
}

TEST(ShardIndexLayout, IndexBytesAre16PerEntryPlusTheChecksum) {
  EXPECT_EQ((ShardIndexLayout{.entries = 5, .checksum = true}).IndexBytes(), 84);
  EXPECT_EQ((ShardIndexLayout{.entries = 5, .checksum = false}).IndexBytes(), 80);
  EXPECT_EQ((ShardIndexLayout{.entries = 0, .checksum = true}).IndexBytes(), 4);
  EXPECT_EQ(ShardBuilder::ShardBytes(ShardIndexLayout{.entries = 3, .checksum = true}, 100), 152);
}

// ---- byte layout, by hand ---------------------------------------------------------------

TEST(ShardBuilder, TwoEntriesIndexAtEndLittleEndianWithCrcByHand) {
  const ShardIndexLayout layout{
      .entries = 2, .big_endian = false, .checksum = true, .at_end = true};
  ShardBuilder builder;
  builder.Start(layout, 0);
  EXPECT_TRUE(builder.empty());
  // Entry 1 first, then entry 0: the data lies in the order added.
  builder.Add(1, BytesOf("XYZ"));
  EXPECT_FALSE(builder.empty());
  builder.Add(0, BytesOf("hello"));
  // [X Y Z h e l l o] then entry 0 = (3, 5), entry 1 = (0, 3), then the crc32c.
  Bytes expected = BytesOf("XYZhello");
  Bytes pairs;
  for (const int value : {3, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0,     // entry 0
                          0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}) {  // entry 1
    pairs.push_back(static_cast<std::byte>(value));
  }
  expected = Concat(expected, pairs);
  AppendUint32Le(expected, ReferenceCrc32c(pairs));
  EXPECT_EQ(Finished(builder), expected);
  EXPECT_EQ(expected.size(), 8u + 32u + 4u);
}

TEST(ShardBuilder, TwoEntriesIndexAtStartBigEndianNoCrcByHand) {
  const ShardIndexLayout layout{
      .entries = 2, .big_endian = true, .checksum = false, .at_end = false};
  ShardBuilder builder(layout);
  builder.Add(0, BytesOf("ab"));
  // Entry 1 stays empty: 2^64 - 1 twice. Offsets count the 32-byte index before the data.
  Bytes expected;
  for (const int value : {0, 0, 0, 0, 0, 0, 0, 32, 0, 0, 0, 0, 0, 0, 0, 2}) {
    expected.push_back(static_cast<std::byte>(value));
  }
  for (int byte = 0; byte < 16; ++byte) expected.push_back(std::byte{0xFF});
  expected = Concat(expected, BytesOf("ab"));
  EXPECT_EQ(Finished(builder), expected);
}

TEST(ShardBuilder, ThreeEntriesMatchTheSpecLayoutInEveryLayout) {
  for (const bool at_end : {true, false}) {
    for (const bool big_endian : {false, true}) {
      for (const bool checksum : {false, true}) {
        SCOPED_TRACE("at_end " + std::to_string(at_end) + " big_endian " +
                     std::to_string(big_endian) + " checksum " + std::to_string(checksum));
        const ShardIndexLayout layout{
            .entries = 3, .big_endian = big_endian, .checksum = checksum, .at_end = at_end};
        ShardBuilder builder;
        builder.Start(layout, 4);
        builder.Add(2, BytesOf("two"));
        builder.Add(0, BytesOf("zero!"));
        const std::uint64_t base = at_end ? 0 : static_cast<std::uint64_t>(layout.IndexBytes());
        const Bytes index =
            EncodeIndex({{base + 3, 5}, {kEmpty, kEmpty}, {base, 3}}, big_endian, checksum);
        const Bytes data = BytesOf("twozero!");
        EXPECT_EQ(Finished(builder), at_end ? Concat(data, index) : Concat(index, data));
      }
    }
  }
}

TEST(ShardBuilder, NothingAddedGivesAnIndexOfEmptyEntries) {
  const ShardIndexLayout layout{.entries = 2, .checksum = true};
  ShardBuilder builder(layout);
  EXPECT_TRUE(builder.empty());
  EXPECT_EQ(Finished(builder), EncodeIndex({{kEmpty, kEmpty}, {kEmpty, kEmpty}}, false, true));
}

TEST(ShardBuilder, StartForgetsThePreviousShard) {
  ShardBuilder builder;
  const ShardIndexLayout first{.entries = 4, .checksum = true, .at_end = false};
  builder.Start(first, 0);
  builder.Add(3, Bytes(5000, std::byte{7}));  // grows past what Start reserved
  builder.Add(1, BytesOf("one"));
  const Bytes first_shard = Finished(builder);
  EXPECT_EQ(first_shard.size(), 5003u + 68u);
  const ShardIndexLayout second{.entries = 2, .checksum = false, .at_end = true};
  builder.Start(second, 0);
  EXPECT_TRUE(builder.empty());
  builder.Add(1, BytesOf("q"));
  EXPECT_EQ(Finished(builder),
            Concat(BytesOf("q"), EncodeIndex({{kEmpty, kEmpty}, {0, 1}}, false, false)));
}

// ---- round trips --------------------------------------------------------------------------

struct LayoutCase {
  bool at_end;
  bool big_endian;
  bool checksum;
};

class ShardRoundTrip : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(ShardRoundTrip, DecodeReadAndReadEntryGiveBackWhatWasAdded) {
  const LayoutCase param = GetParam();
  std::mt19937_64 rng(testing::TestSeed());
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  ShardBuilder builder;  // reused across trials, as a thread's scratch is
  for (int trial = 0; trial < 40; ++trial) {
    const ShardIndexLayout layout{.entries = static_cast<std::int64_t>(rng() % 20),
                                  .big_endian = param.big_endian,
                                  .checksum = param.checksum,
                                  .at_end = param.at_end};
    // Some entries get bytes (zero-length ones included), in a random order; the rest
    // stay empty.
    std::vector<std::int64_t> order(static_cast<std::size_t>(layout.entries));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(order.size() * (rng() % 4) / 3);  // none, a third, two thirds or all
    std::map<std::int64_t, Bytes> added;
    builder.Start(layout, static_cast<std::int64_t>(rng() % 300));
    for (const std::int64_t entry : order) {
      Bytes bytes(rng() % 200);
      for (std::byte& byte : bytes) byte = static_cast<std::byte>(rng() & 0xFF);
      builder.Add(entry, bytes);
      added[entry] = bytes;
    }
    EXPECT_EQ(builder.empty(), added.empty());
    const Bytes shard = Finished(builder);
    std::size_t data_bytes = 0;
    for (const auto& [entry, bytes] : added) data_bytes += bytes.size();
    ASSERT_EQ(shard.size(), data_bytes + static_cast<std::size_t>(layout.IndexBytes()));

    const auto shard_size = static_cast<std::int64_t>(shard.size());
    const ShardIndex decoded =
        ShardIndex::Decode(IndexPart(shard, layout), layout, shard_size, "s");
    ASSERT_EQ(decoded.size(), layout.entries);
    EXPECT_EQ(decoded.shard_size(), shard_size);
    for (std::int64_t entry = 0; entry < layout.entries; ++entry) {
      const auto found = added.find(entry);
      const ShardEntry& slot = decoded.entry(entry);
      if (found == added.end()) {
        EXPECT_TRUE(slot.empty()) << "entry " << entry;
        continue;
      }
      ASSERT_FALSE(slot.empty()) << "entry " << entry;
      ASSERT_EQ(slot.nbytes, found->second.size());
      ASSERT_LE(slot.offset + slot.nbytes, shard.size());
      EXPECT_TRUE(std::equal(found->second.begin(), found->second.end(),
                             shard.begin() + static_cast<std::ptrdiff_t>(slot.offset)))
          << "entry " << entry;
    }

    // Through a store: the whole value, and the same shard nested at an offset inside a
    // larger value.
    store->Set("shard", shard);
    const Bytes prefix(static_cast<std::size_t>(rng() % 50), std::byte{0xAB});
    const Bytes outer = Concat(Concat(prefix, shard), Bytes(rng() % 50, std::byte{0xCD}));
    store->Set("outer", outer);
    const std::optional<ShardIndex> whole = ShardIndex::Read(*store, "shard", layout);
    const ShardRange range{static_cast<std::int64_t>(prefix.size()), shard_size};
    const std::optional<ShardIndex> nested = ShardIndex::Read(*store, "outer", layout, range);
    ASSERT_TRUE(whole.has_value());
    ASSERT_TRUE(nested.has_value());
    EXPECT_EQ(whole->shard_offset(), 0);
    EXPECT_EQ(nested->shard_offset(), range.offset);
    EXPECT_EQ(nested->shard_size(), shard_size);
    for (const auto& [entry, bytes] : added) {
      Buffer out;
      whole->ReadEntry(*store, "shard", entry, out);
      EXPECT_TRUE(std::ranges::equal(out.span(), bytes)) << "entry " << entry;
      nested->ReadEntry(*store, "outer", entry, out);
      EXPECT_TRUE(std::ranges::equal(out.span(), bytes)) << "nested entry " << entry;
      const ShardRange entry_range = nested->EntryRange(entry);
      EXPECT_EQ(entry_range.offset,
                range.offset + static_cast<std::int64_t>(decoded.entry(entry).offset));
      EXPECT_EQ(entry_range.size, static_cast<std::int64_t>(bytes.size()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryLayout, ShardRoundTrip,
    ::testing::Values(LayoutCase{true, false, true}, LayoutCase{true, false, false},
                      LayoutCase{true, true, true}, LayoutCase{true, true, false},
                      LayoutCase{false, false, true}, LayoutCase{false, false, false},
                      LayoutCase{false, true, true}, LayoutCase{false, true, false}),
    [](const ::testing::TestParamInfo<LayoutCase>& layout_case) {
      return std::string(layout_case.param.at_end ? "End" : "Start") +
             (layout_case.param.big_endian ? "Big" : "Little") +
             (layout_case.param.checksum ? "Crc" : "NoCrc");
    });

TEST(ShardIndexRead, AnAbsentShardIsNullopt) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  EXPECT_FALSE(ShardIndex::Read(*store, "c/0/0", ShardIndexLayout{.entries = 4}).has_value());
}

// ---- corrupt indexes ------------------------------------------------------------------------

// A valid shard of 2 entries ("abcd" then "efgh"), index at the end with a crc32c.
constexpr ShardIndexLayout kTwoEntries{
    .entries = 2, .big_endian = false, .checksum = true, .at_end = true};

Bytes ShardWithIndex(const std::vector<ShardEntry>& entries, const ShardIndexLayout& layout,
                     const Bytes& data) {
  const Bytes index = EncodeIndex(entries, layout.big_endian, layout.checksum);
  return layout.at_end ? Concat(data, index) : Concat(index, data);
}

TEST(ShardIndexDecode, RefusesATruncatedShard) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  const Bytes shard = ShardWithIndex({{0, 4}, {4, 4}}, kTwoEntries, BytesOf("abcdefgh"));
  store->Set("c/1", std::span(shard).first(20));  // shorter than the 36-byte index
  ExpectFormatError([&] { ShardIndex::Read(*store, "c/1", kTwoEntries); },
                    {"memory store/c/1", "truncated", "20 bytes", "36"});
  // A nested shard whose range is shorter than its index.
  store->Set("outer", shard);
  ExpectFormatError(
      [&] {
        ShardIndex::Read(*store, "outer", kTwoEntries, ShardRange{2, 30});
      },
      {"memory store/outer", "nested shard at bytes 2..32", "truncated"});
  // Index bytes of the wrong length handed to Decode.
  ExpectFormatError(
      [&] { ShardIndex::Decode(std::span(shard).first(30), kTwoEntries, 44, "where/c/1"); },
      {"where/c/1", "30 bytes", "expected 36"});
  // The data cut off: the index (read from the end) points past what is left.
  const Bytes cut = Concat(BytesOf("abcde"), EncodeIndex({{0, 4}, {4, 4}}, false, true));
  store->Set("c/2", cut);
  ExpectFormatError([&] { ShardIndex::Read(*store, "c/2", kTwoEntries); },
                    {"memory store/c/2", "entry 1", "outside"});
}

TEST(ShardIndexDecode, RefusesAShardShorterThanItsIndexGivenToDecode) {
  // Decode is public: a shard_size below the index's own size is no valid shard, whatever
  // the entries say.
  const Bytes index = EncodeIndex({{0, 4}, {4, 4}}, false, true);
  ExpectFormatError([&] { ShardIndex::Decode(index, kTwoEntries, 20, "where/c/0"); },
                    {"where/c/0"});
}

TEST(ShardIndexDecode, RefusesAChecksumMismatch) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  Bytes shard = ShardWithIndex({{0, 4}, {4, 4}}, kTwoEntries, BytesOf("abcdefgh"));
  shard[8 + 3] ^= std::byte{0x01};  // a bit of entry 0's offset
  store->Set("c/0/0", shard);
  ExpectFormatError([&] { ShardIndex::Read(*store, "c/0/0", kTwoEntries); },
                    {"memory store/c/0/0", "crc32c", "mismatch"});
  // The stored checksum itself damaged.
  shard[8 + 3] ^= std::byte{0x01};
  shard.back() ^= std::byte{0x80};
  ExpectFormatError(
      [&] { ShardIndex::Decode(IndexPart(shard, kTwoEntries), kTwoEntries, 44, "s/c/0/0"); },
      {"s/c/0/0", "crc32c"});
  // Without a checksum in the layout, the same index bytes are not checked.
  const ShardIndexLayout no_crc{.entries = 2, .checksum = false, .at_end = true};
  const Bytes plain = ShardWithIndex({{0, 4}, {4, 4}}, no_crc, BytesOf("abcdefgh"));
  EXPECT_NO_THROW(ShardIndex::Decode(IndexPart(plain, no_crc), no_crc, 40, "s"));
}

TEST(ShardIndexDecode, RefusesEntriesOutsideTheData) {
  const Bytes data = BytesOf("abcdefgh");
  struct Case {
    std::string what;
    ShardIndexLayout layout;
    std::vector<ShardEntry> entries;
    std::string entry_named;
  };
  constexpr ShardIndexLayout kStart{.entries = 2, .checksum = true, .at_end = false};
  const std::vector<Case> cases = {
      {"past the end of the data", kTwoEntries, {{0, 4}, {4, 5}}, "entry 1"},
      {"starting past the data", kTwoEntries, {{9, 0}, {0, 4}}, "entry 0"},
      {"into the index at the end", kTwoEntries, {{0, 4}, {6, 4}}, "entry 1"},
      {"offset wrapping around", kTwoEntries, {{0, 4}, {kEmpty - 1, 4}}, "entry 1"},
      {"empty offset with a size", kTwoEntries, {{kEmpty, 4}, {0, 4}}, "entry 0"},
      {"into the index at the start", kStart, {{30, 4}, {40, 4}}, "entry 0"},
      {"past the end, index at the start", kStart, {{36, 4}, {40, 5}}, "entry 1"},
  };
  for (const Case& test : cases) {
    SCOPED_TRACE(test.what);
    const Bytes shard = ShardWithIndex(test.entries, test.layout, data);
    const auto size = static_cast<std::int64_t>(shard.size());
    ExpectFormatError(
        [&] { ShardIndex::Decode(IndexPart(shard, test.layout), test.layout, size, "dir/c/3"); },
        {"dir/c/3", test.entry_named, "outside"});
  }
  // The edges themselves are fine: an entry ending exactly where the data ends, and an
  // empty entry (0 bytes) right at the end.
  const Bytes exact = ShardWithIndex({{4, 4}, {8, 0}}, kTwoEntries, data);
  EXPECT_NO_THROW(ShardIndex::Decode(IndexPart(exact, kTwoEntries), kTwoEntries, 44, "s"));
  const Bytes start = ShardWithIndex({{36, 4}, {40, 4}}, kStart, data);
  EXPECT_NO_THROW(ShardIndex::Decode(IndexPart(start, kStart), kStart, 44, "s"));
}

TEST(ShardIndexDecode, RefusesOverlappingEntries) {
  const ShardIndexLayout layout{.entries = 3, .checksum = true, .at_end = true};
  const Bytes data = BytesOf("abcdefghij");
  const auto size = static_cast<std::int64_t>(data.size() + 52);
  for (const auto& entries : std::vector<std::vector<ShardEntry>>{
           {{0, 4}, {3, 4}, {kEmpty, kEmpty}},  // entry 1 starts inside entry 0
           {{6, 4}, {kEmpty, kEmpty}, {0, 7}},  // listed out of order
           {{2, 2}, {0, 10}, {5, 1}},           // one inside another
           {{4, 3}, {4, 3}, {0, 1}}}) {         // the same bytes twice
    const Bytes shard = ShardWithIndex(entries, layout, data);
    ExpectFormatError([&] { ShardIndex::Decode(IndexPart(shard, layout), layout, size, "x/c/0"); },
                      {"x/c/0", "overlap"});
  }
  // Adjacent entries and zero-length entries at the same offset do not overlap.
  const Bytes adjacent = ShardWithIndex({{0, 4}, {4, 6}, {4, 0}}, layout, data);
  EXPECT_NO_THROW(ShardIndex::Decode(IndexPart(adjacent, layout), layout, size, "s"));
}

}  // namespace
}  // namespace tessera
